#!/bin/bash
# ONNX files as PyTorch's exporter writes them (tests/data/onnx/export_models.py, Debian's
# python3-torchvision, random weights): seven torchvision families and a GRU and a stacked LSTM
# with zero initial states. Each imports, and reduces with its coverage preserved.
set -euo pipefail
memo=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! "$memo" import-onnx --help >/dev/null 2>&1; then
  echo "memo-fuzz was built without ONNX: nothing to test"
  exit 0
fi
/usr/bin/python3 -c "import torchvision" 2>/dev/null || fail "python3-torchvision is not installed (scripts/setup.sh installs it)"
/usr/bin/python3 "$data/onnx/export_models.py" "$tmp/onnx" >"$tmp/export.log" 2>&1 || fail "export: $(tail -3 "$tmp/export.log")"
n=0
for f in "$tmp"/onnx/*.onnx; do
  name=$(basename "$f" .onnx)
  "$memo" import-onnx "$f" --out "$tmp/$name.json" >/dev/null 2>"$tmp/err" || fail "$name does not import: $(cat "$tmp/err")"
  "$memo" reduce "$tmp/$name.json" >"$tmp/reduced" 2>&1 || fail "$name does not reduce: $(tail -3 "$tmp/reduced")"
  row=$(grep "^$name " "$tmp/reduced") || fail "$name: no row in reduce's table"
  [[ $(awk '{print $NF}' <<<"$row") == true ]] || fail "$name: coverage not preserved: $row"
  echo "$row" | awk '{printf "%-20s %5d layers, reduced to %3d\n", $1, $2, $3}'
  n=$((n + 1))
done
(( n == 9 )) || fail "exported $n models, expected 9"
echo "$n exported models imported and reduced with their coverage preserved"
