#!/bin/bash
# The campaign store through memo-fuzz: N iterations, then --resume for N more, and a campaign
# killed with SIGKILL then resumed, each equal to 2N in one go (queue, coverage, bugs); stats;
# replay of a campaign (0 divergences on deterministic backends, torch included when built); and
# clear errors. (That a second campaign over one store runs nothing is a unit test's.)
. "$(dirname "$0")/lib/preamble.sh"

backends=reference
"$memo" run-model --backends torch "$data/report/ort_pad_maxpool.json" >/dev/null 2>&1 && backends=reference,torch
common=(--backends "$backends" --seed 4 --no-fill --lanes 1 --seconds 600 --quiet --max-cost 200000)

"$memo" run --help | grep -- "--resume DIR" >/dev/null || fail "run --help does not describe --resume"
"$memo" stats --help | grep "memo hits" >/dev/null || fail "stats --help"
"$memo" replay --help | grep "divergence" >/dev/null || fail "replay --help does not describe campaign replay"

# 2N in one go; N then N more.
"$memo" run "${common[@]}" --iterations 1200 --out "$tmp/whole" >"$tmp/whole.log"
"$memo" run "${common[@]}" --iterations 600 --out "$tmp/halves" >/dev/null
"$memo" run --resume "$tmp/halves" --iterations 600 --quiet >"$tmp/halves.log" || fail "resume failed"

same_campaign() {  # $1 $2: the same models in the queue, the same coverage, bugs and iterations
  diff -r "$1/queue" "$2/queue" >/dev/null || fail "$2: queue differs from $1's"
  python3 - "$1/stats.json" "$2/stats.json" <<'PY' || fail "$2: stats differ from $1's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for k in ("iterations", "models_valid", "models_diverse", "coverage", "models_executed"):
    assert a[k] == b[k], f"{k}: {a[k]} != {b[k]}"
for k in ("crash", "nan", "inconsistency", "unique"):
    assert a["bugs"][k] == b["bugs"][k], f"bugs.{k}: {a['bugs'][k]} != {b['bugs'][k]}"
PY
  (cd "$1" && { find bugs -mindepth 2 -maxdepth 2 -type d 2>/dev/null || true; } | sort) >"$tmp/bugs1"
  (cd "$2" && { find bugs -mindepth 2 -maxdepth 2 -type d 2>/dev/null || true; } | sort) >"$tmp/bugs2"
  cmp -s "$tmp/bugs1" "$tmp/bugs2" || fail "$2: other bugs than $1"
}
same_campaign "$tmp/whole" "$tmp/halves"

# Killed with SIGKILL after its first checkpoint, at a random moment, then resumed to its budget.
"$memo" run "${common[@]}" --iterations 4000 --out "$tmp/long" >/dev/null
"$memo" run "${common[@]}" --iterations 4000 --out "$tmp/killed" >/dev/null 2>&1 &
pid=$!
# Killed once its checkpoint holds some iterations (a worker that takes seconds to start, as
# PyTorch's, leaves the first checkpoint at none).
for _ in $(seq 300); do [[ -s "$tmp/killed/store.db" ]] && "$memo" stats --json "$tmp/killed" 2>/dev/null | python3 -c "
import json, sys; sys.exit(0 if json.load(sys.stdin)[0]['iterations'] > 0 else 1)" 2>/dev/null && break; sleep 0.1; done
sleep "$((RANDOM % 2)).$((RANDOM % 10))"
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [[ -f "$tmp/killed/stats.json" ]]; then
  echo "note: the campaign finished before it was killed"
else
  "$memo" stats "$tmp/killed" | grep "(stopped)" >/dev/null || fail "stats does not mark a stopped campaign"
  "$memo" stats --json "$tmp/killed" | python3 -c "
