#!/usr/bin/env bash
# Fuzzes the ONNX importer (include/memo/onnx/import.hpp) with libFuzzer.
#
#   scripts/fuzz-onnx-import.sh [seconds]        # default 120
#
# Builds tests/fuzz/onnx_import_fuzz.cpp with clang++ (-fsanitize=fuzzer,address,undefined) into
# $MEMO_FUZZ_BUILD (default build/fuzz) and runs it for the given time over the committed corpus,
# tests/fuzz/corpus/onnx_import. New inputs go to $MEMO_FUZZ_BUILD/corpus (the committed corpus is
# only read), crashes to $MEMO_FUZZ_BUILD/artifacts/. With MEMO_FUZZ_MERGE=1 the run ends by
# merging both into a fresh minimal corpus that replaces the committed one (at most 200 files).
# When the committed corpus is empty it is seeded with small valid models written by Python's
# onnx package (python3-onnx).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-120}
build=${MEMO_FUZZ_BUILD:-$root/build/fuzz}
corpus=$root/tests/fuzz/corpus/onnx_import
python=${MEMO_FUZZ_PYTHON:-/usr/bin/python3}
cxx=${MEMO_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}
[[ -n "$cxx" ]] || { echo "fuzz-onnx-import.sh: clang++ not found (libFuzzer needs clang)" >&2; exit 2; }

mkdir -p "$build/artifacts" "$build/corpus" "$corpus"

if [[ -z "$(ls -A "$corpus")" ]]; then
  echo "fuzz-onnx-import.sh: seeding $corpus"
  "$python" - "$corpus" <<'PY'
import json, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F = TensorProto.FLOAT

def w(name, shape, dtype=np.float32):
    return numpy_helper.from_array(np.zeros(shape, dtype=dtype), name)

def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

def save(name, nodes, inputs, outputs, inits, opset=13, meta=None):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="memo-seed")
    m.ir_version = 7
    if meta:
        helper.set_model_props(m, meta)
    with open(f"{out}/{name}.onnx", "wb") as f:
        f.write(m.SerializeToString())

def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)

# LeNet: Conv, Relu, MaxPool, Flatten, Gemm, Softmax.
save("lenet", [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[5, 5]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("AveragePool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p2"], ["f"]),
    helper.make_node("Gemm", ["f", "fc", "fcb"], ["g"], transB=1),
    helper.make_node("Softmax", ["g"], ["y"], axis=1),
], [vi("x", ["N", 1, 16, 16])], [vi("y", ["N", 10])],
   [w("w1", [6, 1, 5, 5]), w("b1", [6]), w("w2", [16, 6, 5, 5]), w("b2", [16]), w("fc", [10, 144]), w("fcb", [10])])

# A ResNet block: BatchNormalization, Add, a strided conv with explicit pads, global pooling.
bn = lambda x, y, c: helper.make_node("BatchNormalization", [x, y + "s", y + "b", y + "m", y + "v"], [y], epsilon=1e-5)
bn_w = lambda y, c: [w(y + p, [c]) for p in ("s", "b", "m", "v")]
save("resnet_block", [
    helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]), bn("c0", "n0", 8), helper.make_node("Relu", ["n0"], ["a0"]),
    helper.make_node("Conv", ["a0", "w1"], ["c1"], pads=[1, 1, 1, 1]), bn("c1", "n1", 8),
    helper.make_node("Add", ["n1", "a0"], ["s"]), helper.make_node("Relu", ["s"], ["a1"]),
    helper.make_node("Conv", ["a1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("GlobalAveragePool", ["c2"], ["gap"]), helper.make_node("Flatten", ["gap"], ["f"]),
    helper.make_node("MatMul", ["f", "fc"], ["mm"]), helper.make_node("Add", ["mm", "fcb"], ["y"]),
], [vi("x", ["N", 3, 16, 16])], [vi("y", ["N", 5])],
   [w("w0", [8, 3, 3, 3]), w("w1", [8, 8, 3, 3]), w("w2", [16, 8, 3, 3]), w("fc", [16, 5]), w("fcb", [5])] + bn_w("n0", 8) + bn_w("n1", 8))

