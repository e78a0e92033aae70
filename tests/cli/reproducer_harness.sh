#!/bin/bash
# A reproducer exits 1 while its fault shows, and Python and Node exit 1 on an error nobody catches
# too: the runners of the workers' reproducers (tools/reproducing.py, tools/reproducing.js) tell
# the two apart, so that a script that fails on its own (a layer it cannot build) is never called
# a bug shown.
set -euo pipefail
data=$2
root=$(cd "$data/../.." && pwd)
python=$root/.venv/bin/python
[[ -x $python ]] || python=python3
fail() { echo "FAIL: $*"; exit 1; }
printf 'import sys\nprint("differs")\nsys.exit(1)\n' >shows.py
printf 'print("the model runs")\n' >passes.py
printf 'raise ValueError("No such layer: conv2d")\n' >breaks.py
printf 'console.log("differs");\nprocess.exit(1);\n' >shows.js
printf 'console.log("the model runs");\n' >passes.js
printf 'throw new Error("No such layer: conv2d");\n' >breaks.js
printf '(async () => { await null; throw new Error("late"); })();\n' >breaks_later.js
said_py() { local f=$PWD/$1; (cd "$root/tools" && "$python" -c 'import reproducing, sys; print(reproducing.run(sys.argv[1]))' "$f"); }
said_js() { node -e 'console.log(require(process.argv[1]).run(process.argv[2], ""))' "$root/tools/reproducing.js" "$PWD/$1"; }
for lang in py js; do
  s=$(said_$lang shows.$lang)
  [[ $s == "shows the fault (exit 1): differs" ]] || fail "shows.$lang: $s"
  s=$(said_$lang passes.$lang)
  [[ $s == "does not show the fault (exit 0): the model runs" ]] || fail "passes.$lang: $s"
  s=$(said_$lang breaks.$lang)
  [[ $s == "fails (exit 2): "*"No such layer: conv2d" ]] || fail "breaks.$lang: $s"
done
s=$(said_js breaks_later.js)
[[ $s == "fails (exit 2): Error: late" ]] || fail "breaks_later.js: $s"
echo "reproducer runners: a fault shown (exit 1), none (exit 0), the script's own failure (exit 2) told apart"
