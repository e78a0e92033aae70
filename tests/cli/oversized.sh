#!/bin/bash
# A valid model far too large for the machine is refused before any tensor of it exists: a clear
# error naming the node and its element count, a non-zero exit, and memo-fuzz itself stays small.
# The same for replay, for a campaign's seeds, and for bad model files (which key is missing).
. "$(dirname "$0")/lib/preamble.sh"

# Input 4000x4000x64 into a Conv2D of 512 filters: 131 GB of float64 values at 2 samples.
cat >"$tmp/big.json" <<'JSON'
{"format":"memo.model","outputs":[1],"nodes":[{"dtype":"float32","inputs":[],"layer":"InputLayer","name":"i","params":{"dtype":"float32","shape":[4000,4000,64]},"shape":[null,4000,4000,64]},{"dtype":"float32","inputs":[0],"layer":"Conv2D","name":"c","params":{"filters":512,"kernel_size":[7,7],"padding":"same"},"shape":[null,4000,4000,512]}]}
JSON
# Peak resident memory of the memo-fuzz process itself (KiB), from its exit status via Python.
peak() {  # peak OUT ERR ARGS...: runs memo-fuzz, prints "rc peak_kb"
  local out=$1 err=$2; shift 2
  python3 - "$out" "$err" "$memo" "$@" <<'PY'
import resource, subprocess, sys
out, err = open(sys.argv[1], "w"), open(sys.argv[2], "w")
rc = subprocess.run(sys.argv[3:], stdout=out, stderr=err, timeout=120).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
read -r rc kb < <(peak "$tmp/out" "$tmp/err" run-model "$tmp/big.json" --memory-mb 2048)
[[ $rc != 0 ]] || fail "an oversized model ran (exit 0)"
grep -q "big.json" "$tmp/err" && grep -q "node 0 (InputLayer" "$tmp/err" && grep -q "2048000000 elements" "$tmp/err" && grep -q "2048 MiB" "$tmp/err" ||
  fail "the error does not name the file, the node, its element count and the budget: $(cat "$tmp/err")"
(( kb < 400000 )) || fail "memo-fuzz reached $kb KiB on a model it refused"
echo "run-model refused it (exit $rc), memo-fuzz peak $kb KiB: $(cat "$tmp/err")"

# A smaller model that fits the default budget but not --memory-mb 64: refused by the budget given.
python3 - "$tmp/big.json" "$tmp/mid.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["nodes"][0]["params"]["shape"] = [400, 400, 16]; m["nodes"][0]["shape"] = [None, 400, 400, 16]
m["nodes"][1]["params"]["filters"] = 16; m["nodes"][1]["shape"] = [None, 400, 400, 16]
json.dump(m, open(sys.argv[2], "w"))
PY
if "$memo" run-model "$tmp/mid.json" --backends reference --memory-mb 64 >/dev/null 2>"$tmp/err"; then fail "a model over --memory-mb 64 ran"; fi
grep -q "over the budget of 64 MiB" "$tmp/err" || fail "budget message: $(cat "$tmp/err")"

# A bug directory whose model is too large: replay refuses it the same way.
mkdir -p "$tmp/bug"
cp "$tmp/big.json" "$tmp/bug/minimal.json"
echo '{"kind":"crash","culprits":["reference"],"backends":["reference"],"inputs":{"samples":2}}' >"$tmp/bug/bug.json"
if "$memo" replay "$tmp/bug" --memory-mb 2048 >/dev/null 2>"$tmp/err"; then fail "replay ran an oversized model"; fi
grep -q "too large to run" "$tmp/err" || fail "replay message: $(cat "$tmp/err")"

# A campaign whose seed is too large stops before it starts, naming the seed.
mkdir -p "$tmp/seeds"
cp "$tmp/mid.json" "$tmp/seeds/"
if "$memo" run --seeds "$tmp/seeds" --backends reference --seconds 5 --memory-mb 64 --full-size --out "$tmp/c" >/dev/null 2>"$tmp/err"; then
  fail "a campaign ran an oversized seed"
fi
grep -q "seed 0 of --seeds" "$tmp/err" || fail "campaign message: $(cat "$tmp/err")"

# A memo JSON without "outputs": the file, the key and what it should hold.
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); del m['outputs']; json.dump(m, open(sys.argv[2], 'w'))" "$tmp/mid.json" "$tmp/noout.json"
if "$memo" run-model "$tmp/noout.json" >/dev/null 2>"$tmp/err"; then fail "a model without outputs ran"; fi
grep -q 'noout.json: missing key "outputs", which should hold the indices of the model' "$tmp/err" || fail "missing key message: $(cat "$tmp/err")"
echo "oversized ok"
