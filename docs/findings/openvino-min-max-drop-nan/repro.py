"""OpenVINO (CPU plugin): Min and Max drop a NaN in their first operand. Min([NaN, 1], [1, NaN])
gives [1, NaN], Max the same, as x86's minps/maxps do (they return the second operand when either
is NaN); ONNX Runtime gives NaN in both places. memo met it as a Keras Minimum layer whose first
input holds an injected NaN. Exits 1 while the fault shows. Needs openvino, onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

CORE = ov.Core()


def elementwise(op, a, b):
    """OpenVINO's ONNX `op` of two float32 vectors (f32 precision)."""
    n = len(a)
    graph = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], op.lower(),
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n]), helper.make_tensor_value_info("b", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        onnx.save(model, path)
        compiled = CORE.compile_model(CORE.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        feed = {"a": np.array(a, np.float32), "b": np.array(b, np.float32)}
        return next(iter(compiled.create_infer_request().infer(feed).values())).ravel()


print("OpenVINO", ov.__version__)
right = True
for op in ("Min", "Max"):
    y = elementwise(op, [np.nan, 1], [1, np.nan])
    print("%s([NaN, 1], [1, NaN]) = %s, expected [nan, nan]" % (op, y.tolist()))
    right = right and bool(np.isnan(y).all())
sys.exit(0 if right else 1)
