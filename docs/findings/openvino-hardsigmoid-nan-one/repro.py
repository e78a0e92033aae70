"""OpenVINO (CPU plugin): HardSigmoid turns NaN into 1 (alpha 0.2, beta 0.5, Keras' hard_sigmoid):
HardSigmoid([NaN, 1, -10]) gives [1, 0.7, 0]; ONNX Runtime gives NaN. memo met it as a Conv3D with
activation hard_sigmoid behind an injected NaN. Exits 1 while the fault shows. Needs openvino,
onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

graph = helper.make_graph([helper.make_node("HardSigmoid", ["x"], ["y"], alpha=0.2, beta=0.5)], "hardsigmoid",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)
core = ov.Core()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "hardsigmoid.onnx")
    onnx.save(model, path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    y = next(iter(compiled.create_infer_request().infer({"x": np.array([np.nan, 1, -10], np.float32)}).values())).ravel()
print("OpenVINO", ov.__version__)
print("HardSigmoid([NaN, 1, -10]) = %s, expected [nan, 0.7, 0.0]" % y.tolist())
sys.exit(0 if np.isnan(y[0]) and np.allclose(y[1:], [0.7, 0.0]) else 1)
