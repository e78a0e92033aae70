"""OpenVINO (ONNX frontend, CPU plugin): a zero Pad at the end of a ConvTranspose's input shortens
the transposed convolution's output: x = [1, 2] padded to [1, 2, 0], then ConvTranspose (kernel 3
of ones, stride 2, pads 1 and 1) must give 5 values, [1, 3, 2, 2, 0] (ONNX's shape inference and
ONNX Runtime agree); OpenVINO gives 4, [1, 3, 2, 2], as if the Pad had been folded into the
convolution's own pads, which crop its output and do not widen its input. Without the Pad the two
agree. memo met it as a model that OpenVINO refused ("Argument shapes are inconsistent") where a
later node's shape no longer matched: a CustomPadLayer before a Conv3DTranspose. Exits 1 while the
fault shows. Needs openvino, onnx and numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.ones((1, 1, 3), np.float32), "w")
pads = numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 1], np.int64), "pads")
nodes = [helper.make_node("Pad", ["x", "pads"], ["p"]), helper.make_node("ConvTranspose", ["p", "w"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 1])]
graph = helper.make_graph(nodes, "pad_convtranspose", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5])], [w, pads])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)  # strict shape inference: y is [1, 1, 5]
core = ov.Core()
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "pad_convtranspose.onnx")
    onnx.save(model, path)
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    y = next(iter(compiled.create_infer_request().infer({"x": np.array([[[1, 2]]], np.float32)}).values()))
print("OpenVINO", ov.__version__)
print("Pad [1, 2] -> [1, 2, 0], ConvTranspose(kernel 3, stride 2, pads 1, 1): shape %s, %s; expected [1, 1, 5], [1.0, 3.0, 2.0, 2.0, 0.0]"
      % (list(y.shape), y.ravel().tolist()))
sys.exit(0 if list(y.shape) == [1, 1, 5] and np.allclose(y.ravel(), [1, 3, 2, 2, 0]) else 1)
