#!/bin/bash
# Graph pairs, what they cost and give: default campaigns of two memo-fuzz builds (or two sets of
# options), one after the other for each seed, each for S seconds; prints executed models per
# second (and against the first, the peer), MEMO's connectable pairs and layer pairs executed, the
# connectable graph pairs executed (where the build counts them), and the distinct
# producer-consumer class pairs of the queued models (queue/: counted the same for any build).
# Usage: bench/graph_pairs.sh SECONDS "SEEDS" "MEMO_FUZZ [OPTIONS]" "MEMO_FUZZ [OPTIONS]"...   e.g.
#   bench/graph_pairs.sh 60 "1 2 3" "/tmp/before/memo-fuzz" "build/bin/memo-fuzz" "build/bin/memo-fuzz --coverage memo"
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: bench/graph_pairs.sh SECONDS \"SEEDS\" \"MEMO_FUZZ [OPTIONS]\"..." >&2; exit 2; }
secs=$1
seeds=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $seeds; do
  k=0
  for cmd in "$@"; do
    # shellcheck disable=SC2086  # the command and its options are words
    $cmd run --seconds "$secs" --seed "$s" --quiet --out "$tmp/$k-$s" >/dev/null 2>&1 || { echo "campaign '$cmd' seed $s failed" >&2; exit 1; }
    echo "$cmd" >"$tmp/$k-$s/command"
    k=$((k + 1))
  done
done
python3 - "$tmp" "$#" "$seeds" <<'PY'
import glob, json, os, sys
tmp, n, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

def queued_pairs(d):
    seen = set()
    for f in glob.glob(os.path.join(d, "queue", "*.json")):
        nodes = json.load(open(f))["nodes"]
        for node in nodes:
            for i in node.get("inputs", []):
                seen.add((nodes[i]["layer"], node["layer"]))
    return len(seen)

print("| build and options | seed | executed | executed/s | vs first | MEMO's connectable pairs | layer pairs | graph pairs connectable | queued graph pairs |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in range(n):
    for s in seeds:
        d = os.path.join(tmp, f"{k}-{s}")
        st = json.load(open(os.path.join(d, "stats.json")))
        ce = st["coverage_executed"]
        rate = st["models_executed"] / st["seconds"]
        peer = json.load(open(os.path.join(tmp, f"0-{s}", "stats.json")))
        first = peer["models_executed"] / peer["seconds"]
        lp = ce["layer_pair_connectable"]
        g = ce.get("graph_pair_connectable")
        graph = f"{g['covered']}/{g['total']} ({100 * g['covered'] / g['total']:.1f} %)" if g else "-"
        cmd = open(os.path.join(d, "command")).read().strip()
        print(f"| `{cmd}` | {s} | {st['models_executed']} | {rate:.1f} | {rate / first:.2f} | {lp['covered']}/{lp['total']} "
              f"({100 * lp['covered'] / lp['total']:.1f} %) | {ce['layer_pair']['covered']} | {graph} | {queued_pairs(d)} |")
PY
