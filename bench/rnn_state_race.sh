#!/bin/bash
# RNN-state coverage in campaigns with backends: two campaigns from the LSTM seed models, one after
# another in this invocation, S seconds each with the same seed: MEMO's coverage alone (the peer)
# and --coverage memo,rnn-state. Then build/bin/rnn_state_race --judge scores the models each
# executed, and its queue, with one fresh RNN-state metric, and prints the ratio to the peer.
# Usage: bench/rnn_state_race.sh [SECONDS (default 60)] [BACKENDS (default reference,torch)] [SEED (default 1)]
set -euo pipefail
secs=${1:-60}
backends=${2:-reference,torch}
seed=${3:-1}
memo=${MEMO_FUZZ:-build/bin/memo-fuzz}
judge=${RNN_STATE_RACE:-build/bin/rnn_state_race}
[[ -x $memo && -x $judge ]] || { echo "no $memo or $judge: run make build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cov in memo memo,rnn-state; do
  "$memo" run --backends "$backends" --seeds zoo:lstm0-sinewave,lstm2-price --coverage "$cov" --seconds "$secs" --seed "$seed" \
    --quiet --out "$tmp/$cov" >/dev/null
done
"$judge" --judge "$tmp/memo" "$tmp/memo,rnn-state"
