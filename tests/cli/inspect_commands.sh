#!/bin/bash
# memo-fuzz layers / universe / import-keras / export-keras / --help, and clear errors on bad input.
. "$(dirname "$0")/lib/preamble.sh"

# Output goes to a file before grep: with pipefail, grep -q closing the pipe early would fail the writer.
"$memo" --help >"$tmp/help"
grep -q "import-keras" "$tmp/help" || fail "top-level --help does not list import-keras"
for c in layers universe import-keras export-keras demo; do
  "$memo" "$c" --help >"$tmp/help"
  grep -q "usage: memo-fuzz $c" "$tmp/help" || fail "$c --help"
done

"$memo" layers --json >"$tmp/layers.json"
[[ $(json "$tmp/layers.json" "len(d)") -ge 69 ]] || fail "layers --json lists too few layers"
[[ $(json "$tmp/layers.json" "sum(1 for l in d if l['in_universe'])") == 67 ]] || fail "layers: 67 in the universe"
"$memo" layers >"$tmp/table"
grep -q "Conv2DTranspose" "$tmp/table" || fail "layers table"

"$memo" universe --json >"$tmp/u.json"
[[ $(json "$tmp/u.json" "d['layer_type']['total']") == 67 ]] || fail "universe layer_type"
[[ $(json "$tmp/u.json" "d['layer_pair']['total']") == 4489 ]] || fail "universe layer_pair"

seed="$data/memo/synthesized_models/lenet5-mnist_orig-simplified.json"
"$memo" import-keras "$seed" --json --save "$tmp/lenet.json" >"$tmp/imp.json"
[[ $(json "$tmp/imp.json" "d['layers']") == 12 ]] || fail "lenet5 has 12 layers"
[[ $(json "$tmp/imp.json" "d['coverage']['layer_type']['total']") == 67 ]] || fail "import-keras coverage totals"
[[ $(json "$tmp/imp.json" "d['coverage']['layer_type']['covered']") -gt 0 ]] || fail "import-keras covers something"
"$memo" export-keras "$tmp/lenet.json" "$tmp/lenet-keras.json" >/dev/null
"$memo" import-keras "$tmp/lenet-keras.json" --json >"$tmp/imp2.json"
[[ $(json "$tmp/imp.json" "d['hash']") == $(json "$tmp/imp2.json" "d['hash']") ]] || fail "export/import changes the structural hash"

# Bad input: a non-zero exit and a message naming the file and the cause.
if "$memo" import-keras "$tmp/missing.json" 2>"$tmp/err"; then fail "missing file accepted"; fi
grep -q "missing.json" "$tmp/err" || fail "missing-file error does not name the file"
echo '{"class_name": "Functional", "config": {' >"$tmp/broken.json"
if "$memo" import-keras "$tmp/broken.json" 2>"$tmp/err"; then fail "malformed file accepted"; fi
grep -q "broken.json" "$tmp/err" || fail "malformed-file error does not name the file"
sed 's/"class_name": "Flatten"/"class_name": "Flattenish"/' "$seed" >"$tmp/unknown.json"
if "$memo" import-keras "$tmp/unknown.json" 2>"$tmp/err"; then fail "unknown class accepted"; fi
grep -q "Flattenish" "$tmp/err" || fail "unknown-class error does not name the class"
if "$memo" layers --jsno 2>"$tmp/err"; then fail "unknown option accepted"; fi
grep -q "jsno" "$tmp/err" || fail "unknown-option error"
if "$memo" frobnicate 2>/dev/null; then fail "unknown command accepted"; fi
echo "inspect commands ok"
