#!/bin/bash
# A stored bug's reproducers in its libraries' own terms, for each library whose worker writes one.
# With a fault planted in the library (tests/data/planted_library: sitecustomize.py for Python's,
# node_planted.js for Node's), a short campaign stores bugs, each with repro/repro_<backend>.*: a
# script that imports only its library (and numpy), shows the fault (exit 1) where it is planted,
# and not (exit 0) on the clean library. memo-fuzz reproduce writes and runs one again.
. "$(dirname "$0")/lib/preamble.sh"
root=$(cd "$data/../.." && pwd)
python=$root/.venv/bin/python
[[ -x $python ]] || fail "no $python (scripts/setup.sh makes it)"
# A maintainer installs the Node packages with npm; here they are the workers' own.
export NODE_PATH=$root/tools/ort-worker/node_modules:$root/tools/tfjs-worker/node_modules
planted_env=(env PYTHONPATH="$data/planted_library${PYTHONPATH:+:$PYTHONPATH}" NODE_OPTIONS="--require $data/planted_library/node_planted.js")

# run_script FILE [env...]: the reproducer run from its folder, as a maintainer would.
run_script() {
  local f=$1
  shift
  case $f in
    *.py) (cd "$(dirname "$f")" && "$@" "$python" "$(basename "$f")") ;;
    *.js) (cd "$(dirname "$f")" && "$@" node "$(basename "$f")") ;;
  esac
}

# Seeds with Dense layers, for the faults planted in Dense: MEMO's zoo meets few in a short campaign
# on a slow worker.
mkdir -p "$tmp/dense"
python3 - "$tmp/dense/dense.json" <<'PY'
import json, sys
def node(layer, inputs, params, shape):
    return {"layer": layer, "name": "n%d" % len(nodes), "inputs": inputs, "params": params, "dtype": "float32", "shape": [None] + shape}
nodes = []
nodes.append(node("InputLayer", [], {"shape": [6], "dtype": "float32"}, [6]))
nodes.append(node("Dense", [0], {"units": 8, "activation": "relu"}, [8]))
nodes.append(node("Dense", [1], {"units": 4}, [4]))
json.dump({"format": "memo.model", "version": 1, "seed": 3, "outputs": [2], "nodes": nodes}, open(sys.argv[1], "w"))
PY

