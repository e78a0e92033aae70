#!/usr/bin/env python3
"""The layering of include/memo/: folders in the order data flows, each including only the folders
before it (and itself), and the libraries each may use. Run as: check.py <include dir>.

Exits 1 naming every include against the order that is not a known exception below, every known
exception that no longer happens (so the list only shrinks), and every library used where it may
not be."""
import pathlib
import re
import sys

# The order data flows in: the engine's generic algorithms and concepts first (engine), then memo's
# Keras instance: a model is built (core, layers), read or written (io), taken from the
# zoo, counted (coverage), mutated and reduced, searched; then run (tensors, onnx, backends), judged
# (metamorphic, oracle), measured by its recurrent states (rnn_state), stored (its runs and its
# bugs), reported, spread over processes (cluster), driven as a campaign, and offered as commands
# (fuzz).
ORDER = ["engine", "core", "layers", "io", "zoo", "coverage", "mutation", "reduce", "search", "tensors", "onnx", "backends",
         "metamorphic", "oracle", "rnn_state", "store", "report", "cluster", "campaign", "fuzz"]

# Includes against the order that remain, each with why (none today). A fixed one must leave this
# list.
KNOWN = {}

# Libraries of the folders that may use them (memo::campaign brings {fmt} and SQLite).
LIBRARIES = {
    "fmt/": {"store", "campaign", "cluster", "report", "fuzz"},
    "sqlite3.h": {"store"},
    "Eigen/": {"tensors", "backends", "onnx", "rnn_state", "oracle", "store", "campaign", "cluster", "report", "fuzz"},
    "nlohmann/json.hpp": set(ORDER) - {"engine", "core", "layers", "zoo", "coverage", "mutation", "reduce", "search"},
}

UMBRELLAS = {"memo.hpp", "all.hpp"}  # include/memo/*.hpp: what they gather is above every folder

LOCAL = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)


def main(root: pathlib.Path) -> int:
    errors, seen = [], set()
    for header in sorted(root.rglob("*.hpp")):
        rel = header.relative_to(root).as_posix()
        if "/" not in rel:
            continue  # the umbrella headers (memo.hpp, all.hpp) include what they gather
        folder = rel.split("/")[0]
        if folder not in ORDER:
            errors.append(f"{rel}: folder '{folder}' has no place in the layering order (tests/layering/check.py)")
            continue
        text = header.read_text()
        for inc in LOCAL.findall(text):
            target = (header.parent / inc).resolve().relative_to(root.resolve()).as_posix()
            to = target.split("/")[0] if "/" in target else target
            if to in UMBRELLAS and folder == ORDER[-1]:
                continue  # the commands may take everything at once
            if to not in ORDER:
                errors.append(f"{rel}: includes {inc}, outside the layered folders")
            elif ORDER.index(to) > ORDER.index(folder):
                if (rel, to) in KNOWN:
                    seen.add((rel, to))
                else:
                    errors.append(f"{rel}: includes {inc}, but {to}/ comes after {folder}/ (order: {' < '.join(ORDER)})")
        for inc in SYSTEM.findall(text):
            for lib, folders in LIBRARIES.items():
                if inc.startswith(lib) and folder not in folders:
                    errors.append(f"{rel}: includes <{inc}>, which {folder}/ may not use")
    # <memo/memo.hpp>, model generation, and the engine need the standard library alone.
    todo, closure = [root / "memo.hpp"] + sorted((root / "engine").glob("*.hpp")), set()
    while todo:
        h = todo.pop().resolve()
        if h in closure:
            continue
        closure.add(h)
        text = h.read_text()
        todo += [h.parent / inc for inc in LOCAL.findall(text)]
        for inc in SYSTEM.findall(text):
            if "/" in inc or inc.endswith(".h") and not inc.startswith("c"):
                errors.append(f"memo.hpp needs the standard library alone, but {h.relative_to(root.resolve())} includes <{inc}>")
    for gone in sorted(set(KNOWN) - seen):
        errors.append(f"{gone[0]} no longer includes {gone[1]}/: remove it from KNOWN in tests/layering/check.py")
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} problems; {len(seen)} known exceptions left")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "include/memo")))
