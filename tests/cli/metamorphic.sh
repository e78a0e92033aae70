#!/bin/bash
# One library alone: a campaign with --oracle metamorphic on libtorch (the reference when memo-fuzz
# has no libtorch) shows its live progress line and writes stats.json like any other; run-model
# prints a model's variant and the resource oracles' figures; a stored metamorphic bug replays from
# its directory; bad oracle options are clear errors.
. "$(dirname "$0")/lib/preamble.sh"
expect_error() {  # expect_error WORDS -- ARGS: a non-zero exit whose message holds WORDS
  local words=$1
  shift 2
  if "$memo" "$@" >"$tmp/out" 2>&1; then fail "memo-fuzz $* succeeded"; fi
  grep -q -- "$words" "$tmp/out" || fail "memo-fuzz $*: no '$words' in: $(cat "$tmp/out")"
}

# Outputs go to files first: grep -q closing a pipe early would fail the writer under pipefail.
"$memo" run --help >"$tmp/h1"
grep -q -- "--oracle LIST" "$tmp/h1" || fail "run --help lacks --oracle"
"$memo" run-model --help >"$tmp/h2"
grep -q -- "--oracle LIST" "$tmp/h2" || fail "run-model --help lacks --oracle"

backend=reference
"$memo" run-model --backends torch "$data/report/ort_pad_maxpool.json" >/dev/null 2>&1 && backend=torch

# A campaign on one library: the progress line (a line every few seconds off a terminal) counts
# metamorphic bugs, stats.json names the tester and its variants. It stops at a number of models,
# not seconds: on a loaded machine the worker's start alone can take most of a short budget.
"$memo" run --oracle metamorphic --backends "$backend" --models 12 --seconds 120 --seed 6 --out "$tmp/c" >"$tmp/run.out" 2>"$tmp/run.err"
grep -q "meta" "$tmp/run.err" || fail "no progress line with metamorphic bugs: $(cat "$tmp/run.err")"
grep -q "bugs: .* metamorphic" "$tmp/run.out" || fail "the summary lacks metamorphic bugs: $(cat "$tmp/run.out")"
python3 - "$tmp/c/stats.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["oracle"]["tester"] == "metamorphic", d["oracle"]
variants = sum(d["oracle"]["metamorphic"]["variants"].values())
assert variants > 0 and d["models_executed"] > 0, d["oracle"]
assert "metamorphic" in d["bugs"] and "unique_metamorphic" in d["bugs"], d["bugs"]
print(f"metamorphic campaign: {d['models_executed']} models, {variants} variants, "
      f"{d['oracle']['metamorphic']['discarded_self_check']} discarded by the self-check, bugs {d['bugs']['unique']}")
PY
[[ -f "$tmp/c/report.html" ]] || fail "no report.html"

# One model: its variant on the backend, then the resource oracles' runs.
"$memo" run-model --oracle metamorphic,performance,leak --repeats 3 --backends "$backend" "$data/report/ort_pad_maxpool.json" >"$tmp/one"
grep -q "(variant)" "$tmp/one" || fail "run-model shows no variant run: $(cat "$tmp/one")"
grep -q "peak KiB" "$tmp/one" || fail "run-model shows no resource figures: $(cat "$tmp/one")"

# A metamorphic bug replays from its directory. Planted by hand: a variant whose gate is not zero
# (ScaleShift's shift is +1, so relu(-(x - x)^2 + 1) = 1) changes the outputs on any backend.
python3 - "$tmp/bug" "$backend" <<'PY' || exit 1
import json, os, sys
bug, backend = sys.argv[1], sys.argv[2]
os.makedirs(bug)
def node(layer, inputs, params, shape):
    return {"layer": layer, "name": f"{layer.lower()}_{len(nodes)}", "inputs": inputs, "params": params, "dtype": "float32", "shape": [None] + shape}
nodes = []
nodes.append(node("InputLayer", [], {"shape": [6], "dtype": "float32"}, [6]))
nodes.append(node("Dense", [0], {"units": 4}, [4]))
model = {"format": "memo.model", "version": 1, "seed": 3, "outputs": [1], "nodes": list(nodes)}
nodes.append(node("Subtract", [1, 1], {}, [4]))                       # 2
nodes.append(node("Square", [2], {}, [4]))                            # 3
nodes.append(node("ScaleShift", [3], {"scale": -1.0, "shift": 1.0}, [4]))  # 4: +1, not -eps
nodes.append(node("ReLU", [4], {}, [4]))                              # 5
nodes.append(node("Dense", [1], {"units": 4, "activation": "tanh"}, [4]))  # 6: F
nodes.append(node("Multiply", [5, 6], {}, [4]))                       # 7
nodes.append(node("Add", [1, 7], {}, [4]))                            # 8
variant = {"format": "memo.model", "version": 1, "seed": 3, "outputs": [8], "nodes": nodes}
json.dump(model, open(os.path.join(bug, "model.json"), "w"))
json.dump(model, open(os.path.join(bug, "minimal.json"), "w"))
json.dump(variant, open(os.path.join(bug, "variant.json"), "w"))
json.dump({"kind": "metamorphic", "culprits": [backend], "peers": [backend], "backends": [backend], "tester": "metamorphic",
           "signature": "planted", "inputs": {"samples": 2, "lo": 0.0, "hi": 1.0},
           "variant": {"relation": "squared-difference", "output": 0, "first_new": 2, "gate": [2, 3, 4, 5, 7, 8]}},
          open(os.path.join(bug, "bug.json"), "w"))
PY
"$memo" replay "$tmp/bug" >"$tmp/replay" || fail "the planted metamorphic bug does not replay: $(cat "$tmp/replay")"
grep -q "reproduced" "$tmp/replay" || fail "replay: $(cat "$tmp/replay")"
grep -q "(variant)" "$tmp/replay" || fail "replay shows no variant run: $(cat "$tmp/replay")"

expect_error "unknown oracle 'bogus'" -- run --oracle bogus --backends reference --out "$tmp/x1"
expect_error "choose one" -- run --oracle differential,metamorphic --backends reference --out "$tmp/x2"
expect_error "--repeats must be between" -- run --oracle performance --repeats 1 --backends reference --out "$tmp/x3"
expect_error "unknown oracle" -- run-model --oracle nope "$data/report/ort_pad_maxpool.json"
[[ ! -e "$tmp/x1/stats.json" ]] || fail "a rejected campaign wrote stats.json"
echo "cli.metamorphic: ok ($backend)"
