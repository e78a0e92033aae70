#!/bin/bash
# Trust: campaigns on the default backends, one per seed, then every stored inconsistency with its
# largest difference at the localised node relative to that node's float64 output scale (what
# bug.json's localisation.difference holds), and how many executed models each backend declined.
# A difference at the rounding scale (below 1e-4 of the scale in float32, the dtype's tolerance
# in general) would be a false alarm: the script exits 1 when it finds one.
# Usage: bench/false_alarms.sh [SECONDS per seed (default 200)] [SEEDS (default 1,2,3)] [OUT DIR]
set -euo pipefail
secs=${1:-200}
seeds=${2:-1,2,3}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make demo or make build first" >&2; exit 1; }
out=${3:-$(mktemp -d)}
mkdir -p "$out"
for s in ${seeds//,/ }; do
  echo "seed $s: $secs s on the default backends -> $out/seed$s" >&2
  "$memo" run --seconds "$secs" --seed "$s" --quiet --out "$out/seed$s" >/dev/null
done
python3 - "$out" "$seeds" <<'PY'
import json, sys, os, glob
out, seeds = sys.argv[1], sys.argv[2].split(",")
tol = {"float16": 2e-2, "bfloat16": 1e-1, "float32": 1e-4, "float64": 1e-9}
total, rounding, executed, declined = 0, 0, 0, {}
for s in seeds:
    d = json.load(open(os.path.join(out, f"seed{s}", "stats.json")))
    executed += d["models_executed"]
    for b, e in d["executions"].items():
        r = declined.setdefault(b, [0, 0])
        r[0] += e["status"].get("unsupported", 0)
        r[1] += e["runs"]
    for f in sorted(glob.glob(os.path.join(out, f"seed{s}", "bugs", "inconsistency", "*", "bug.json"))):
        b = json.load(open(f))
        loc = b["localisation"]
        diff = loc.get("difference", {})
        rel = diff.get("max_abs", 0) / diff["scale"] if diff.get("scale") else float("inf")
        at_rounding = rel < tol.get(loc.get("dtype", "float32"), 1e-4)
        total += 1
        rounding += at_rounding
        print(f"seed {s}  {os.path.basename(os.path.dirname(f)):<34} {','.join(b['culprits']):<8} vs {','.join(b['peers']):<10} "
              f"{loc.get('dtype', '?'):<9} max abs {diff.get('max_abs', float('nan')):.3g} at scale {diff.get('scale', float('nan')):.3g}: "
              f"relative {rel:.3g}{'  ROUNDING SCALE' if at_rounding else ''}")
print(f"{len(seeds)} campaigns, {executed} executed models: {total} inconsistencies stored, {rounding} at the rounding scale")
print("declined: " + ", ".join(f"{b} {n}/{r} ({100.0 * n / max(1, r):.1f} %)" for b, (n, r) in sorted(declined.items())))
sys.exit(1 if rounding else 0)
PY
