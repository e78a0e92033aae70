#!/bin/bash
# ONNX: export-onnx (checked by ONNX's checker, here and independently by python3-onnx), import-onnx,
# .onnx seeds, clear errors for bad files, and the property campaign: 1,000 generated models run on
# the reference and ONNX Runtime, every one exported and checked, every bug stored with model.onnx
# and confirmed by replay.
. "$(dirname "$0")/lib/preamble.sh"

if ! "$memo" export-onnx --help >"$tmp/help" 2>&1; then
  echo "memo-fuzz was built without ONNX: nothing to test"
  exit 0
fi
grep -q -- "--batch" "$tmp/help" || fail "export-onnx --help"
"$memo" import-onnx --help | grep -- "--json" >/dev/null || fail "import-onnx --help"

# Every one of MEMO's seed models exports; ONNX's own Python checker (full_check) agrees.
mkdir -p "$tmp/onnx"
for f in "$data"/memo/synthesized_models/*.json; do
  out="$tmp/onnx/$(basename "$f" .json).onnx"
  "$memo" export-onnx "$f" "$out" >"$tmp/log" || fail "export-onnx $f: $(cat "$tmp/log")"
  grep -q "shape inference agree" "$tmp/log" || fail "export-onnx reports its checks"
done
if /usr/bin/python3 -c "import onnx" 2>/dev/null; then
  for f in "$tmp"/onnx/*.onnx; do
    /usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.checker.check_model(m, full_check=True)" "$f" ||
      fail "python3-onnx rejects $f"
  done
fi

# Import gives back a model memo can run; .onnx files seed a campaign.
# --json prints the summary import-keras --json prints; --out writes the model itself.
"$memo" import-onnx "$tmp/onnx/lenet5-mnist_orig-simplified.onnx" --json --out "$tmp/lenet.json" >"$tmp/summary.json"
[[ $(json "$tmp/lenet.json" "d['format']") == memo.model ]] || fail "import-onnx --out"
[[ $(json "$tmp/summary.json" "sorted(d.keys())") == "['coverage', 'file', 'hash', 'inputs', 'layers', 'outputs']" ]] || fail "import-onnx --json keys: $(cat "$tmp/summary.json")"
[[ $(json "$tmp/summary.json" "int(d['coverage']['layer_type']['covered'] > 3)") == 1 ]] || fail "import-onnx --json coverage"
"$memo" run-model "$tmp/onnx/lenet5-mnist_orig-simplified.onnx" --backends reference,ort >"$tmp/one"
grep -q "^verdict: none" "$tmp/one" || fail "reference and ort disagree on LeNet-5: $(cat "$tmp/one")"
"$memo" run --backends none --seeds "$tmp/onnx" --seconds 2 --out "$tmp/g" --quiet >/dev/null || fail "run --seeds with .onnx files"

# Bad files: a non-zero exit and a message naming the file and the cause.
head -c 300 "$tmp/onnx/lenet5-mnist_orig-simplified.onnx" >"$tmp/cut.onnx"
if "$memo" import-onnx "$tmp/cut.onnx" 2>"$tmp/err" >/dev/null; then fail "a truncated file imported"; fi
grep -q "cut.onnx" "$tmp/err" || fail "error names the file: $(cat "$tmp/err")"
if "$memo" export-onnx "$tmp/missing.json" "$tmp/x.onnx" 2>"$tmp/err" >/dev/null; then fail "a missing model exported"; fi
grep -q "missing.json" "$tmp/err" || fail "error names the missing file: $(cat "$tmp/err")"

# Both optimisation levels of ONNX Runtime as two backends.
"$memo" run --backends ort,ort-opt --seconds 5 --seed 3 --out "$tmp/o" --quiet >/dev/null
[[ $(json "$tmp/o/stats.json" "int(d['executions']['ort-opt']['runs'] > 0)") == 1 ]] || fail "ort-opt ran nothing"

# The property campaign: 1,000 generated models on the reference and ONNX Runtime.
"$memo" run --backends reference,ort --models 1000 --seconds 600 --seed 7 --out "$tmp/p" --quiet >"$tmp/out"
s="$tmp/p/stats.json"
executed=$(json "$s" "d['models_executed']")
(( executed >= 1000 )) || fail "only $executed models executed"
python3 - "$s" "$tmp/p/bugs" <<'EOF' || fail "ONNX checks: shape or invalid results without a stored bug"
import json, os, sys
d = json.load(open(sys.argv[1]))
ort = d["executions"]["ort"]["status"]
invalid = ort.get("invalid", 0)
stored = sum(len(os.listdir(os.path.join(sys.argv[2], "shape"))) for _ in [0]) if os.path.isdir(os.path.join(sys.argv[2], "shape")) else 0
print(f"ort: {ort}; shape bugs stored: {stored}")
sys.exit(0 if invalid == 0 or stored > 0 else 1)
EOF
for b in $(find "$tmp/p/bugs" -mindepth 2 -maxdepth 2 -type d -not -path '*/.tmp/*'); do
  [[ -f $b/model.onnx && -f $b/minimal.onnx ]] || fail "no model.onnx in $b"
  # A time-out or memory verdict depends on the machine's load: stored, but not replayed here.
  status=$(json "$b/bug.json" "d.get('status', 'ok')")
  if [[ $status == timeout || $status == memory ]]; then
    echo "not replayed ($status): $b"
    continue
  fi
  "$memo" replay "$b" >"$tmp/replay" || fail "replay does not confirm $b: $(cat "$tmp/replay")"
done
echo "$executed models executed on reference and ort; $(find "$tmp/p/bugs" -mindepth 2 -maxdepth 2 -type d -not -path '*/.tmp/*' | wc -l) bugs, each confirmed by replay"

# A fault of ONNX Runtime's graph optimisations (PadFusion folds a zero Pad into MaxPool's pads,
# which act as -inf: docs/findings.md) shows in no layer alone: it is a verdict of the rewritten
# graph on ort-opt, named by the layer its model ends with, and none on ort.
"$memo" run-model "$data/findings/ort-pad-fusion-maxpool-zero-pad.json" --backends reference,ort,ort-opt --inputs uniform --input-range -2,-1 >"$tmp/pad" 2>&1 ||
  fail "run-model of the PadFusion model: $(tail -1 "$tmp/pad")"
grep -q "^verdict: inconsistency on ort-opt " "$tmp/pad" || fail "PadFusion's fault is not a verdict on ort-opt: $(cat "$tmp/pad")"
grep -q "the rewritten graph differs" "$tmp/pad" || fail "PadFusion's fault is not the rewritten graph's: $(cat "$tmp/pad")"
grep -q "signature: MaxPooling2D-" "$tmp/pad" || fail "PadFusion's fault is not named by its last layer: $(cat "$tmp/pad")"
echo "ort-opt's PadFusion fault: a verdict of the rewritten graph"
