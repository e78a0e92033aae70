#!/bin/bash
# Models that once gave a false verdict (tests/data/false_alarms/) stay quiet on every backend
# built in: outputs that agree within rounding are never an inconsistency, and a float16 overflow
# that one library reaches and another does not is the dtype's range, not a NaN bug. Each runs with
# uniform inputs (MEMO's) and with the varied ones a campaign draws by default, all models in one
# run-model per kind of inputs (the workers start once).
. "$(dirname "$0")/lib/preamble.sh"

models=("$data"/false_alarms/*.json)
[[ -f ${models[0]} ]] || fail "no model in $data/false_alarms"
for inputs in uniform varied; do
  "$memo" run-model "${models[@]}" --inputs $inputs >"$tmp/out" 2>&1 || fail "run-model --inputs $inputs exited $?: $(tail -3 "$tmp/out")"
  (( $(grep -c "^verdict:" "$tmp/out") == ${#models[@]} )) || fail "--inputs $inputs: $(grep -c "^verdict:" "$tmp/out") verdicts for ${#models[@]} models"
  # Each verdict follows its model's header line: name the model of any verdict but none.
  loud=$(awk '/: [0-9]+ layers, seed/ {m = $1} /^verdict:/ && !/^verdict: none/ {print m, $0}' "$tmp/out")
  [[ -z $loud ]] || fail "--inputs $inputs: $loud"
done
# Stored bugs that were false (tests/data/false_alarms/bugs/: bug.json and its models, as a campaign
# stored them) replay quiet with their own inputs on their own backends: compilers-float16-round-trip
# is keras-tensorflow-xla against torch-compile, each within rounding of the eager runs.
# keras-jax-eager-compile-time is an unrolled GRU that eager JAX compiles for about 23 s, within
# the compile allowance of its time limit.
# compiled-conv-summation-order: torch-compile sums a Conv2D in another order than its layered run,
# within the outputs' rounding bound. keras-xla-stateful-graph-run-per-output: a stateful LSTM under
# tf.function(jit_compile) once ran once per output of the model, its state advanced between them.
# keras-xla-time-distributed-compile-time: Keras' TimeDistributed over a time axis of 1,917 steps,
# which XLA compiles for 97 s on TensorFlow, past the run's limit but within compiling's own.
bugs=0
for bug in "$data"/false_alarms/bugs/*/; do
  [[ -f $bug/bug.json ]] || continue
  status=0
  rm -rf "$tmp/bug" && cp -r "$bug" "$tmp/bug"  # replayed from a copy: the data stays as it is
  "$memo" replay "$tmp/bug" >"$tmp/replay" 2>&1 || status=$?
  (( status == 2 )) || fail "replay of $bug exited $status (2: not reproduced): $(grep -E '^(verdict|stored)' "$tmp/replay" | tr '\n' ' ')"
  bugs=$((bugs + 1))
done
echo "false alarms: $bugs stored bugs replay quiet"
echo "false alarms: ${#models[@]} models quiet on $(awk '/: [0-9]+ layers, seed/ {n++} n == 1 && / ok / {k++} END {print k}' "$tmp/out") backends"
