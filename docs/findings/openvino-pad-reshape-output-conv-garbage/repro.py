"""OpenVINO (CPU plugin): a Pad whose output is both reshaped into a graph output and transposed
into a Conv gives the Conv garbage. x of shape (1, 1, 4, 1), zero-padded by 3 on its last axis to
(1, 1, 4, 7), goes to Reshape (1, 28) -> output f and to Transpose (0, 3, 1, 2) -> 1x1 Conv ->
output y: y comes out as values near 1e36, or NaN, or zeros (by the run), f is right. Without the
Reshape output, or with the Conv reading the Pad without the Transpose, y is right. memo met it as
a Keras model whose padded tensor feeds a Flatten output and a Conv2D (a 32-layer "inconsistency"
of the whole graph, whose layers run one by one agree), reduced by hand. Exits 1 while the fault
shows. Needs openvino, onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

x = np.array([0.5, -1.0, 2.0, 0.25], np.float32).reshape(1, 1, 4, 1)
w = np.array([1, 2, 3, 4, 5, 6, 7], np.float32).reshape(1, 7, 1, 1)  # only the 4th channel is x
graph = helper.make_graph(
    [helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
     helper.make_node("Reshape", ["p", "shape"], ["f"]),
     helper.make_node("Transpose", ["p"], ["t"], perm=[0, 3, 1, 2]),
     helper.make_node("Conv", ["t", "w"], ["y"], kernel_shape=[1, 1])],
    "pad_reshape_conv",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 4]), helper.make_tensor_value_info("f", TensorProto.FLOAT, [1, 28])],
    [numpy_helper.from_array(np.array([0, 0, 0, 3, 0, 0, 0, 3], np.int64), "pads"),
     numpy_helper.from_array(np.array([1, 28], np.int64), "shape"),
     numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)
core = ov.Core()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled.create_infer_request().infer({"x": x})
    y = np.array(result[compiled.output("y")]).ravel()
    f = np.array(result[compiled.output("f")]).ravel()
expected_y = 4 * x.ravel()
expected_f = np.pad(x, [(0, 0), (0, 0), (0, 0), (3, 3)]).ravel()
print("OpenVINO", ov.__version__)
print("y = %s, expected %s" % (y.tolist(), expected_y.tolist()))
print("f %s" % ("right" if np.array_equal(f, expected_f) else "wrong: %s" % f.tolist()))
sys.exit(0 if np.allclose(y, expected_y) and np.array_equal(f, expected_f) else 1)
