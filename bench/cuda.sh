#!/bin/bash
# The CUDA backend on a machine with a GPU: memo-cuda-tests' device tests (every claimed layer class
# against the reference in four dtypes, MEMO's reduced seeds, a worker that survives a planted
# illegal address), then campaigns whose bugs are replayed: the CPU libraries against cuda
# (reference,torch,cuda unless BACKENDS says otherwise), and cuda-tf32 beside cuda.
# Usage: bench/cuda.sh [BIN_DIR (default build/bin)] [SECONDS (default 60)] [BACKENDS]
# Where the binaries were built on another machine, the GPU machine's own cuDNN and cuBLAS are
# looked for under /usr and /opt, and BIN_DIR/lib holds whatever else they need.
set -uo pipefail
bin=$(cd "${1:-build/bin}" && pwd)
secs=${2:-60}
[[ -x $bin/memo-cuda-tests && -x $bin/memo-fuzz && -x $bin/memo-cuda-worker ]] || { echo "no memo-cuda-tests, memo-fuzz and memo-cuda-worker in $bin (configure with the CUDA toolkit)" >&2; exit 1; }
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
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |planted|out of device memory|tf32 on inputs|nodes  max|claimed classes compared|^class |^[A-Z][A-Za-z0-9]+ +[0-9]+ +[0-9]+ " "$out/tests.log"
grep -A12 "Failure" "$out/tests.log" | head -60
# Campaigns: the CPU libraries against the GPU, then cuda-tf32 (TF32 maths) beside cuda; each one's
# bugs replayed from their directories.
for backends in "${3:-reference,torch,cuda}" reference,cuda,cuda-tf32; do
  c="$out/$(echo "$backends" | tr , -)"
  echo "== a $secs s campaign on $backends"
  "$bin/memo-fuzz" run --backends "$backends" --seconds "$secs" --seed 1 --out "$c" 2>&1 | tail -9
  python3 - "$c/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{d['models_executed']} executed in {d['seconds']:.1f} s ({d['models_executed'] / d['seconds']:.1f}/s)")
for name, c in d["executions"].items():
    if not name.startswith("cuda"):
        continue
    print(f"{name}: {c['status']}, {c['ms_mean']:.1f} ms a run, peak {c['peak_kb_max'] // 1024} MiB, {c['restarts']} restarts")
    for r in c.get("declined", {}).get("reasons", [])[:8]:
        print(f"  declined {r['runs']:4d}: {r['reason']}")
PY
  echo "-- its bugs, replayed"
  for b in "$c"/bugs/*/*/; do
    [[ -d $b ]] && echo "$(basename "$(dirname "$b")")/$(basename "$b"): $("$bin/memo-fuzz" replay "$b" 2>&1 | tail -1)"
  done
done
echo "(the campaigns are in $out)"
