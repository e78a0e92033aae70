#!/bin/bash
# memo-fuzz selftest: a short campaign against the planted faults prints one row per fault in its
# JSON, finds some of them, stores each under its right kind and layer, and raises no false alarm.
. "$(dirname "$0")/lib/preamble.sh"

"$memo" selftest --seconds 20 --json --out "$tmp/c" >"$tmp/out.json" 2>"$tmp/err" || fail "selftest exited $?: $(tail -3 "$tmp/err")"
python3 - "$tmp/out.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
faults = d["faults"]
assert len(faults) >= 10, f"{len(faults)} faults"
kinds = {f["kind"] for f in faults}
assert {"crash", "nan", "inconsistency", "timeout", "memory"} <= kinds, kinds
for f in faults:
    assert set(f) >= {"layer", "kind", "found", "right", "seconds"}, f
    assert f["found"] or f["seconds"] is None, f
found = [f for f in faults if f["found"]]
assert found, "no planted fault found in 20 s"
wrong = [f"{f['layer']} ({f['kind']}, stored as {f['stored_as']})" for f in found if not f["right"]]
assert not wrong, "stored under the wrong kind or layer: " + ", ".join(wrong)
assert d["false_alarms"] == 0, f"false alarms: {d['false_alarm_bugs']}"
print(f"selftest: {len(found)}/{len(faults)} found in 20 s, all under the right kind and layer, no false alarm")
PY
# Bad input is a clear error.
if "$memo" selftest --seconds abc >/dev/null 2>"$tmp/err"; then fail "--seconds abc accepted"; fi
grep -q "seconds" "$tmp/err" || fail "bad --seconds message: $(cat "$tmp/err")"