# LSTM sequence model (batch_first): Transpose, LSTM, Squeeze, Transpose; and its last state.
lstm_inits = [w("W", [1, 64, 8]), w("R", [1, 64, 16]), w("B", [1, 128]), ints("ax1", [1]), ints("ax0", [0])]
save("lstm_seq", [
    helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
    helper.make_node("LSTM", ["xt", "W", "R", "B"], ["Y", "Y_h"], hidden_size=16),
    helper.make_node("Squeeze", ["Y", "ax1"], ["ys"]),
    helper.make_node("Transpose", ["ys"], ["y"], perm=[1, 0, 2]),
], [vi("x", ["N", 10, 8])], [vi("y", ["N", 10, 16])], lstm_inits)
save("lstm_last", [
    helper.make_node("LSTM", ["x", "W", "R", "", "", "h0"], ["", "Y_h"], hidden_size=16),
    helper.make_node("Squeeze", ["Y_h"], ["y"], axes=[0]),
], [vi("x", [10, "N", 8])], [vi("y", ["N", 16])], lstm_inits[:2] + [w("h0", [1, 1, 16])], opset=11)

# Bidirectional LSTM, folded Transpose + Reshape, then a Dense with bias.
save("bilstm", [
    helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
    helper.make_node("LSTM", ["xt", "W", "R", "B"], ["Y"], hidden_size=4, direction="bidirectional"),
    helper.make_node("Transpose", ["Y"], ["yt"], perm=[0, 2, 1, 3]),
    helper.make_node("Reshape", ["yt", "shape"], ["yr"]),
    helper.make_node("Transpose", ["yr"], ["yb"], perm=[1, 0, 2]),
    helper.make_node("MatMul", ["yb", "fc"], ["mm"]), helper.make_node("Add", ["mm", "fcb"], ["y"]),
], [vi("x", ["N", 6, 3])], [vi("y", ["N", 6, 2])],
   [w("W", [2, 16, 3]), w("R", [2, 16, 4]), w("B", [2, 32]), ints("shape", [0, 0, -1]), w("fc", [8, 2]), w("fcb", [2])])

# GRU and RNN.
save("gru", [
    helper.make_node("GRU", ["x", "W", "R", "B"], ["", "h"], hidden_size=5, linear_before_reset=1),
    helper.make_node("Squeeze", ["h", "ax0"], ["s"]),
    helper.make_node("Gemm", ["s", "fc"], ["y"]),
], [vi("x", [7, "N", 3])], [vi("y", ["N", 2])], [w("W", [1, 15, 3]), w("R", [1, 15, 5]), w("B", [1, 30]), ints("ax0", [0]), w("fc", [5, 2])])
save("rnn", [
    helper.make_node("RNN", ["x", "W", "R"], ["Y"], hidden_size=3, activations=["Relu"], layout=1),
], [vi("x", ["N", 4, 2])], [vi("Y", ["N", 4, 1, 3])], [w("W", [1, 3, 2]), w("R", [1, 3, 3])], opset=14)

# Concat on channels, depthwise conv, Pad + Conv, Resize, ConvTranspose, Clip, LeakyRelu.
save("concat_depthwise", [
    helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["x", "wb"], ["b"]),
    helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
    helper.make_node("Conv", ["c", "wd"], ["d"], group=6, auto_pad="SAME_UPPER"),
    helper.make_node("Clip", ["d", "zero", "six"], ["y"]),
], [vi("x", ["N", 3, 8, 8])], [vi("y", ["N", 12, 8, 8])],
   [w("wa", [4, 3, 3, 3]), w("wb", [2, 3, 1, 1]), w("wd", [12, 1, 3, 3]), numpy_helper.from_array(np.array(0, np.float32), "zero"),
    numpy_helper.from_array(np.array(6, np.float32), "six")])
save("pad_resize", [
    helper.make_node("Pad", ["x", "pads"], ["p"]),
    helper.make_node("Conv", ["p", "w"], ["c"]),
    helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
    helper.make_node("Resize", ["l", "", "scales"], ["r"], mode="linear"),
    helper.make_node("ConvTranspose", ["r", "wt"], ["t"], strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Sigmoid", ["t"], ["y"]),
], [vi("x", ["N", 2, 6, 6])], [vi("y", ["N", 3, 24, 24])],
   [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]), w("w", [4, 2, 3, 3]), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
    w("wt", [4, 3, 4, 4])])

