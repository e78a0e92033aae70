"""Apache TVM (Relax's ONNX frontend, llvm): Relu turns NaN into 0 (it compiles to a maximum whose
x86 instruction returns the second operand when the first is NaN); ONNX Runtime, PyTorch and
TensorFlow keep NaN. memo met it as a Conv2D with activation relu after an injected NaN. Exits 1
while the fault shows. Needs apache-tvm, onnx, numpy."""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
y = vm["main"](tvm.runtime.tensor(np.array([np.nan, -1, 2], np.float32))).numpy()
print("TVM", tvm.__version__)
print("Relu of [NaN, -1, 2]: %s, expected [nan, 0.0, 2.0]" % y.tolist())
sys.exit(0 if np.isnan(y[0]) else 1)
