"""OpenVINO (ONNX frontend, CPU plugin): an ONNX Scan whose body adds its state to its scan input
as Add(x, h) (the scan input first) gives wrong values from the second step on: a running sum of
[1, 10, 100, 1000] comes out as [1, 20, 200, 2000], each step adding the scan input to itself
rather than to the state. The same body written Add(h, x) is right, and ONNX Runtime is right for
both. memo met it as SimpleRNN models (memo's ONNX lowers a recurrence to a Scan whose body is
x_t + h @ R): every output after the first step wrong, at inference precision f32 and bf16.
Exits 1 while the fault shows. Needs openvino, onnx and numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper


def running_sum(x_first):
    add = helper.make_node("Add", ["x", "h"] if x_first else ["h", "x"], ["y"])
    body = helper.make_graph(
        [add, helper.make_node("Identity", ["y"], ["s"]), helper.make_node("Identity", ["y"], ["o"])], "body",
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "xs"], ["hT", "ys"], num_scan_inputs=1, body=body)], "running_sum",
        [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("xs", TensorProto.FLOAT, [4, 1])],
        [helper.make_tensor_value_info("hT", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("ys", TensorProto.FLOAT, [4, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


print("OpenVINO", ov.__version__)
core = ov.Core()
feeds = {"h0": np.zeros(1, np.float32), "xs": np.array([[1], [10], [100], [1000]], np.float32)}
wrong = False
for x_first in (False, True):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "running_sum.onnx")
        onnx.save(running_sum(x_first), path)
        compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = {next(iter(p.get_names())): v for p, v in compiled.create_infer_request().infer(feeds).items()}
    ys = got["ys"].ravel()
    right = np.array_equal(ys, [1, 11, 111, 1111])
    print("body Add(%s): ys %s, expected [1, 11, 111, 1111]: %s" % ("x, h" if x_first else "h, x", ys.tolist(), "right" if right else "WRONG"))
    wrong |= not right
sys.exit(1 if wrong else 0)
