"""A bug's reproducer in PyTorch's own terms: memo's model written as a Python script that imports
only PyTorch and numpy, one line per layer calling the function of lowering.py that the worker ran
(its source copied in, with the helpers it calls), the inputs and weights in an .npz beside it.

The script runs the model as the worker did (eagerly, or compiled by torch.compile), compares each
output with the values expected (memo's float64 reference; for a compiled run, the same program run
eagerly) within memo's rounding bound, prints what differs, and exits 1 while the fault shows and
0 once it does not. A failing call is the fault where memo saw a crash."""
from __future__ import annotations

import os

import numpy as np
import torch

import lowering
from reproducing import CHECK, HEAP_FILL, command, definitions, needed  # noqa: F401: command is the worker's

HEADER = '''"""{title}

PyTorch {version}, {how}. memo's minimal model written as PyTorch: each layer is one call of a
function below (the layer's Keras meaning over torch and torch.nn.functional). Run it from its
folder: it prints each output's largest difference from the values expected,
{against},
and exits 1 while the fault shows, 0 once it does not."""
import functools
import math
import os
import platform
import sys
{heap_fill}
import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

'''

DEFINITIONS = definitions(lowering.__file__)


DTYPE_NAMES = {torch.float32: "torch.float32", torch.float16: "torch.float16", torch.bfloat16: "torch.bfloat16", torch.float64: "torch.float64"}


def write(directory: str, stem: str, title: str, nodes, outputs: list[int], inputs: list[np.ndarray], weights: dict, checks: list, compile: bool) -> str:
    """Writes STEM.py and STEM.npz into directory; returns the script's path. `nodes` and `outputs`
    as the worker's build() makes them, `weights` by layer and Keras name, `checks` the nodes that
    show the fault as (node, expected value, bound): the script returns their values, or without
    checks the model's outputs. A compiled run is held against its eager run, not `expected`."""
    if checks:
        outputs = [c[0] for c in checks]
    expected, bounds = [c[1] for c in checks], [c[2] for c in checks]
    os.makedirs(directory, exist_ok=True)
    data = {"input_%d" % i: np.asarray(x, dtype=np.float32) for i, x in enumerate(inputs)}
    lines, names = [], {}
    for node in nodes:
        v = "v%d" % node.index
        names[node.index] = v
        dtype = DTYPE_NAMES[node.dtype]
        cast = "" if node.dtype == torch.float32 else ".to(%s)" % dtype
        if node.cls == "InputLayer":
            lines.append("    %s = x[%d]%s  # %s" % (v, node.input, cast, node.name))
            continue
        f = lowering.LAYERS[node.cls]
        args = [names[k] + ("" if nodes[k].dtype == node.dtype else ".to(%s)" % dtype) for k in node.producers]
        for w, value in weights.get(node.name, {}).items():
            key = "weight_%s_%s" % (node.name, w)
            data[key] = np.asarray(value, dtype=np.float32)
            args.append("%s=w[%r]%s" % (w, key, cast))
        args += ["%s=%r" % (k, p) for k, p in node.params.items()]
        lines.append("    %s = %s(%s)%s  # %s %s" % (v, f.__name__, ", ".join(args), cast, node.cls, node.name))
    for i, e in enumerate(expected):
        data["expected_%d" % i] = np.asarray(e, dtype=np.float32)
    np.savez(os.path.join(directory, stem + ".npz"), **data)

    functions = needed(DEFINITIONS, sorted({lowering.LAYERS[n.cls].__name__ for n in nodes if n.cls != "InputLayer"}))
    outs = [nodes[k] for k in outputs]
    how = "compiled by torch.compile (Inductor, CPU)" if compile else "eager"
    against = "the same program's run eagerly" if compile else "those memo's float64 reference computes"
    script = [HEADER.format(title=title, version=torch.__version__, how=how, against=against, heap_fill=HEAP_FILL)]
    script += ["\n\n" + DEFINITIONS[n][1] + "\n" for n in functions]
    script.append("\n\ndef model(x, w):\n" + "\n".join(lines) + "\n    return [%s]\n" % ", ".join(names[n.index] for n in outs))
    script.append(CHECK)
    script.append(f'''

data = np.load("{stem}.npz")
x = [torch.from_numpy(data["input_%d" % i]) for i in range({len(inputs)})]
w = {{k: torch.from_numpy(data[k]) for k in data.files if k.startswith("weight_")}}
outputs = {[n.name for n in outs]!r}
bounds = {[float(b) for b in bounds]!r}
print("PyTorch %s, numpy %s, Python %s, %s" % (torch.__version__, np.__version__, platform.python_version(), platform.platform()))
''')
    if compile:
        script.append('''expected = model(x, w)
compiled = torch.compile(model, dynamic=False, fullgraph=True)
''')
        call = "compiled(x, w)"
    else:
        script.append('expected = [data["expected_%d" % i] for i in range(len(outputs))]\n')
        call = "model(x, w)"
    script.append(f'''numpy = lambda t: t.detach().to(torch.float64).numpy() if isinstance(t, Tensor) else t
check = lambda got, show: [differs(name, numpy(g), numpy(e), b, show) for name, g, e, b in zip(outputs, got, expected, bounds)]
with torch.inference_mode():
    try:
        faults = checked_runs(lambda: {call}, check)
    except Exception as e:  # the fault, where memo saw a crash
        print("the model fails: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
sys.exit(1 if any(faults) else 0)
''')
    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as out:
        out.write("".join(script))
    return path