# Older opsets: attribute forms of Pad, Upsample, Dropout, Squeeze and Unsqueeze; Conv1D and 3D.
save("opset9", [
    helper.make_node("Pad", ["x"], ["p"], pads=[0, 0, 1, 0, 0, 1]),
    helper.make_node("Conv", ["p", "w"], ["c"], dilations=[2]),
    helper.make_node("Upsample", ["c", "scales"], ["u"]),
    helper.make_node("Dropout", ["u"], ["d"], ratio=0.25),
    helper.make_node("Unsqueeze", ["d"], ["e"], axes=[2]),
    helper.make_node("Squeeze", ["e"], ["y"], axes=[2]),
], [vi("x", ["N", 2, 9])], [vi("y", ["N", 3, 14])], [w("w", [3, 2, 3]), numpy_helper.from_array(np.array([1, 1, 2], np.float32), "scales")], opset=9)
save("conv3d", [
    helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 1, 1, 0, 1, 1]),
    helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[1, 2, 2], strides=[1, 2, 2]),
    helper.make_node("GlobalMaxPool", ["p"], ["y"]),
], [vi("x", ["N", 1, 4, 8, 8])], [vi("y", ["N", 2, 1, 1, 1])], [w("w", [2, 1, 3, 3, 3])])

# x.view(x.size(0), -1) with a dynamic batch, and a fixed-batch Reshape.
save("dynamic_flatten", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
    helper.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
    helper.make_node("Concat", ["bu", "minus"], ["t"], axis=0),
    helper.make_node("Reshape", ["x", "t"], ["r"]),
    helper.make_node("Tanh", ["r"], ["y"]),
], [vi("x", ["N", 3, 4, 4])], [vi("y", ["N", 48])],
   [numpy_helper.from_array(np.array(0, np.int64), "zero"), ints("ax0", [0]), ints("minus", [-1])])
save("fixed_batch", [
    helper.make_node("Reshape", ["x", "t"], ["r"]),
    helper.make_node("LayerNormalization", ["r", "s"], ["l"]),
    helper.make_node("Softmax", ["l"], ["y"]),
], [vi("x", [1, 4, 3, 2])], [vi("y", [1, 4, 6])], [ints("t", [1, 4, 6]), w("s", [6])], opset=17)

# memo's own file: the exact model in the metadata.
memo_model = {"format": "memo.model", "version": 1, "seed": 7, "outputs": [1], "nodes": [
    {"name": "x", "layer": "InputLayer", "inputs": [], "dtype": "float32", "shape": [None, 4], "params": {"shape": [4], "dtype": "float32"}},
    {"name": "d", "layer": "Dense", "inputs": [0], "dtype": "float32", "shape": [None, 3], "params": {"units": 3}}]}
save("memo_metadata", [helper.make_node("Identity", ["x"], ["y"])], [vi("x", ["N", 4])], [vi("y", ["N", 3])], [],
     meta={"memo.model": json.dumps(memo_model)})
PY
fi

bin=$build/onnx_import_fuzz
src=$root/tests/fuzz/onnx_import_fuzz.cpp
if [[ ! -x "$bin" || "$src" -nt "$bin" || "$root/include/memo/onnx/import.hpp" -nt "$bin" ]]; then
  echo "fuzz-onnx-import.sh: building $bin"
  "$cxx" -std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DONNX_NAMESPACE=onnx -DONNX_ML=1 -I"$root/include" "$src" -o "$bin" -lonnx -lonnx_proto -lprotobuf -pthread
fi

echo "fuzz-onnx-import.sh: fuzzing for ${seconds}s"
"$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" "$build/corpus" "$corpus"

if [[ "${MEMO_FUZZ_MERGE:-0}" == 1 ]]; then
  fresh=$build/corpus.merged
  rm -rf "$fresh" && mkdir -p "$fresh"
  "$bin" -merge=1 -max_len=65536 -timeout=10 "$fresh" "$corpus" "$build/corpus"
  # The named seeds (*.onnx) stay; of the rest (named by SHA-1, as libFuzzer names them) the
  # smallest are kept, so that the committed corpus holds at most 200 files.
  for seed in "$corpus"/*.onnx; do rm -f "$fresh/$(sha1sum "$seed" | cut -d' ' -f1)"; done
  seeds=$(ls -1 "$corpus"/*.onnx | wc -l)
  kept=$(ls -1 "$fresh" | wc -l)
  if (( kept + seeds > 200 )); then
    ls -1S "$fresh" | head -n $((kept + seeds - 200)) | while read -r f; do rm -f "$fresh/$f"; done
  fi
  find "$corpus" -maxdepth 1 -type f ! -name '*.onnx' -delete
  if [[ -n "$(ls -A "$fresh")" ]]; then cp "$fresh"/* "$corpus"/; fi
  echo "fuzz-onnx-import.sh: corpus now $(ls -1 "$corpus" | wc -l) files, $(du -sh "$corpus" | cut -f1)"
fi
