#!/bin/bash
# End-to-end execution throughput: campaigns on reference + torch (or the backends given), run one
# after another in this invocation, each for S seconds:
#   default   two lanes (two models in flight), small tensors (the default campaign)
#   one-lane  the peer: one model in flight at a time
#   full-size the peer: seeds at their own sizes, no cost limit
# prints executed models per second, coverage, bugs, and each run's ratio to the one-lane peer.
# Usage: bench/execution_race.sh [SECONDS (default 60)] [BACKENDS (default: memo-fuzz's)]
set -euo pipefail
secs=${1:-60}
backends=${2:-}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # name, extra options...
  local name=$1; shift
  "$memo" run ${backends:+--backends "$backends"} --seconds "$secs" --seed 11 --quiet --out "$tmp/$name" "$@" >/dev/null
}
run default
run one-lane --lanes 1
run full-size --full-size
python3 - "$tmp" <<'PY'
import json, sys, os
rows = []
for name in ["default", "one-lane", "full-size"]:
    d = json.load(open(os.path.join(sys.argv[1], name, "stats.json")))
    c, e, b = d["coverage"], d["coverage_executed"], d["bugs"]
    rows.append((name, d["models_executed"] / d["seconds"], d["models_per_second"], c["layer_pair"]["covered"], e["layer_pair"]["covered"],
                 c["layer_param"]["covered"], 100.0 * c["layer_input"]["covered"] / c["layer_input"]["total"], b["unique"], ",".join(d["backends"])))
peer = rows[1][1]
print("| run | executed/s | vs one-lane | generated/s | pairs | pairs executed | params | inputs % | unique bugs | backends |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]:.1f} | {r[1] / max(peer, 1e-9):.2f} | {r[2]:.0f} | {r[3]} | {r[4]} | {r[5]} | {r[6]:.1f} | {r[7]} | {r[8]} |")
print("MEMO (6 h, Keras): about 24.3 s per model (0.04 models/s); 846 pairs, 1028 parameter values, 69.7 % inputs")
PY
