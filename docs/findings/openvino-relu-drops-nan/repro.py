"""OpenVINO (CPU plugin): Relu turns NaN into 0 (ONNX Relu, alone or fused into a Conv); ONNX
Runtime, PyTorch and TensorFlow keep NaN. memo met it as a Conv2D with activation relu after an
injected NaN. Exits 1 while the fault shows. Needs openvino, onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)
core = ov.Core()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "relu.onnx")
    onnx.save(model, path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    y = next(iter(compiled.create_infer_request().infer({"x": np.array([np.nan, -1, 2], np.float32)}).values())).ravel()
print("OpenVINO", ov.__version__)
print("Relu of [NaN, -1, 2]: %s, expected [nan, 0.0, 2.0]" % y.tolist())
sys.exit(0 if np.isnan(y[0]) else 1)
