#!/bin/bash
# TensorFlow.js: a campaign on the reference and tfjs' two kernel sets (cpu, wasm) runs most of its
# models on both, and every bug it stores is confirmed by replay.
. "$(dirname "$0")/lib/preamble.sh"

"$memo" run --backends reference,tfjs-cpu,tfjs-wasm --models 150 --seconds 300 --seed 3 --out "$tmp/t" --quiet >"$tmp/out" ||
  fail "campaign: $(tail -5 "$tmp/out")"
s="$tmp/t/stats.json"
python3 - "$s" <<'PY' || fail "tfjs ran too few models"
import json, sys
d = json.load(open(sys.argv[1]))
for b in ("tfjs-cpu", "tfjs-wasm"):
    e = d["executions"][b]
    ok = e["status"].get("ok", 0)
    print(f"{b}: {e['runs']} runs, {e['status']}")
    if ok < 0.5 * e["runs"] or ok < 50: sys.exit(1)
PY
n=0
for b in $(find "$tmp/t/bugs" -mindepth 2 -maxdepth 2 -type d -not -path '*/.tmp/*' 2>/dev/null); do
  status=$(json "$b/bug.json" "d.get('status', 'ok')")
  [[ $status == timeout || $status == memory ]] && continue  # depends on the machine's load
  "$memo" replay "$b" >"$tmp/replay" || fail "replay does not confirm $b: $(cat "$tmp/replay")"
  n=$((n + 1))
done
(( n > 0 )) || fail "no tfjs bug stored"
echo "$(json "$s" "d['models_executed']") models executed on reference, tfjs-cpu and tfjs-wasm; $n bugs, each confirmed by replay"
