"""A bug's reproducer in the terms of a library that takes ONNX (ONNX Runtime's PyPI release,
OpenVINO, TVM): memo's minimal model as the ONNX file the worker ran (STEM.onnx), its inputs and the
values expected in STEM.npz, and STEM.py, a script of one screen that imports only the library and
numpy, compiles and runs the file as the worker did (the engine's compile_model and run, copied in
as they are), compares each output with the values expected (memo's float64 reference) within
memo's rounding bound, prints what differs, and exits 1 while the fault shows and 0 once it does
not. The model runs in a child process: a crash of the library is the fault where memo saw one."""
from __future__ import annotations

import os

import numpy as np

from reproducing import CHECK, HEAP_FILL, command, definitions, needed  # noqa: F401: command is the worker's

HEADER = '''"""{title}

{library} {version}, {setting}. {stem}.onnx is the model; {stem}.npz holds its inputs and, for
each output checked, the values expected (float64, as a reference implementation computes them).
Run it from its folder (pip install {package}=={version} numpy{more}): it prints each output's
largest difference and exits 1 while the fault shows, 0 once it does not."""
import os
import platform
import subprocess
import sys
{heap_fill}
import numpy as np
{imports}

'''

MAIN = '''

SETTING = {setting_name!r}
INPUTS = {inputs!r}
OUTPUTS = {outputs!r}  # run in this order; those with values expected are checked


def main():
    print("{library} %s, Python %s, %s %s" % ({version_expr}, platform.python_version(), platform.system(), platform.machine()))
    data = np.load("{stem}.npz")
    inputs = {{name: data["input_%d" % i] for i, name in enumerate(INPUTS)}}
    checked = [k for k in range(len(OUTPUTS)) if "expected_%d" % k in data]
    check = lambda got, show: [differs(OUTPUTS[k], got[k], data["expected_%d" % k], float(data["bound_%d" % k]), show) for k in checked]
    try:
        compiled = compile_model("{stem}.onnx", SETTING)
        faults = checked_runs(lambda: run(compiled, inputs, OUTPUTS), check)
    except Exception as e:  # the fault, where memo saw a crash
        print("the model fails: %s" % str(e).strip().splitlines()[-1:])
        sys.exit(1)
    if not checked:
        print("the model runs")
    sys.exit(1 if any(faults) else 0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--here"]:
        main()
    # In a child process: a library that kills its process shows the fault too.
    code = subprocess.call([sys.executable, __file__, "--here"])
    if code < 0:
        print("the model kills the process (signal %d)" % -code)
    sys.exit(1 if code < 0 else code)
'''


def write(engine, setting: str, repro: dict, model: bytes, feeds: dict) -> str:
    """Writes STEM.onnx, STEM.npz and STEM.py into the request's folder; returns the script's path.
    `repro` as worker.decode reads it: the folder, stem, title and (name, expected, bound) per
    output run; `feeds` the inputs by name."""
    directory, stem = repro["directory"], repro["stem"]
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, stem + ".onnx"), "wb") as f:
        f.write(model)
    data = {"input_%d" % i: x for i, x in enumerate(feeds.values())}
    for k, (_, expected, bound) in enumerate(repro["outputs"]):
        if expected is not None:
            data["expected_%d" % k] = expected
            data["bound_%d" % k] = np.float64(bound)
    np.savez(os.path.join(directory, stem + ".npz"), **data)
    defs = definitions(engine.__file__)
    body = "\n\n\n".join(defs[n][1] for n in needed(defs, ["compile_model", "run"]))
    fields = {
        "title": repro["title"].replace("\n", " "),
        "library": engine.LIBRARY,
        "version": engine.version(),
        "setting": engine.SETTINGS[setting],
        "package": engine.PACKAGE,
        "more": " onnx" if "import onnx" in engine.IMPORTS else "",
        "stem": stem,
        "imports": engine.IMPORTS,
        "heap_fill": HEAP_FILL,
    }
    script = HEADER.format(**fields) + body + "\n" + CHECK + MAIN.format(
        setting_name=setting, inputs=list(feeds), outputs=[name for name, _, _ in repro["outputs"]], version_expr=engine.VERSION, **fields)
    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as f:
        f.write(script)
    return path
