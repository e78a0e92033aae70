#!/bin/bash
# memo-fuzz run: a short generation campaign writes its directory; bad input is a clear error.
. "$(dirname "$0")/lib/preamble.sh"

"$memo" run --help >"$tmp/help"
grep -q -- "--selector mh|random" "$tmp/help" || fail "run --help"

"$memo" run --backends none --iterations 400 --seconds 30 --seed 3 --out "$tmp/c" --quiet >"$tmp/out"
s="$tmp/c/stats.json"
[[ $(json "$s" "d['models_generated']") == 400 ]] || fail "400 iterations"
[[ $(json "$s" "d['coverage']['layer_pair']['total']") == 4489 ]] || fail "coverage totals"
[[ $(json "$s" "int(d['models_valid'] <= d['models_generated'] and d['models_per_second'] > 0)") == 1 ]] || fail "stats figures"
[[ $(ls "$tmp/c/queue" | wc -l) -gt 0 ]] || fail "empty queue"
[[ $(ls "$tmp/c/seeds" | wc -l) == 10 ]] || fail "ten seeds"
[[ $(wc -l <"$tmp/c/coverage.csv") -ge 2 ]] || fail "coverage.csv rows"
grep -q "layer_pair" "$tmp/out" || fail "summary prints coverage"

# MEMO_r and MEMO_o run too, from a directory of seeds.
"$memo" run --backends none --iterations 200 --selector random --operators lemon --seeds "$data/memo/synthesized_models" --out "$tmp/o" --quiet >/dev/null

# Bad input: non-zero exit, a message naming the cause, nothing overwritten.
if "$memo" run --iterations 10 2>"$tmp/err"; then fail "run without --out accepted"; fi
grep -q -- "--out" "$tmp/err" || fail "missing --out message"
if "$memo" run --iterations 10 --out "$tmp/c" 2>"$tmp/err"; then fail "existing campaign overwritten"; fi
grep -q "already holds a campaign" "$tmp/err" || fail "existing campaign message"
if "$memo" run --iterations 10 --out "$tmp/x" --selector best 2>"$tmp/err"; then fail "bad selector accepted"; fi
grep -q "best" "$tmp/err" || fail "bad selector message"
if "$memo" run --iterations ten --out "$tmp/y" 2>"$tmp/err"; then fail "bad number accepted"; fi
grep -q "ten" "$tmp/err" || fail "bad number message"
if "$memo" run --iterations 10 --out "$tmp/z" --seeds "$tmp/nowhere" 2>"$tmp/err"; then fail "missing seeds dir accepted"; fi
grep -q "nowhere" "$tmp/err" || fail "missing seeds message"
echo "run ok"
