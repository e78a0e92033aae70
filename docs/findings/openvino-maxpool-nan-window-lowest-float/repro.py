"""OpenVINO (CPU plugin): MaxPool ignores NaN. A window that holds only NaN returns
-3.4028235e+38 (the lowest float32) instead of NaN, a window of one value being enough ([NaN, -1, 2]
through a 1x1 pool with stride 2 gives [-3.4e38, 2]); a window that holds NaN beside numbers
returns the largest number, wherever the NaN lies ([NaN, 1, 2, NaN] through a 1x2 pool with
stride 2 gives [1, 2]). ONNX Runtime and TVM give NaN for the first (each drops some NaNs beside
numbers: ledger rows of their own). memo met it as a MaxPooling2D with pool size 1 after an
injected NaN, and as a 3x3 MaxPooling2D behind a BatchNormalization whose negative variance makes
NaN. Exits 1 while the fault shows. Needs openvino, onnx, numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper

CORE = ov.Core()


def max_pool(values, kernel, stride):
    """OpenVINO's MaxPool of a 1x1x1xN row (f32 precision)."""
    n, out = len(values), (len(values) - kernel) // stride + 1
    graph = helper.make_graph([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, kernel], strides=[1, stride])], "maxpool",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, out])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "maxpool.onnx")
        onnx.save(model, path)
        compiled = CORE.compile_model(CORE.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        x = np.array(values, np.float32).reshape(1, 1, 1, n)
        return next(iter(compiled.create_infer_request().infer({"x": x}).values())).ravel()


print("OpenVINO", ov.__version__)
alone = max_pool([np.nan, -1, 2], 1, 2)
print("MaxPool 1x1, stride 2 over [NaN, -1, 2]: %s, expected [nan, 2.0]" % alone.tolist())
beside = max_pool([np.nan, 1, 2, np.nan], 2, 2)
print("MaxPool 1x2, stride 2 over [NaN, 1, 2, NaN]: %s, expected [nan, nan]" % beside.tolist())
sys.exit(0 if np.isnan(alone[0]) and alone[1] == 2 and np.isnan(beside).all() else 1)
