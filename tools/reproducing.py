"""What memo's Python workers share to write a bug's reproducer (tools/torch-worker/reproducer.py,
tools/keras-worker/reproducer.py; docs/reproducers.md): the request's reproducer part, copying
definitions out of a worker's own source with the helpers they call, the check every reproducer
ends with, and the command that runs one from its folder as a maintainer would."""
from __future__ import annotations

import ast
import json
import os
import sys


def read_request(r) -> dict:
    """The reproducer part of a request (mode 3), after the run's fields: the folder, the file
    stem, the title and the checks, each (node, expected value, bound)."""
    q = {"directory": r.str(), "stem": r.str(), "title": r.str()}
    q["checks"] = [(r.u32(), r.tensor(), r.f64()) for _ in range(r.u32())]
    return q


def definitions(path: str) -> dict[str, tuple[int, str, set[str]]]:
    """A module's top-level definitions: name -> (line, source, names its body reads)."""
    source = open(path).read()
    tree = ast.parse(source)
    defs = {}
    for node in tree.body:
        names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        for name in names:
            read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            defs[name] = (node.lineno, ast.get_source_segment(source, node), read)
    return defs


def needed(defs: dict, names) -> list[str]:
    """The definitions named and every one of `defs` they reach, in the module's order."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        todo.extend(defs[name][2])
    return sorted(seen, key=lambda n: defs[n][0])


# What each script runs first, after its standard-library imports (os and sys) and before its
# library's: glibc fills the process's heap (MALLOC_PERTURB_, as memo's workers run), so that a
# kernel that reads memory it never wrote answers garbage at its first call, not what a fresh heap
# happens to hold. No braces: it goes into str.format templates as it is.
HEAP_FILL = """
# glibc fills this process's heap (MALLOC_PERTURB_): a kernel that reads memory it never wrote then
# answers garbage at its first call, not what a fresh heap holds. The script starts itself again
# once under it (where the C library is not glibc the variable does nothing).
if "MALLOC_PERTURB_" not in os.environ:
    os.environ["MALLOC_PERTURB_"] = "165"
    os.execv(sys.executable, getattr(sys, "orig_argv", [sys.executable] + sys.argv))
"""


# The check each reproducer ends with, on numpy arrays (each script converts its library's tensors).
CHECK = '''

def differs(name, got, expected, bound, show=True):
    """Whether got differs from expected by more than bound anywhere (a NaN or infinity where the
    other has none counts as any difference); prints the largest difference."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        if show:
            print("%s: shape %s, expected %s" % (name, list(got.shape), list(expected.shape)))
        return True
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    diff = np.nan_to_num(np.where(same, 0.0, np.abs(got - expected)), nan=np.inf)
    at = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    worst = float(diff[at]) if diff.size else 0.0
    if show:
        print("%s: largest difference %.6g at %s (%r against %r); rounding allows %.3g" % (name, worst, [int(i) for i in at], float(got[at]), float(expected[at]), bound))
    return worst > bound


RUNS = 3


def checked_runs(call, check):
    """Calls the model up to RUNS times on the same inputs and returns check(outputs, show=True) of
    the first run at fault (of the last where none is): a kernel that reads memory it never wrote
    answers right on a fresh heap and wrong once the library reuses memory it freed."""
    for k in range(RUNS):
        got = call()
        if k == RUNS - 1 or any(check(got, False)):
            if k:
                print("run %d of %d:" % (k + 1, RUNS))
            return check(got, True)
'''


# A reproducer exits 1 while the fault shows, and so does Python on an exception nobody catches: the
# script runs under this harness, which makes its own failure (a layer it cannot build or set)
# exit 2, not a fault shown.
HARNESS = """import runpy, sys, traceback
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except Exception:
    traceback.print_exc()
    sys.exit(2)
"""


def command(script: str) -> str:
    """How memo runs a reproducer, as the worker's answer: this Python, the harness and the script,
    from the script's folder (oracle/reproducers.hpp judges its exit status and keeps its output
    beside it, STEM.out)."""
    return json.dumps({"script": os.path.abspath(script), "argv": [sys.executable, "-c", HARNESS, os.path.basename(script)]})
