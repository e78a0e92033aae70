#!/bin/bash
# Scale-out: the same campaign over 1 and then 2 MPI ranks on this machine, in this invocation, each
# for S seconds, alternating for R rounds (timings on a shared machine vary from run to run: the
# ratio is each round's, and the table gives the medians); once generating only (--backends none:
# the search alone, one core per rank) and once with every model run on the backends (workers
# beside each rank). Prints models generated and executed per second, the 2-rank runs' throughput
# ratio to the 1-rank peers, the coverage reached, and what the exchanges moved.
# Usage: bench/mpi_scaling.sh [SECONDS (default 60)] [BACKENDS (default reference)] [ROUNDS (default 3)]
set -euo pipefail
secs=${1:-60}
backends=${2:-reference}
rounds=${3:-3}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
[[ -x $memo ]] || { echo "no $memo: run make build first" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "no mpirun: install openmpi-bin (scripts/setup.sh does)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_warn_on_fork=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in none "$backends"; do
  for round in $(seq "$rounds"); do
    for n in 1 2; do
      echo "[$b, round $round/$rounds, $n rank(s), ${secs} s]" >&2
      mpirun --oversubscribe -np "$n" "$memo" run --mpi --backends "$b" --seconds "$secs" --seed 11 --quiet --out "$tmp/$b-$round-$n" >/dev/null
    done
  done
done
python3 - "$tmp" "$rounds" none "$backends" <<'PY'
import json, os, statistics, sys
tmp, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| backends | ranks | generated/s | vs 1 rank | executed/s | vs 1 rank | types | pairs | params | inputs | exchanges | KB sent per exchange per rank | coverage bytes per rank | s in exchanges per rank |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for b in configs:
    rows = {1: [], 2: []}
    for r in range(1, rounds + 1):
        for n in (1, 2):
            rows[n].append(json.load(open(os.path.join(tmp, f"{b}-{r}-{n}", "stats.json"))))
    gen = {n: [d["models_generated"] / d["seconds"] for d in rows[n]] for n in (1, 2)}
    ex = {n: [d.get("models_executed", 0) / d["seconds"] for d in rows[n]] for n in (1, 2)}
    for n in (1, 2):
        med = lambda f: statistics.median(f(d) for d in rows[n])
        g_ratio = statistics.median(gen[n][i] / gen[1][i] for i in range(rounds))
        e_ratio = statistics.median(ex[n][i] / ex[1][i] for i in range(rounds)) if ex[1][0] else 0
        cov = lambda k: med(lambda d: d["coverage"][k]["covered"])
        x = lambda d: d["cluster"]
        print(f"| {b} | {n} | {statistics.median(gen[n]):.0f} | {g_ratio:.2f} | {statistics.median(ex[n]):.1f} | {e_ratio:.2f} | "
              f"{cov('layer_type'):.0f} | {cov('layer_pair'):.0f} | {cov('layer_param'):.0f} | {cov('layer_input'):.0f} | "
              f"{med(lambda d: x(d)['syncs']):.0f} | {med(lambda d: x(d)['bytes_sent'] / max(1, x(d)['syncs'] * d['ranks'])) / 1024:.0f} | "
              f"{med(lambda d: x(d)['coverage_bytes_per_sync']):.0f} | {med(lambda d: statistics.mean(p['exchange']['seconds'] for p in d['per_rank'])):.2f} |")
print(f"medians of {rounds} rounds; cores: {os.cpu_count()}")
PY
