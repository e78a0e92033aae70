# What every CLI test starts with, sourced as `. "$(dirname "$0")/lib/preamble.sh"` by a script run
# as `bash tests/cli/<name>.sh <path to memo-fuzz> <tests/data dir>`: strict mode, $memo and $data,
# a scratch directory $tmp removed on exit, and two helpers.
set -euo pipefail
memo=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fail MESSAGE: the test fails, saying why.
fail() { echo "FAIL: $*"; exit 1; }
# json FILE EXPR: prints the Python expression EXPR over d, FILE's JSON.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
