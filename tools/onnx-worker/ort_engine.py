"""ONNX Runtime's PyPI release (onnxruntime) as an engine of the ONNX worker (worker.py): an
InferenceSession over the file on the CPU, one thread, at a graph optimisation level ('disabled' or
'all'), as tools/ort-worker/worker.js runs the npm release. compile_model and run are copied into
each reproducer as they are."""
import importlib.metadata

import onnxruntime as ort

PACKAGE = "onnxruntime"
LIBRARY = "ONNX Runtime"
IMPORTS = "import onnxruntime as ort"
VERSION = "ort.__version__"
SETTINGS = {
    "disabled": "CPU, graph optimisations off, one thread",
    "all": "CPU, all graph optimisations (its default), one thread",
}
LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def version():
    """The release installed, as PyPI names it."""
    return importlib.metadata.version(PACKAGE)


def compile_model(path, setting):
    """A session over the file: ONNX Runtime checks and rewrites the graph at the level asked."""
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[setting])
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def run(session, inputs, names):
    """The named outputs (numpy arrays) for inputs by name."""
    return session.run(names, inputs)


def declines(message):
    """Whether an error is ONNX Runtime lacking a kernel for an operator and dtype."""
    return "Could not find an implementation" in message or "NOT_IMPLEMENTED" in message or ("does not support" in message and " yet" in message)
