#!/bin/bash
# A stored bug's reproducer in PyTorch's own terms (memo-fuzz reproduce): with a fault planted in
# PyTorch's conv2d (tests/data/planted_library), a short campaign on reference and torch stores
# Conv2D bugs; for one of them reproduce writes repro/repro_torch.py and its .npz, a script that
# imports only PyTorch and numpy and exits 1 where the planted fault is, and 0 on the clean library.
set -euo pipefail
memo=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python=$(cd "$data/../.." && pwd)/.venv/bin/python
[[ -x $python ]] || fail "no $python (scripts/setup.sh makes it)"
planted=(env PYTHONPATH="$data/planted_library${PYTHONPATH:+:$PYTHONPATH}" MEMO_PLANTED_FAULT=torch-conv2d)

"${planted[@]}" "$memo" run --backends reference,torch --seconds 20 --seed 1 --quiet --out "$tmp/c" >"$tmp/run.out" 2>&1 ||
  fail "campaign exited $?: $(tail -3 "$tmp/run.out")"
bug=$(ls -d "$tmp"/c/bugs/inconsistency/Conv2D-*/ 2>/dev/null | head -1)
[[ -n $bug ]] || fail "the planted conv2d fault stored no Conv2D inconsistency: $(ls "$tmp"/c/bugs/*/ 2>/dev/null | tr '\n' ' ')"

"${planted[@]}" "$memo" reproduce "$bug" >"$tmp/repro.out" 2>&1 || fail "reproduce exited $?: $(cat "$tmp/repro.out")"
grep -q "torch: .*repro_torch.py: shows the fault (exit 1)" "$tmp/repro.out" || fail "reproduce did not say the script shows the fault: $(cat "$tmp/repro.out")"
script=$bug/repro/repro_torch.py
[[ -f $script && -f $bug/repro/repro_torch.npz ]] || fail "no $script and its .npz"
imports=$(grep -E '^(import|from) ' "$script" | awk '{print $2}' | cut -d. -f1 | sort -u | tr '\n' ' ')
[[ $imports == "functools math numpy sys torch " ]] || fail "the reproducer imports $imports"
! grep -qi "memo-fuzz\|import memo" "$script" || fail "the reproducer calls memo"

# Run alone, from its folder, as a maintainer would: the fault shows where it is planted only.
(cd "$bug/repro" && "${planted[@]}" "$python" repro_torch.py >"$tmp/planted.out" 2>&1) && fail "with the fault planted the script exits 0: $(cat "$tmp/planted.out")"
grep -q "largest difference" "$tmp/planted.out" || fail "with the fault planted the script printed no difference: $(tail -5 "$tmp/planted.out")"
(cd "$bug/repro" && "$python" repro_torch.py >"$tmp/clean.out" 2>&1) || fail "on the clean library the script exits $?: $(cat "$tmp/clean.out")"
echo "reproducer of $(basename "$bug"): exits 1 with the fault, 0 without ($(wc -l <"$script") lines)"
