#!/bin/bash
# Where a campaign's time goes: one campaign on the default backends (or those given), then a table
# of its own thread's time per part of the execution stage (stats.json's "time_ms"; the search and
# its books are the rest of the wall time), the CPU time each library's worker spent per executed
# model, and the ratio that matters: wall time per executed model against the CPU time the
# libraries under test (every backend but memo's reference) spent on it. A compiling backend's time
# per model is split into its compiling (XLA's programs, Inductor's code) and the rest.
# Usage: bench/stages.sh [SECONDS (default 60)] [SEED (default 1)] [BACKENDS (default: memo-fuzz's)]
set -euo pipefail
secs=${1:-60}
seed=${2:-1}
backends=${3:-}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$memo" run ${backends:+--backends "$backends"} --seconds "$secs" --seed "$seed" --quiet --out "$tmp/c" >/dev/null
python3 - "$tmp/c/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = max(1, d["models_executed"])
wall = 1000.0 * d["seconds"]
t = d["time_ms"]
order = ["offer", "start", "wait", "judge", "truth", "localise", "minimise", "store", "resources"]
parts = {"search and books": wall - sum(t.values()), **{k: t[k] for k in order if k in t}}
print(f"{d['models_executed']} models executed in {d['seconds']:.1f} s ({d['models_executed'] / d['seconds']:.1f}/s) on {','.join(d['backends'])}")
print()
print("| part (campaign's thread) | ms | ms per executed model | share of wall |")
print("|---|---:|---:|---:|")
for k, v in parts.items():
    print(f"| {k} | {v:.0f} | {v / n:.2f} | {100 * v / wall:.1f} % |")
print()
print("| library (its worker) | runs | CPU ms per executed model | wall ms per run | of which compiling |")
print("|---|---:|---:|---:|---:|")
lib = 0.0
for name, e in sorted(d["executions"].items()):
    cpu = e.get("cpu_ms_total", 0.0) / n
    if name != "reference": lib += cpu
    runs = max(1, e["runs"])
    print(f"| {name} | {e['runs']} | {cpu:.2f} | {e['ms_mean']:.2f} | {e.get('compile_ms_total', 0.0) / runs:.2f} |")
per = wall / n
print()
print(f"wall per executed model {per:.2f} ms; CPU of the libraries under test per model {lib:.2f} ms; ratio {per / max(lib, 1e-9):.2f} (goal: at most 2)")
PY
