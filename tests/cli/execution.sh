#!/bin/bash
# memo-fuzz run with backends, run-model and replay: models run in workers, bugs are stored and
# replay; bad input is a clear error.
. "$(dirname "$0")/lib/preamble.sh"

for c in run-model replay; do
  "$memo" $c --help >"$tmp/help"
  grep -q -- "--timeout-ms" "$tmp/help" || fail "$c --help"
done

# One of MEMO's seed files on the reference in float32 and float64: they agree.
seed=$(ls "$data"/memo/synthesized_models/*.json | head -1)
"$memo" run-model "$seed" --backends reference,reference-float64 >"$tmp/one"
grep -q "reference-float64 *ok" "$tmp/one" || fail "run-model prints each backend"
grep -q "^verdict: none" "$tmp/one" || fail "float32 and float64 reference disagree on $seed: $(cat "$tmp/one")"

# A short campaign on every backend built in: executed models, per-backend figures, coverage.
"$memo" run --iterations 300 --seconds 60 --seed 5 --out "$tmp/c" --quiet >"$tmp/out"
s="$tmp/c/stats.json"
[[ $(json "$s" "int(d['models_executed'] > 0)") == 1 ]] || fail "no model executed"
[[ $(json "$s" "sorted(d['bugs'].keys())[0]") == all_backends_failed ]] || fail "bugs keys"
[[ $(json "$s" "int(all(v['runs'] > 0 for v in d['executions'].values()))") == 1 ]] || fail "per-backend runs"
[[ $(json "$s" "int(d['coverage_executed']['layer_type']['covered'] > 0)") == 1 ]] || fail "executed coverage"
grep -q "executed" "$tmp/out" || fail "summary"
for b in $(find "$tmp/c/bugs" -mindepth 2 -maxdepth 2 -type d -not -path '*/.tmp/*' | head -3); do
  [[ -f $b/bug.json && -f $b/minimal.json && -f $b/model.json && -x $b/repro.sh ]] || fail "incomplete bug directory $b"
  rc=0
  "$memo" replay "$b" >"$tmp/replay" || rc=$?
  [[ $rc == 0 || $rc == 2 ]] || fail "replay $b exited $rc"
  grep -q "^verdict:" "$tmp/replay" || fail "replay prints a verdict"
done

# Bad input: non-zero exit and a message naming the cause.
if "$memo" run-model "$seed" --backends tensorflow 2>"$tmp/err" >/dev/null; then fail "unknown backend accepted"; fi
grep -q "tensorflow" "$tmp/err" || fail "unknown backend message"
if "$memo" run-model "$tmp/nowhere.json" 2>"$tmp/err" >/dev/null; then fail "missing model accepted"; fi
grep -q "nowhere.json" "$tmp/err" || fail "missing model message"
if "$memo" replay "$tmp" 2>"$tmp/err" >/dev/null; then fail "replay of a non-bug directory accepted"; fi
grep -q "bug.json" "$tmp/err" || fail "replay message"
if "$memo" run --out "$tmp/d" --iterations 5 --input-range 1,0 2>"$tmp/err" >/dev/null; then fail "empty input range accepted"; fi
grep -q "input-range" "$tmp/err" || fail "input range message"
echo "execution ok"
