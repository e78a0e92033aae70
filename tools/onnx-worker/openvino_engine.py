"""OpenVINO as an engine of the ONNX worker (worker.py): its ONNX frontend reads the file and its
CPU plugin compiles it, one thread and one stream, at inference precision f32 ('f32': float32 stays
float32) or bf16 ('bf16': the plugin's default on a CPU with AVX-512 BF16 or AMX, which computes
float32 models in bfloat16). compile_model and run are copied into each reproducer as
they are."""
import importlib.metadata

import numpy as np
import openvino as ov

PACKAGE = "openvino"
LIBRARY = "OpenVINO"
IMPORTS = "import openvino as ov"
VERSION = "ov.__version__"
SETTINGS = {
    "f32": "CPU plugin, inference precision f32, one thread",
    "bf16": "CPU plugin, inference precision bf16 (its default on a CPU with AVX-512 BF16 or AMX), one thread",
}
CORE = ov.Core()


def version():
    """The release installed, as PyPI names it."""
    return importlib.metadata.version(PACKAGE)


def compile_model(path, setting):
    """The file read by OpenVINO's ONNX frontend and compiled by its CPU plugin."""
    config = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": setting}
    return CORE.compile_model(CORE.read_model(path), "CPU", config)


def run(compiled, inputs, names):
    """The named outputs (numpy arrays) for inputs by name."""
    result = compiled.create_infer_request().infer(inputs)
    by_name = {}
    for port, value in result.items():
        for name in port.get_names():
            by_name[name] = np.array(value)
    return [by_name[name] for name in names]


def declines(message):
    """Whether an error is OpenVINO lacking an operator, a dtype or an attribute's value (its
    frontend or the plugin: an ONNX RNN's Softsign activation is "Unknown activation function")."""
    return any(s in message for s in ("No conversion rule", "OpConversionFailure", "not supported", "Unsupported", "unsupported", "Unknown activation function"))
