"""OpenVINO (CPU plugin): MaxPool over a window that holds only NaN returns -3.4028235e+38 (the
lowest float32) instead of NaN; a window of one value is enough ([NaN, -1, 2] through a 1x1 pool
with stride 2 gives [-3.4e38, 2]). ONNX Runtime and TVM give NaN. memo met it as a MaxPooling2D
with pool size 1 after an injected NaN. Exits 1 while the fault shows. Needs openvino, onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

graph = helper.make_graph([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, 1], strides=[2, 2])], "maxpool",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)
core = ov.Core()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "maxpool.onnx")
    onnx.save(model, path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    y = next(iter(compiled.create_infer_request().infer({"x": np.array([np.nan, -1, 2], np.float32).reshape(1, 1, 3, 1)}).values())).ravel()
print("OpenVINO", ov.__version__)
print("MaxPool 1x1, stride 2 over [NaN, -1, 2]: %s, expected [nan, 2.0]" % y.tolist())
sys.exit(0 if np.isnan(y[0]) and y[1] == 2 else 1)
