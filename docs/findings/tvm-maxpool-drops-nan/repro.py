"""Apache TVM (Relax's ONNX frontend, llvm): MaxPool drops a NaN that comes first in its window:
windows [NaN, 1] and [2, NaN] give [1, NaN] where ONNX Runtime, PyTorch and TensorFlow give
[NaN, NaN]. The running maximum compiles to x86's maxss/maxps, which return the second operand
when the first is NaN (apache/tvm#19579 shows it for maximum, minimum, relu and clip). memo met it
as Keras' MaxPooling2D behind an injected NaN. Exits 1 while the fault shows. Needs apache-tvm,
onnx and numpy."""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

graph = helper.make_graph([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1, 2], strides=[1, 2])], "maxpool",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
y = vm["main"](tvm.runtime.tensor(np.array([np.nan, 1, 2, np.nan], np.float32).reshape(1, 1, 1, 4))).numpy().ravel()
print("TVM", tvm.__version__)
print("MaxPool over windows [NaN, 1] and [2, NaN]: %s, expected [nan, nan]" % y.tolist())
sys.exit(0 if np.isnan(y).all() else 1)
