#!/bin/bash
# The CUDA backend on a machine with a GPU: memo-cuda-tests' device tests (every claimed layer class
# against the reference in four dtypes, MEMO's reduced seeds, a worker that survives a planted
# illegal address), then a campaign on reference,cuda whose bugs are replayed.
# Usage: bench/cuda.sh [BIN_DIR (default build/bin)] [SECONDS (default 60)]
# Where the binaries were built on another machine, the GPU machine's own cuDNN and cuBLAS are
# looked for under /usr and /opt, and BIN_DIR/lib holds whatever else they need.
set -uo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
secs=${2:-60}
[[ -x $bin/memo-cuda-tests && -x $bin/memo-fuzz ]] || { echo "no memo-cuda-tests and memo-fuzz in $bin (configure with the CUDA toolkit)" >&2; exit 1; }
nvidia-smi -L || { echo "no GPU here (nvidia-smi)" >&2; exit 1; }
lib() { find /usr/local/cuda* /usr/lib /opt /usr/local/lib -name "$1" 2>/dev/null | head -1; }
for l in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13; do
  d=$(dirname "$(lib $l)" 2>/dev/null) && LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
done
export LD_LIBRARY_PATH=$bin/lib:${LD_LIBRARY_PATH:-}
out=$(mktemp -d)
echo "== device tests"
(cd "$bin" && ./memo-cuda-tests --gtest_filter='CudaWorker.*:CudaDevice.*') > "$out/tests.log" 2>&1
echo "memo-cuda-tests: exit $?"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |planted|nodes  max|claimed classes compared|^class |^[A-Z][A-Za-z0-9]+ +[0-9]+ +[0-9]+ " "$out/tests.log"
grep -A12 "Failure" "$out/tests.log" | head -60
echo "== a $secs s campaign on reference,cuda"
"$bin/memo-fuzz" run --backends reference,cuda --seconds "$secs" --seed 1 --out "$out/c" 2>&1 | tail -9
python3 - "$out/c/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["executions"]["cuda"]
print(f"{d['models_executed']} executed in {d['seconds']:.1f} s ({d['models_executed'] / d['seconds']:.1f}/s); cuda: {c['status']}, "
      f"{c['ms_mean']:.1f} ms a run, peak {c['peak_kb_max'] // 1024} MiB, {c['restarts']} restarts")
for r in c.get("declined", {}).get("reasons", [])[:8]:
    print(f"  declined {r['runs']:4d}: {r['reason']}")
PY
echo "== its bugs, replayed"
for b in "$out"/c/bugs/*/*/; do
  [[ -d $b ]] && echo "$(basename "$(dirname "$b")")/$(basename "$b"): $("$bin/memo-fuzz" replay "$b" 2>&1 | tail -1)"
done
echo "(the campaign is in $out/c)"
