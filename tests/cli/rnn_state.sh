#!/bin/bash
# RNN-state coverage from the command line: a campaign with --coverage memo,rnn-state writes the
# DeepStellar criteria to stats.json and coverage.csv; `memo-fuzz states` fuzzes one LSTM model's
# inputs, writes what it kept, and is deterministic for a seed; bad input is a clear error.
. "$(dirname "$0")/lib/preamble.sh"
expect_error() {  # expect_error WORDS -- ARGS: a non-zero exit whose message holds WORDS
  local words=$1
  shift 2
  if "$memo" "$@" >"$tmp/out" 2>&1; then fail "memo-fuzz $* succeeded"; fi
  grep -q -- "$words" "$tmp/out" || fail "memo-fuzz $*: no '$words' in: $(cat "$tmp/out")"
}

# Outputs go to files first: grep -q closing a pipe early would fail the writer under pipefail.
"$memo" states --help >"$tmp/h1"
grep -q "weighted transition" "$tmp/h1" || fail "states --help"
"$memo" run --help >"$tmp/h2"
grep -q -- "--coverage LIST" "$tmp/h2" || fail "run --help lacks --coverage"

"$memo" run --backends reference --coverage memo,rnn-state --seeds zoo:lstm0-sinewave,lstm2-price --iterations 300 \
  --seed 5 --quiet --out "$tmp/c" >/dev/null
for k in rnn_state_basic rnn_state_boundary rnn_state_weighted rnn_transition_basic rnn_transition_weighted rnn_states rnn_transitions; do
  [[ $(json "$tmp/c/stats.json" "'$k' in d['coverage']") == True ]] || fail "stats.json lacks coverage.$k"
done
[[ $(json "$tmp/c/stats.json" "d['coverage']['rnn_states']['covered'] > 0") == True ]] || fail "no RNN state reached"
head -1 "$tmp/c/coverage.csv" | grep ",rnn_states," >/dev/null || fail "coverage.csv has no rnn_states column"
grep -q "rnn_transition_weighted" "$tmp/c/report.html" || fail "report.html lacks the RNN-state criteria"

"$memo" states --zoo lstm2-price --iterations 300 --seed 3 --json --quiet --out "$tmp/s" >"$tmp/a.json"
"$memo" states --zoo lstm2-price --iterations 300 --seed 3 --json --quiet >"$tmp/b.json"
python3 - "$tmp/a.json" "$tmp/b.json" "$tmp/s" <<'PY' || exit 1
import json, os, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = ["basic_state", "boundary", "weighted_state", "basic_transition", "weighted_transition"]
assert a["iterations"] == 300, a
assert all(k in a["criteria"] for k in keys), a["criteria"]
assert a["criteria"]["basic_state"]["total"] > 0 and a["criteria"]["basic_state"]["covered"] > 0, a
assert a["kept"] >= 8, a
assert a["criteria"] == b["criteria"] and a["kept"] == b["kept"], "the same seed gave another run"
kept = sorted(os.listdir(os.path.join(sys.argv[3], "inputs")))
assert len(kept) == a["kept"], (len(kept), a["kept"])
assert json.load(open(os.path.join(sys.argv[3], "stats.json")))["criteria"] == a["criteria"]
PY
"$memo" states --zoo lstm0-sinewave --abstraction grid --iterations 50 --quiet >"$tmp/table"
grep -q "k-step boundary" "$tmp/table" || fail "states table: $(cat "$tmp/table")"

expect_error "unknown coverage 'foo' in 'memo,foo'" -- run --backends reference --coverage memo,foo --iterations 5 --out "$tmp/x"
expect_error "no zoo model 'nope'" -- run --backends none --seeds zoo:nope --iterations 5 --out "$tmp/y"
expect_error "no recurrent layer" -- states --zoo lenet5-mnist --iterations 5
expect_error "64" -- states --zoo lstm2-price --bits 30 --iterations 5
expect_error "pca or grid" -- states --zoo lstm2-price --abstraction tree
echo "ok"
