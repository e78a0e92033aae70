#!/bin/bash
# Which backends a campaign should run by default: for each candidate set of backends and each seed,
# one campaign, then a table of its executed models per second and the bugs it stored (each by
# signature, to be opened by hand: a stored bug is a finding only once it held without memo). The
# campaigns stay in OUT for that.
# Usage: bench/defaults.sh [SECONDS (default 600)] [SEEDS (default "1 2 3")] [OUT (default a new
#        temporary folder)] [SET...] (default sets: memo-fuzz's default, it with Keras' three eager
#        backends, and PyTorch with Keras' three)
set -euo pipefail
secs=${1:-600}
seeds=${2:-1 2 3}
out=${3:-$(mktemp -d)}
shift $(( $# < 3 ? $# : 3 ))
sets=("$@")
(( ${#sets[@]} )) || sets=(reference,torch,ort reference,torch,ort,keras-tensorflow,keras-jax,keras-torch reference,torch,keras-tensorflow,keras-jax,keras-torch)
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
mkdir -p "$out"
echo "campaigns in $out" >&2
for set in "${sets[@]}"; do
  for seed in $seeds; do
    dir="$out/$(echo "$set" | tr , +)-seed$seed"
    [[ -f $dir/stats.json ]] || "$memo" run --backends "$set" --seconds "$secs" --seed "$seed" --quiet --out "$dir" >/dev/null 2>&1 ||
      { echo "campaign on $set, seed $seed failed: run it by hand" >&2; exit 1; }
  done
done
python3 - "$out" "${sets[@]}" <<'PY'
import json, os, sys
out, sets = sys.argv[1], sys.argv[2:]
print("| backends | seed | executed | per second | bugs stored | signatures |")
print("|---|---:|---:|---:|---:|---|")
for s in sets:
    for name in sorted(os.listdir(out)):
        if not name.startswith(s.replace(",", "+") + "-seed"):
            continue
        d = json.load(open(os.path.join(out, name, "stats.json")))
        bugs = os.path.join(out, name, "bugs")
        sigs = sorted(f"{k}/{b}" for k in os.listdir(bugs) if k != ".tmp" for b in os.listdir(os.path.join(bugs, k))) if os.path.isdir(bugs) else []
        print(f"| {s} | {d['seed']} | {d['models_executed']} | {d['models_executed'] / d['seconds']:.1f} | {len(sigs)} | {', '.join(sigs)} |")
PY