import json, sys
r = json.load(sys.stdin)[0]
assert not r['finished'] and r['iterations'] > 0 and not r['layer_type'].startswith('0/'), r" || fail "stats of a stopped campaign: no figures from its checkpoint"
fi
"$memo" run --resume "$tmp/killed" --quiet >/dev/null 2>&1 || [[ -f "$tmp/killed/stats.json" ]] || fail "resume after SIGKILL failed"
[[ -f "$tmp/killed/stats.json" ]] || fail "resumed campaign wrote no stats.json"
same_campaign "$tmp/long" "$tmp/killed"
# Killed after its last checkpoint, before its results: resuming writes them and runs nothing new.
rm "$tmp/killed/stats.json"
"$memo" run --resume "$tmp/killed" --quiet >/dev/null 2>&1 || fail "resuming a campaign killed while writing its results failed"
same_campaign "$tmp/long" "$tmp/killed"
"$memo" run --resume "$tmp/killed" >"$tmp/out" 2>&1 && fail "resuming a finished campaign with no budget should fail"
grep -q "whole budget" "$tmp/out" || fail "finished campaign: unclear error: $(cat "$tmp/out")"

python3 - "$tmp/whole/stats.json" <<'PY' || fail "first campaign ran nothing"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["memo"]["models_run"] > 5 and s["memo"]["hits"] == 0, s["memo"]
PY

"$memo" stats "$tmp/whole" "$tmp/halves" "$tmp/killed" >"$tmp/stats"
grep -q "memo hits" "$tmp/stats" || fail "stats table has no memo hits column"
[[ $(grep -c "$tmp/" "$tmp/stats") == 3 ]] || fail "stats: expected one row per campaign: $(cat "$tmp/stats")"
"$memo" stats --json "$tmp/halves" >"$tmp/stats.json"
python3 - "$tmp/stats.json" <<'PY' || fail "stats --json"
import json, sys
r = json.load(open(sys.argv[1]))[0]
for k in ("models", "unique_models", "executions", "memo_hits", "saved_seconds", "crash", "nan", "inconsistency", "shape",
          "divergences", "layer_type", "layer_pair", "layer_param", "layer_input", "store_bytes", "bytes_per_model"):
    assert k in r, k
assert r["models"] > 0 and 0 < r["unique_models"] <= r["models"] and r["executions"] > 0, r
assert r["store_bytes"] > 0 and r["bytes_per_model"] > 0, r
PY

# Replay: every stored execution again; deterministic backends give 0 divergences.
"$memo" replay "$tmp/whole" >"$tmp/replay" 2>&1 || fail "replay of the campaign: $(tail -3 "$tmp/replay")"
grep -q " 0 divergences" "$tmp/replay" || fail "replay: $(tail -2 "$tmp/replay")"
python3 - "$tmp/replay" <<'PY' || fail "replay replayed nothing"
import re, sys
m = re.search(r"(\d+) executions replayed", open(sys.argv[1]).read())
assert m and int(m.group(1)) > 10, m and m.group(0)
PY
[[ -f "$tmp/whole/divergences.json" ]] || fail "replay wrote no divergences.json"

# Errors: a file name and the cause, exit 1.
"$memo" run --resume "$tmp/nothing" >"$tmp/out" 2>&1 && fail "resume of a missing campaign succeeded"
grep -q "$tmp/nothing" "$tmp/out" || fail "resume error does not name the directory"
"$memo" run --resume "$tmp/whole" --seed 3 >"$tmp/out" 2>&1 && fail "resume with --seed succeeded"
grep -q -- "--seed" "$tmp/out" || fail "resume --seed: unclear error"
"$memo" run --backends reference --out "$tmp/whole" --iterations 5 >"$tmp/out" 2>&1 && fail "a second campaign in a campaign directory"
grep -q -- "--resume" "$tmp/out" || fail "existing campaign: the error does not point to --resume"
"$memo" replay "$tmp" >"$tmp/out" 2>&1 && fail "replay of a non-campaign directory succeeded"
grep -q "store.db" "$tmp/out" || fail "replay error does not say what is missing"
"$memo" stats "$tmp" >"$tmp/out" 2>&1 && fail "stats of a non-campaign directory succeeded"
echo "resume, kill and resume, stats and replay: ok"
