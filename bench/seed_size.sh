#!/bin/bash
# How large the search lets its seeds grow (--max-seed-nodes) against a campaign's pace and reach:
# campaigns on the default backends (or those given), run one after another in this invocation,
# each for S seconds, one per (size limit, seed); prints executed models per second, the executed
# models' coverage and the unique bugs, and each run's rate against the first limit's with the
# same seed (the peer: 160, the limit campaigns had before 32). A limit N stays fixed; N:M starts at N
# and doubles, up to M, whenever the search stalls (--grow-seed-nodes-to M, the default 32:160).
# Usage: bench/seed_size.sh [SECONDS (default 40)] [LIMITS (default "160 64 32 16 32:160")] [SEEDS (default "1")] [BACKENDS]
set -euo pipefail
secs=${1:-40}
limits=${2:-160 64 32 16 32:160}
seeds=${3:-1}
backends=${4:-}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in $limits; do
  for s in $seeds; do
    "$memo" run ${backends:+--backends "$backends"} --seconds "$secs" --seed "$s" --max-seed-nodes "${n%%:*}" --grow-seed-nodes-to "${n#*:}" \
      --quiet --out "$tmp/$n-$s" >/dev/null
  done
done
python3 - "$tmp" "$limits" "$seeds" <<'PY'
import json, os, sys
tmp, limits, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print("| max seed nodes | reached | seed | executed | executed/s | vs " + limits[0] + " | layer pairs | parameter values | inputs | unique bugs |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
first = {}
for n in limits:
    for s in seeds:
        d = json.load(open(os.path.join(tmp, f"{n}-{s}", "stats.json")))
        c = d["coverage_executed"]
        rate = d["models_executed"] / d["seconds"]
        first.setdefault(s, rate)
        print(f"| {n} | {d['max_seed_nodes_reached']} | {s} | {d['models_executed']} | {rate:.1f} | {rate / first[s]:.2f} | {c['layer_pair']['covered']} | "
              f"{c['layer_param']['covered']} | {c['layer_input']['covered']} of {c['layer_input']['total']} | {d['bugs']['unique']} |")
PY
