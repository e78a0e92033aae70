"""Apache TVM (Relax's ONNX frontend): a float16 Elu, Selu or ThresholdedRelu cannot be imported:
the frontend builds its constants (1.0, alpha, gamma, the threshold) as float32 and the float16
arithmetic with them is refused ("Binary operators must have the same datatype for both operands.
However, R.subtract(R.const(1.0, "float32"), lv) ..."). float32 models of the same operators, and
float16 Relu, LeakyRelu, HardSigmoid, Softplus, Softsign, HardSwish, import and run. Exits 1 while
the fault shows. Needs apache-tvm, onnx and numpy."""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def run(op, elem, **attrs):
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op, [helper.make_tensor_value_info("x", elem, [2, 3])],
                              [helper.make_tensor_value_info("y", elem, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
    x = np.array([[-1, -0.5, 0], [0.5, 1, 2]], np.float16 if elem == TensorProto.FLOAT16 else np.float32)
    return vm["main"](tvm.runtime.tensor(x)).numpy()


print("TVM", tvm.__version__)
failures = 0
for op, attrs in (("Elu", {"alpha": 1.5}), ("Selu", {}), ("ThresholdedRelu", {"alpha": 0.7})):
    for elem, name in ((TensorProto.FLOAT, "float32"), (TensorProto.FLOAT16, "float16")):
        try:
            said = "runs: %s" % run(op, elem, **attrs).ravel().tolist()
        except Exception as e:
            said = "fails: %s" % str(e).strip().splitlines()[-1][:160]
            failures += 1
        print("%s %s %s" % (op, name, said))
sys.exit(1 if failures else 0)
