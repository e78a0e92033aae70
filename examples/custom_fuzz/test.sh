#!/bin/bash
# example.custom_fuzz: a campaign of custom_fuzz on tiny_nn finds its planted softmax bug, and the
# bug's repro.sh replays it with custom_fuzz itself (exit status 0: reproduced).
set -euo pipefail
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$exe" run --backends reference,tiny --seconds 20 --seed 1 --quiet --out "$dir/c" >"$dir/run.txt"
bugs=$(find "$dir/c/bugs" -name bug.json | wc -l)
[[ $bugs -ge 1 ]] || { echo "FAIL: no bug found on tiny"; cat "$dir/run.txt"; exit 1; }
repro=$(dirname "$(grep -l '"tiny"' $(find "$dir/c/bugs" -name bug.json) | head -1)")/repro.sh
grep -q "$exe" "$repro" || grep -q "custom_fuzz" "$repro" || { echo "FAIL: $repro does not call custom_fuzz:"; cat "$repro"; exit 1; }
sh "$repro" >"$dir/replay.txt" || { echo "FAIL: $repro did not reproduce:"; cat "$dir/replay.txt"; exit 1; }
grep -q "reproduced" "$dir/replay.txt"
echo "custom_fuzz: $bugs bug(s) on tiny; $(tail -1 "$dir/replay.txt")"