# check BACKENDS FAULT BUG-GLOB SCRIPT SECONDS ALLOWED [run options]: a campaign on BACKENDS with
# FAULT planted stores a bug matching BUG-GLOB (under bugs/) with repro/SCRIPT, which imports or
# requires only what ALLOWED (a regex) lets through, shows the fault where it is planted, and not
# elsewhere.
check() {
  local backends=$1 fault=$2 glob=$3 script=$4 seconds=$5 allowed=$6
  shift 6
  local out=$tmp/$fault planted=("${planted_env[@]}" MEMO_PLANTED_FAULT="$fault")
  "${planted[@]}" "$memo" run --backends "$backends" --seconds "$seconds" --seed 1 --quiet --out "$out" "$@" >"$tmp/run.out" 2>&1 ||
    fail "$fault: campaign exited $?: $(tail -3 "$tmp/run.out")"
  bug=$(ls -d "$out"/bugs/$glob/ 2>/dev/null | head -1 || true)
  [[ -n $bug ]] || fail "$fault: no bug like $glob stored: $(ls "$out"/bugs/*/ 2>/dev/null | tr '\n' ' ')"
  local file=$bug/repro/$script
  [[ -f $file ]] || fail "$fault: the campaign stored $bug without repro/$script: $(ls "$bug" "$bug/repro" 2>&1 | tr '\n' ' ')"
  local backend=${script#repro_}
  backend=${backend%.*}
  [[ $(json "$bug/bug.json" "[v.get('shows') for k, v in d['reproducers'].items() if k.replace('-', '_') == '$backend']") == "[True]" ]] ||
    fail "$fault: bug.json's reproducers: $(json "$bug/bug.json" 'd.get("reproducers")')"
  local used
  used=$(grep -oE "^(import|from) [A-Za-z_.]+|require\('[^']+'\)" "$file" | sed -E "s/^(import|from) //; s/require\('([^']+)'\)/\1/; s/\..*//" | sort -u | tr '\n' ' ')
  for m in $used; do [[ $m =~ ^($allowed)$ ]] || fail "$fault: the reproducer uses $m (all: $used)"; done
  ! grep -qiE "memo-fuzz|import memo" "$file" || fail "$fault: the reproducer calls memo"
  run_script "$file" "${planted[@]}" >"$tmp/planted.out" 2>&1 && fail "$fault: with the fault planted $script exits 0: $(cat "$tmp/planted.out")"
  grep -q "largest difference" "$tmp/planted.out" || fail "$fault: with the fault planted $script printed no difference: $(tail -5 "$tmp/planted.out")"
  run_script "$file" env >"$tmp/clean.out" 2>&1 || fail "$fault: on the clean library $script exits $?: $(cat "$tmp/clean.out")"
  echo "$script of $(basename "$bug"): exits 1 with the fault, 0 without ($(wc -l <"$file") lines; uses $used)"
}

py="functools|math|os|platform|sys|numpy"
check reference,torch torch-conv2d "inconsistency/Conv2D-*" repro_torch.py 20 "$py|torch"
# memo-fuzz reproduce writes it again, and runs it.
"${planted_env[@]}" MEMO_PLANTED_FAULT=torch-conv2d "$memo" reproduce "$bug" >"$tmp/repro.out" 2>&1 || fail "reproduce exited $?: $(cat "$tmp/repro.out")"
grep -q "torch: .*repro_torch.py: shows the fault (exit 1)" "$tmp/repro.out" || fail "reproduce did not say the script shows the fault: $(cat "$tmp/repro.out")"
# report-bug: the bug as an issue text, with the library's version, the machine, the script inline
# and what it printed.
"${planted_env[@]}" MEMO_PLANTED_FAULT=torch-conv2d "$memo" report-bug "$bug" >"$tmp/issue.md" 2>&1 || fail "report-bug exited $?: $(cat "$tmp/issue.md")"
for want in '^# PyTorch \(eager\) 2\.[0-9]' '^\*\*Machine\*\*: ' '^\*\*Environment\*\* .*Python 3\.' '^```python$' '^def model\(x, w\):' 'largest difference' '^## Expected'; do
  grep -qE "$want" "$tmp/issue.md" || fail "report-bug's text lacks /$want/: $(head -20 "$tmp/issue.md")"
done
check reference,ort ort-outputs "inconsistency/*" repro_ort.js 10 "fs|onnxruntime-node"
# --known: sightings of root causes already reported are counted apart, not minimised. (Matched on
# the verdict of the model as found: where every layer is faulty, as here, a model's first faulty
# node is often not its minimal model's, so some are stored all the same.)
python3 -c "import glob, json; print('# reported upstream'); [print(json.load(open(f))['root_cause']) for f in glob.glob('$tmp/ort-outputs/bugs/*/*/bug.json')]" >"$tmp/known.txt"
"${planted_env[@]}" MEMO_PLANTED_FAULT=ort-outputs "$memo" run --backends reference,ort --seconds 8 --seed 1 --quiet --known "$tmp/known.txt" \
  --out "$tmp/known" >"$tmp/run.out" 2>&1 || fail "campaign with --known exited $?: $(tail -3 "$tmp/run.out")"
[[ $(json "$tmp/known/stats.json" 'd["bugs"]["known_sightings"] > 0') == True ]] || fail "no known sightings: $(json "$tmp/known/stats.json" 'd["bugs"]')"
if "$memo" run --known "$tmp/nothing.txt" --out "$tmp/x" >"$tmp/err" 2>&1; then fail "--known with a missing file succeeded"; fi
grep -q "nothing.txt" "$tmp/err" || fail "--known with a missing file: $(cat "$tmp/err")"
echo "--known: $(json "$tmp/known/stats.json" 'd["bugs"]["known_sightings"]') sightings of $(grep -vc '^#' "$tmp/known.txt") known root causes counted"
check reference,keras-jax keras-dense "inconsistency/Dense-*" repro_keras_jax.py 20 "$py|keras|jax" --seeds "$tmp/dense"
check reference,tfjs-cpu tfjs-dense "inconsistency/Dense-*" repro_tfjs_cpu.js 10 "fs|@tensorflow/tfjs-core|@tensorflow/tfjs-layers|@tensorflow/tfjs-backend-cpu" --seeds "$tmp/dense"

# A shape bug's reproducer: tfjs-layers' DepthwiseConv2D takes the dilation rate it documents and
# ignores it, so its output has the shape of dilation 1. No fault is planted: the script shows the
# library's own shape against the model's.
mkdir -p "$tmp/dilated"
python3 - "$tmp/dilated/dilated.json" <<'PY'
import json, sys
nodes = [{"layer": "InputLayer", "name": "n0", "inputs": [], "params": {"shape": [7, 7, 1], "dtype": "float32"}, "dtype": "float32", "shape": [None, 7, 7, 1]},
         {"layer": "DepthwiseConv2D", "name": "n1", "inputs": [0], "params": {"kernel_size": [3, 3], "dilation_rate": [2, 2]}, "dtype": "float32",
          "shape": [None, 3, 3, 1]}]
json.dump({"format": "memo.model", "version": 1, "seed": 3, "outputs": [1], "nodes": nodes}, open(sys.argv[1], "w"))
PY
"$memo" run --backends reference,tfjs-cpu --models 3 --seconds 60 --seed 1 --quiet --seeds "$tmp/dilated" --out "$tmp/shape" >"$tmp/run.out" 2>&1 ||
  fail "shape campaign exited $?: $(tail -3 "$tmp/run.out")"
bug=$(ls -d "$tmp"/shape/bugs/shape/DepthwiseConv2D-*/ 2>/dev/null | head -1 || true)
[[ -n $bug && -f $bug/repro/repro_tfjs_cpu.js ]] || fail "no shape bug with repro/repro_tfjs_cpu.js: $(ls -R "$tmp/shape/bugs" 2>&1 | head -20 | tr '\n' ' ')"
run_script "$bug/repro/repro_tfjs_cpu.js" env >"$tmp/shape.out" 2>&1 && fail "the shape bug's reproducer exits 0: $(cat "$tmp/shape.out")"
grep -qE "shape \[[0-9]+,5,5,1\], expected \[[0-9]+,3,3,1\]" "$tmp/shape.out" || fail "the shape bug's reproducer shows no shape: $(tail -5 "$tmp/shape.out")"
echo "repro_tfjs_cpu.js of $(basename "$bug"): shows tfjs' shape against the model's"
