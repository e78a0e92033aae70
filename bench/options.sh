#!/bin/bash
# Campaign options against one another: campaigns on the default backends, run one after another in
# this invocation, each for S seconds, one per (options, seed), seed by seed so that each seed's
# campaigns run back to back; prints executed models per second, the executed models' coverage and
# the unique bugs, and each campaign's rate against the first options' with the same seed (the peer).
# Usage: bench/options.sh SECONDS "SEEDS" "OPTIONS" "OPTIONS"...   e.g.
#   bench/options.sh 60 "1 2 3" "--max-cost 20000000 --lanes 2" "--lanes 2" ""
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: bench/options.sh SECONDS \"SEEDS\" \"OPTIONS\" \"OPTIONS\"..." >&2; exit 2; }
secs=$1
seeds=$2
shift 2
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $seeds; do
  k=0
  for opts in "$@"; do
    # shellcheck disable=SC2086  # the options are words
    "$memo" run $opts --seconds "$secs" --seed "$s" --quiet --out "$tmp/$k-$s" >/dev/null
    echo "$opts" >"$tmp/$k-$s/options"
    k=$((k + 1))
  done
done
python3 - "$tmp" "$#" "$seeds" <<'PY'
import json, os, sys
tmp, n, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
print("| options | seed | executed | executed/s | vs first | layer pairs | parameter values | inputs | unique bugs |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in range(n):
    for s in seeds:
        d = os.path.join(tmp, f"{k}-{s}")
        st = json.load(open(os.path.join(d, "stats.json")))
        opts = open(os.path.join(d, "options")).read().strip() or "(defaults)"
        c = st["coverage_executed"]
        rate = st["models_executed"] / st["seconds"]
        peer = json.load(open(os.path.join(tmp, f"0-{s}", "stats.json")))
        first = peer["models_executed"] / peer["seconds"]
        print(f"| `{opts}` | {s} | {st['models_executed']} | {rate:.1f} | {rate / first:.2f} | {c['layer_pair']['covered']} | "
              f"{c['layer_param']['covered']} | {c['layer_input']['covered']} of {c['layer_input']['total']} | {st['bugs']['unique']} |")
PY
