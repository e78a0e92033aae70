#!/bin/bash
# Two builds of memo-fuzz on the very same models: with --no-fill the models a campaign runs depend
# on --seed and --iterations alone, so wall time and CPU time per executed model compare like for
# like (a timed campaign runs other models on each build, and their sizes set its pace more than
# any change does). Each build runs ROUNDS times, alternating; the best round of each is printed,
# then the ratio new / base.
# Usage: bench/same_models.sh BASE_MEMO_FUZZ [NEW_MEMO_FUZZ (default build/bin/memo-fuzz)] [ITERATIONS (default 2000)] [SEED (default 1)] [ROUNDS (default 2)]
set -euo pipefail
base=${1:?usage: bench/same_models.sh BASE_MEMO_FUZZ [NEW_MEMO_FUZZ] [ITERATIONS] [SEED] [ROUNDS]}
new=${2:-build/bin/memo-fuzz}
iterations=${3:-2000}
seed=${4:-1}
rounds=${5:-2}
for b in "$base" "$new"; do [[ -x $b ]] || { echo "no executable $b" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() {  # BINARY LABEL ROUND: one campaign; its figures appended to $tmp/figures as JSON lines
    local dir="$tmp/$2-$3"
    /usr/bin/time -f "%e %U %S" -o "$dir.time" "$1" run --iterations "$iterations" --no-fill --seed "$seed" --seconds 3600 --quiet --out "$dir" >/dev/null 2>&1 ||
        { echo "$1 run failed: see a run of it by hand" >&2; exit 1; }
    python3 - "$dir/stats.json" "$dir.time" "$2" >>"$tmp/figures" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
wall, user, system = map(float, open(sys.argv[2]).read().split())
n = max(1, d["models_executed"])
print(json.dumps({"label": sys.argv[3], "executed": d["models_executed"], "wall": wall, "cpu_ms": 1000 * (user + system) / n,
                  "libs": {k: e.get("cpu_ms_total", 0) / n for k, e in sorted(d["executions"].items())}}))
PY
}
for r in $(seq "$rounds"); do
    one "$base" base "$r"
    one "$new" new "$r"
done
python3 - "$tmp/figures" "$iterations" "$seed" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    if r["label"] not in best or r["wall"] < best[r["label"]]["wall"]: best[r["label"]] = r
b, n = best["base"], best["new"]
print(f"the same {sys.argv[2]} iterations (--no-fill, seed {sys.argv[3]}), best of {len(rows) // 2} rounds each")
print()
print("| build | executed | wall s | executed/s | CPU ms per executed model (all processes) | workers' own CPU ms per executed model |")
print("|---|---:|---:|---:|---:|---|")
for k, r in (("base", b), ("new", n)):
    libs = ", ".join(f"{name} {ms:.1f}" for name, ms in r["libs"].items())
    print(f"| {k} | {r['executed']} | {r['wall']:.1f} | {r['executed'] / r['wall']:.1f} | {r['cpu_ms']:.1f} | {libs} |")
print()
if b["executed"] != n["executed"]: print(f"note: the builds executed different models ({b['executed']} and {n['executed']}): their searches differ")
print(f"new / base: wall {n['wall'] / b['wall']:.2f}, CPU per executed model {n['cpu_ms'] / b['cpu_ms']:.2f}")
PY
