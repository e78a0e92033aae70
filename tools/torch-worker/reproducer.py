"""A bug's reproducer in PyTorch's own terms: memo's model written as a Python script that imports
only PyTorch and numpy, one line per layer calling the function of lowering.py that the worker ran
(its source copied in, with the helpers it calls), the inputs and weights in an .npz beside it.

The script runs the model as the worker did (eagerly, or compiled by torch.compile), compares each
output with the values expected (memo's float64 reference; for a compiled run, the same program run
eagerly) within memo's rounding bound, prints what differs, and exits 1 while the fault shows and
0 once it does not. A failing call is the fault where memo saw a crash."""
from __future__ import annotations

import ast
import os

import numpy as np
import torch

import lowering

HEADER = '''"""{title}

PyTorch {version}, {how}. memo's minimal model written as PyTorch: each layer is one call of a
function below (the layer's Keras meaning over torch and torch.nn.functional). Run it from its
folder: it prints each output's largest difference from the values expected,
{against},
and exits 1 while the fault shows, 0 once it does not."""
import functools
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

'''

CHECK = '''

def differs(name, got, expected, bound):
    """Whether got differs from expected by more than bound anywhere (a NaN or infinity where the
    other has none counts as any difference); prints the largest difference."""
    got, expected = (t.detach().to(torch.float64).numpy() if isinstance(t, Tensor) else np.asarray(t, dtype=np.float64) for t in (got, expected))
    if got.shape != expected.shape:
        print("%s: shape %s, expected %s" % (name, list(got.shape), list(expected.shape)))
        return True
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    diff = np.nan_to_num(np.where(same, 0.0, np.abs(got - expected)), nan=np.inf)
    at = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    worst = float(diff[at]) if diff.size else 0.0
    print("%s: largest difference %.6g at %s (%r against %r); rounding allows %.3g" % (name, worst, [int(i) for i in at], float(got[at]), float(expected[at]), bound))
    return worst > bound
'''


def top_level(path: str) -> dict[str, tuple[int, str, set[str]]]:
    """lowering.py's top-level definitions: name -> (line, source, names its body reads)."""
    source = open(path).read()
    tree = ast.parse(source)
    defs = {}
    for node in tree.body:
        names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        for name in names:
            read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            defs[name] = (node.lineno, ast.get_source_segment(source, node), read)
    return defs


DEFINITIONS = top_level(lowering.__file__)


def needed(functions: list[str]) -> list[str]:
    """The functions named and every definition of lowering.py they reach, in the file's order."""
    seen, todo = set(), list(functions)
    while todo:
        name = todo.pop()
        if name in seen or name not in DEFINITIONS:
            continue
        seen.add(name)
        todo.extend(DEFINITIONS[name][2])
    return sorted(seen, key=lambda n: DEFINITIONS[n][0])


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

    functions = needed(sorted({lowering.LAYERS[n.cls].__name__ for n in nodes if n.cls != "InputLayer"}))
    outs = [nodes[k] for k in outputs]
    how = "compiled by torch.compile (Inductor, CPU)" if compile else "eager"
    against = "the same program's run eagerly" if compile else "those memo's float64 reference computes"
    script = [HEADER.format(title=title, version=torch.__version__, how=how, against=against)]
    script += ["\n\n" + DEFINITIONS[n][1] + "\n" for n in functions]
    script.append("\n\ndef model(x, w):\n" + "\n".join(lines) + "\n    return [%s]\n" % ", ".join(names[n.index] for n in outs))
    script.append(CHECK)
    script.append(f'''

data = np.load("{stem}.npz")
x = [torch.from_numpy(data["input_%d" % i]) for i in range({len(inputs)})]
w = {{k: torch.from_numpy(data[k]) for k in data.files if k.startswith("weight_")}}
outputs = {[n.name for n in outs]!r}
bounds = {[float(b) for b in bounds]!r}
''')
    if compile:
        script.append('''expected = model(x, w)
compiled = torch.compile(model, dynamic=False, fullgraph=True)
''')
        call = "compiled(x, w)"
    else:
        script.append('expected = [data["expected_%d" % i] for i in range(len(outputs))]\n')
        call = "model(x, w)"
    script.append(f'''with torch.inference_mode():
    try:
        got = {call}
    except Exception as e:  # the fault, where memo saw a crash
        print("the model fails: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
faults = [differs(name, g, e, b) for name, g, e, b in zip(outputs, got, expected, bounds)]
sys.exit(1 if any(faults) else 0)
''')
    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as out:
        out.write("".join(script))
    return path


def run(script: str) -> str:
    """Runs a reproducer from its folder, as a maintainer would: whether it shows the fault, and the
    last line it printed."""
    import subprocess
    import sys

    try:
        p = subprocess.run([sys.executable, os.path.basename(script)], cwd=os.path.dirname(script), capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "does not finish in 600 s"
    said = [line for line in p.stdout.splitlines() if line.strip()]
    last = said[-1] if said else (p.stderr.strip().splitlines() or [""])[-1]
    verdict = {1: "shows the fault", 0: "does not show the fault"}.get(p.returncode, "fails (exit %d)" % p.returncode)
    return "%s (exit %d): %s" % (verdict, p.returncode, last)
