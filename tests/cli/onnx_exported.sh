#!/bin/bash
# ONNX files as PyTorch's exporter writes them (tests/data/onnx/export_models.py, Debian's
# python3-torchvision, random weights): seven torchvision families and a GRU and a stacked LSTM
# with zero initial states. Each imports with its weights, computes on the reference what ONNX
# Runtime computes on the file (import-onnx --check: same inputs, 1e-3 of the largest output), and
# reduces with its coverage preserved.
. "$(dirname "$0")/lib/preamble.sh"

if ! "$memo" import-onnx --help >/dev/null 2>&1; then
  echo "memo-fuzz was built without ONNX: nothing to test"
  exit 0
fi
/usr/bin/python3 -c "import torchvision" 2>/dev/null || fail "python3-torchvision is not installed (scripts/setup.sh installs it)"
/usr/bin/python3 "$data/onnx/export_models.py" "$tmp/onnx" >"$tmp/export.log" 2>&1 || fail "export: $(tail -3 "$tmp/export.log")"
n=0
for f in "$tmp"/onnx/*.onnx; do
  name=$(basename "$f" .onnx)
  "$memo" import-onnx "$f" --out "$tmp/$name.json" --check >"$tmp/out" 2>"$tmp/err" \
    || fail "$name does not import, or differs from ONNX Runtime on the file: $(cat "$tmp/err") $(grep -E 'output|inexact' "$tmp/out")"
  grep -q "^exact:" "$tmp/out" || fail "$name imports inexactly: $(grep inexact "$tmp/out")"
  diff=$(grep -o "largest difference [^ ]* against ONNX Runtime's largest value [^ ]*" "$tmp/out" | head -1)
  "$memo" reduce "$tmp/$name.json" >"$tmp/reduced" 2>&1 || fail "$name does not reduce: $(tail -3 "$tmp/reduced")"
  row=$(grep "^$name " "$tmp/reduced") || fail "$name: no row in reduce's table"
  [[ $(awk '{print $NF}' <<<"$row") == true ]] || fail "$name: coverage not preserved: $row"
  echo "$row" | awk -v d="$diff" '{printf "%-20s %5d layers, reduced to %3d; %s\n", $1, $2, $3, d}'
  n=$((n + 1))
done
(( n == 9 )) || fail "exported $n models, expected 9"
echo "$n exported models imported with their weights, within tolerance of ONNX Runtime on the file, and reduced with their coverage preserved"
