"""Apache TVM (Relax's ONNX frontend, llvm): a float16 BatchNormalization (input, scale, bias, mean
and variance all float16) gives a float32 output where ONNX says float16, so that a float16 Pad
after it fails to build, in the pass CallTIRRewrite: "Argument 0 type mismatch: expected
R.Tensor((1, 1, 3, 3), dtype="float16"), given R.Tensor((1, 1, 3, 3), dtype="float32")". Pad alone
builds and runs in float16; ONNX's checker and strict shape inference accept the graph, and ONNX
Runtime runs it. memo met it as Keras' BatchNormalization in float16 followed by a crop and a pad.
Exits 1 while the fault shows. Needs apache-tvm, onnx and numpy."""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def const(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype), name)


def build(batchnorm, pad):
    nodes, x, channels = [], "x", 1
    if batchnorm:
        nodes.append(helper.make_node("BatchNormalization", [x, "gamma", "beta", "mean", "var"], ["bn"], epsilon=1e-3))
        x = "bn"
    if pad:
        nodes.append(helper.make_node("Pad", [x, "pads", "zero"], ["padded"]))
        x, channels = "padded", 2
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(nodes, "batchnorm_pad", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 1, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, channels, 3, 3])],
                              [const("gamma", [1], np.float16), const("beta", [0], np.float16), const("mean", [0], np.float16),
                               const("var", [1], np.float16), const("pads", [0, 0, 0, 0, 0, 1, 0, 0], np.int64), const("zero", 0, np.float16)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


print("TVM", tvm.__version__)
fault = False
for batchnorm, pad in ((True, True), (True, False), (False, True)):
    name = " -> ".join([n for n, on in (("BatchNormalization", batchnorm), ("Pad", pad)) if on])
    try:
        vm = relax.VirtualMachine(tvm.compile(from_onnx(build(batchnorm, pad)), target="llvm"), tvm.cpu())
        y = vm["main"](tvm.runtime.tensor(np.ones((1, 1, 3, 3), np.float16))).numpy()
        print("%s (float16): builds and runs, %s %s" % (name, y.dtype, list(y.shape)))
    except Exception as e:
        said = [line.strip() for line in str(e).splitlines() if "mismatch" in line] or str(e).strip().splitlines()[:1]
        print("%s (float16): fails: %s" % (name, said[0][:200]))
        fault = fault or (batchnorm and pad)
sys.exit(1 if fault else 0)
