"""Apache TVM as an engine of the ONNX worker (worker.py): Relax's ONNX frontend imports the file,
tvm.compile builds it for the CPU (target llvm) at the default optimisation level ('default') or
at the lowest ('O0'), and Relax's virtual machine runs it, one thread. A difference between the
two settings is TVM's passes'. compile_model and run are copied into each reproducer as they are."""
import importlib.metadata
import os

os.environ.setdefault("TVM_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tvm  # noqa: E402
from tvm import relax  # noqa: E402
from tvm.relax.frontend.onnx import from_onnx  # noqa: E402

PACKAGE = "apache-tvm"
LIBRARY = "Apache TVM"
IMPORTS = """import os

os.environ.setdefault("TVM_NUM_THREADS", "1")
import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx"""
VERSION = "tvm.__version__"
SETTINGS = {
    "default": "Relax, target llvm, the default optimisation level, one thread",
    "O0": "Relax, target llvm, optimisation level 0, one thread",
}


def version():
    """The release installed, as PyPI names it."""
    return importlib.metadata.version(PACKAGE)


def compile_model(path, setting):
    """The file imported by Relax's ONNX frontend and built for the CPU; the graph's input and
    output names with the virtual machine."""
    model = onnx.load(path)
    initializers = {t.name for t in model.graph.initializer}
    mod = from_onnx(model, keep_params_in_input=False)
    with tvm.transform.PassContext(opt_level=0 if setting == "O0" else 2):
        executable = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    return vm, [v.name for v in model.graph.input if v.name not in initializers], [v.name for v in model.graph.output]


def run(compiled, inputs, names):
    """The named outputs (numpy arrays) for inputs by name."""
    vm, input_names, output_names = compiled
    out = vm["main"](*[tvm.runtime.tensor(np.ascontiguousarray(inputs[n])) for n in input_names])
    outs = list(out) if len(output_names) > 1 else [out]
    by_name = dict(zip(output_names, outs))
    return [by_name[n].numpy() for n in names]


def declines(message):
    """Whether an error is TVM lacking an operator or a dtype (its frontend or its lowering)."""
    return any(s in message for s in ("not supported", "Unsupported", "unsupported", "not implemented", "NotImplementedError"))
