#!/bin/bash
# memo-fuzz reduce: the zoo's ten seeds reduced with their coverage kept, the JSON keys, the
# table, --out, model files in both formats, and clear errors on bad input.
. "$(dirname "$0")/lib/preamble.sh"

"$memo" reduce --help >"$tmp/help"
grep -q "usage: memo-fuzz reduce" "$tmp/help" || fail "reduce --help"
grep -q -- "--zoo" "$tmp/help" || fail "reduce --help does not describe --zoo"
"$memo" --help >"$tmp/help"
grep -q "reduce" "$tmp/help" || fail "top-level --help does not list reduce"

"$memo" reduce --zoo all --json >"$tmp/zoo.json" || fail "reduce --zoo all --json failed"
python3 - "$tmp/zoo.json" <<'PY' || fail "reduce --zoo all --json: see above"
import json, sys
rows = json.load(open(sys.argv[1]))
keys = {"name", "layers_before", "layers_after", "weights_before", "weights_after",
        "flops_before", "flops_after", "ms", "coverage_preserved"}
assert isinstance(rows, list) and len(rows) == 10, f"expected 10 rows, got {rows!r:.200}"
for r in rows:
    assert set(r) == keys, f"keys {sorted(r)}"
    assert r["coverage_preserved"] is True, f"{r['name']}: coverage not preserved"
    assert 0 < r["layers_after"] <= r["layers_before"], r
    assert r["ms"] >= 0, r
    for k in ("layers_before", "layers_after", "weights_before", "weights_after", "flops_before", "flops_after"):
        assert isinstance(r[k], int), (k, r)
names = [r["name"] for r in rows]
assert names[0] == "lenet5-mnist" and "inception.resnet.v2-imagenet" in names, names
assert max(r["layers_before"] for r in rows) == 782
avg = sum(r["layers_after"] for r in rows) / len(rows)
assert avg <= 11.0, f"average {avg} layers after reduction"
PY

# The table: a header, one row per model and an average row.
"$memo" reduce --zoo resnet50-imagenet >"$tmp/table"
grep -q "layers_before" "$tmp/table" || fail "table header"
grep -q "^resnet50-imagenet" "$tmp/table" || fail "table row"
grep -q "^average" "$tmp/table" || fail "table average row"

# --out writes both formats; each reads back and reduces to itself with its coverage kept.
"$memo" reduce --zoo lenet5-mnist --out "$tmp/out" >/dev/null
[[ -f "$tmp/out/lenet5-mnist.json" ]] || fail "--out: no lenet5-mnist.json"
[[ -f "$tmp/out/lenet5-mnist.keras.json" ]] || fail "--out: no lenet5-mnist.keras.json"
"$memo" reduce "$tmp/out/lenet5-mnist.json" "$tmp/out/lenet5-mnist.keras.json" --json >"$tmp/files.json"
python3 - "$tmp/files.json" <<'PY' || fail "reduce FILE...: see above"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["name"] for r in rows] == ["lenet5-mnist", "lenet5-mnist_2"], rows
assert all(r["coverage_preserved"] is True for r in rows), rows
assert rows[0]["layers_before"] == rows[1]["layers_before"], rows
PY

# A Keras file of MEMO's seeds.
"$memo" reduce "$data/memo/synthesized_models/resnet50-imagenet_orig-simplified.json" --json >"$tmp/seed.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r['coverage_preserved'] is True and r['layers_after'] <= r['layers_before'], r" "$tmp/seed.json" \
  || fail "reduce of a MEMO seed file"

# Bad input: a non-zero exit and a message naming what is wrong.
if "$memo" reduce "$tmp/missing.json" 2>"$tmp/err" >/dev/null; then fail "missing file accepted"; fi
grep -q "missing.json" "$tmp/err" || fail "missing-file error does not name the file"
if "$memo" reduce --zoo no-such-model 2>"$tmp/err" >/dev/null; then fail "unknown zoo name accepted"; fi
grep -q "no-such-model" "$tmp/err" || fail "unknown-zoo error does not name the model"
echo '{"not": "a model"}' >"$tmp/bad.json"
if "$memo" reduce "$tmp/bad.json" 2>"$tmp/err" >/dev/null; then fail "malformed model accepted"; fi
grep -q "bad.json" "$tmp/err" || fail "malformed-model error does not name the file"
if "$memo" reduce 2>"$tmp/err" >/dev/null; then fail "no input accepted"; fi
if "$memo" reduce --zoo all --bogus 2>"$tmp/err" >/dev/null; then fail "unknown option accepted"; fi
grep -q -- "--bogus" "$tmp/err" || fail "unknown-option error does not name it"
echo "ok"
