#!/bin/bash
# Models that once gave a false verdict (tests/data/false_alarms/) stay quiet on every backend
# built in: outputs that agree within rounding are never an inconsistency, and a float16 overflow
# that one library reaches and another does not is the dtype's range, not a NaN bug. Each runs with
# uniform inputs (MEMO's) and with the varied ones a campaign draws by default.
set -euo pipefail
memo=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

n=0
for f in "$data"/false_alarms/*.json; do
  for inputs in uniform varied; do
    "$memo" run-model "$f" --inputs $inputs >"$tmp/out" 2>&1 || fail "run-model $f --inputs $inputs exited $?: $(tail -3 "$tmp/out")"
    grep -q "^verdict: none" "$tmp/out" || fail "$(basename "$f") (--inputs $inputs): $(grep -A2 '^verdict' "$tmp/out" | tr '\n' ' ')"
  done
  n=$((n + 1))
done
(( n > 0 )) || fail "no model in $data/false_alarms"
echo "false alarms: $n models quiet on $(grep -c ' ok ' "$tmp/out") backends"
