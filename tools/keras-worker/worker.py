"""memo's Keras 3 worker. It builds Keras models (memo's Keras JSON, model.to_json()'s form) with
Keras 3 itself on one Keras backend (tensorflow, jax or torch; KERAS_BACKEND is read once, at
import, so one worker serves one backend), sets the weights memo drew, runs the inputs and answers
with the outputs. It speaks the TensorFlow.js worker's protocol (tools/tfjs-worker/worker.js has
the frames field by field): one request at a time from fd 3, each answer to fd 4.

Plain runs call the whole model: eagerly, op by op (`model(x)`), or with --jit compiled whole by
the backend's compiler (XLA through tf.function(jit_compile=True) or jax.jit, Inductor through
torch.compile), so that a compiler's fusion and layout passes are tested against the eager run.
Every node's output and teacher forcing apply each layer in turn, eagerly.

Usage: worker.py --backend tensorflow|jax|torch [--jit]"""
import argparse
import copy
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

args = argparse.ArgumentParser()
args.add_argument("--backend", default="tensorflow", choices=["tensorflow", "jax", "torch"])
args.add_argument("--jit", action="store_true")
args.add_argument("--version", action="store_true", help="print Keras' and the backend's versions, then exit")
args.add_argument("--replay", metavar="FRAME", nargs="+", help="serve request frames saved in files, print each answer's status and message, and exit")
# MEMO_KERAS_FRAMES=DIR: each request frame is also saved there (request-N.bin), to --replay it.
opts = args.parse_args()

# One thread per worker: a campaign runs several lanes of models at once, each library in its own
# worker, and a library that spreads each small model over every core only makes them wait.
os.environ["KERAS_BACKEND"] = opts.backend
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import keras  # noqa: E402
from keras import ops  # noqa: E402

from frames import Reader, answer, put_str, put_tensor, serve_frames  # noqa: E402

if opts.backend == "tensorflow":
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    library_version = tf.__version__
elif opts.backend == "jax":
    import jax

    library_version = jax.__version__
else:
    import torch

    torch.set_num_threads(1)
    library_version = torch.__version__

if opts.version:
    print("keras %s %s %s" % (keras.__version__, opts.backend, library_version))
    sys.exit(0)


class Declined(Exception):
    """What Keras lacks (a class, a parameter, a dtype): the model is declined, never a bug."""

    def __init__(self, message, layer=""):
        super().__init__(message)
        self.layer = layer


class Misshapen(Exception):
    """A layer whose output shape Keras infers or computes otherwise than memo (Keras 2.8)."""

    def __init__(self, message, layer=""):
        super().__init__(message)
        self.layer = layer


class Failed(Exception):
    def __init__(self, cause, layer=""):
        super().__init__(str(cause))
        self.cause = cause
        self.layer = layer


class GraphFailed(Exception):
    """The whole model's run failed where every layer applied alone runs."""


class Unset(keras.initializers.Initializer):
    """Zeros from numpy: memo sets every weight, and an initializer that ran on the backend (a random
    uniform on JAX) would be compiled for each new weight shape, seconds a model."""

    def __call__(self, shape, dtype=None):
        return np.zeros(shape, dtype=keras.backend.standardize_dtype(dtype or "float32"))


# memo's layers that Keras has no class for (MEMO's custom objects and memo's adapters), with the
# meanings memo's reference interpreter gives them.
class _Custom(keras.layers.Layer):
    own = ()

    def __init__(self, **config):
        for k in self.own:
            setattr(self, k, config.pop(k, None))
        super().__init__(**config)

    def get_config(self):
        return {**super().get_config(), **{k: getattr(self, k) for k in self.own}}

    def compute_output_shape(self, shape):
        return shape


class Abs(_Custom):
    def call(self, x):
        return ops.absolute(x)


class Square(_Custom):
    def call(self, x):
        return ops.multiply(x, x)


class StopGradient(_Custom):
    def call(self, x):
        return ops.stop_gradient(x)


class ScaleShift(_Custom):
    own = ("scale", "shift")

    # The product is rounded to the dtype before the shift is added, as memo's reference does.
    def call(self, x):
        return ops.add(ops.multiply(x, ops.cast(self.scale, x.dtype)), ops.cast(self.shift, x.dtype))


class CustomCastLayer(_Custom):
    own = ("target_dtype",)

    def call(self, x):
        return ops.cast(x, self.target_dtype)


class CustomScaleLayer(_Custom):
    own = ("scale",)

    def compute_output_shape(self, shapes):
        return shapes[0]

    def call(self, inputs):
        a, b = inputs
        return ops.add(a, ops.multiply(b, ops.cast(self.scale, b.dtype)))


class CustomInjectLayer(_Custom):
    own = ("value", "stride")

    def call(self, x):
        fill = {"inf": np.inf, "-inf": -np.inf}.get(self.value, np.nan)
        count = int(np.prod(x.shape))
        mask = (np.arange(count) % max(1, int(self.stride or 1)) == 0).reshape(tuple(x.shape))
        return ops.where(mask, ops.cast(fill, x.dtype), x)


class CustomExpandLayer(_Custom):
    own = ("axis",)

    def compute_output_shape(self, s):
        s = list(s)
        s.insert(self.axis, 1)
        return tuple(s)

    def call(self, x):
        return ops.expand_dims(x, self.axis)


class CustomDropDimLayer(_Custom):
    """Index 0 along the axis, which goes."""

    own = ("axis",)

    def compute_output_shape(self, s):
        return tuple(d for i, d in enumerate(s) if i != self.axis)

    def call(self, x):
        return ops.take(x, 0, axis=self.axis)


def _pairs(flat):
    flat = [int(v) for v in np.ravel(flat)]
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat) - 1, 2)]


class CustomPadLayer(_Custom):
    """(before, after) for each non-batch dimension."""

    own = ("padding", "constant_values")

    def compute_output_shape(self, s):
        return (s[0],) + tuple(None if d is None else d + a + b for d, (a, b) in zip(s[1:], _pairs(self.padding)))

    def call(self, x):
        return ops.pad(x, [(0, 0)] + _pairs(self.padding), constant_values=self.constant_values or 0)


class CustomCropLayer(_Custom):
    own = ("cropping",)

    def compute_output_shape(self, s):
        return (s[0],) + tuple(None if d is None else d - a - b for d, (a, b) in zip(s[1:], _pairs(self.cropping)))

    def call(self, x):
        starts = [0] + [a for a, _ in _pairs(self.cropping)]
        sizes = [x.shape[0]] + [d - a - b for d, (a, b) in zip(x.shape[1:], _pairs(self.cropping))]
        return ops.slice(x, starts, sizes)


# Keras' own layers by class name too: a legacy config names its class without the module, and Keras 3
# finds only some of them so ("Could not locate class 'LSTM'" from inside a Bidirectional).
KERAS_LAYERS = {n: c for n, c in vars(keras.layers).items() if isinstance(c, type) and issubclass(c, keras.layers.Layer)}
CUSTOM = KERAS_LAYERS | {c.__name__: c for c in (Unset, Abs, Square, StopGradient, ScaleShift, CustomCastLayer, CustomScaleLayer, CustomInjectLayer,
                                  CustomExpandLayer, CustomDropDimLayer, CustomPadLayer, CustomCropLayer)}


def keras3_dialect(config):
    """A Keras 2 layer config as Keras 3 reads it for inference. Initializers become Unset (memo
    sets every weight); regularizers and constraints go (they act in training only)."""
    for key in list(config):
        v = config[key]
        if key.endswith("_initializer"):
            config[key] = {"class_name": "Unset", "config": {}}
        elif key.endswith("_regularizer") or key.endswith("_constraint"):
            config.pop(key)
        elif key == "layer" and isinstance(v, dict):
            keras3_dialect(v.get("config", {}))


def decode(frame):
    r = Reader(frame)
    q = {"json": r.str(), "mode": r.u8(), "weights": {}, "inputs": [], "shapes": [], "forced": []}
    for _ in range(r.u32()):
        layer, name = r.str(), r.str()
        q["weights"].setdefault(layer, {})[name] = r.tensor()
    q["inputs"] = [r.tensor() for _ in range(r.u32())]
    q["shapes"] = [r.dims() for _ in range(r.u32())]
    if q["mode"] == 2:
        q["forced"] = [r.tensor() for _ in range(r.u32())]
    return q


def encode(status, ms, message, layer, outputs):
    parts = [bytes([status]), np.float64(ms).tobytes()]
    put_str(parts, message)
    put_str(parts, layer)
    parts.append(np.uint32(len(outputs)).tobytes())
    for t in outputs:
        put_tensor(parts, t)
    return parts


def memo_name(variable):
    """The weight memo drew under a name, for a Keras variable: Keras names weights by their path
    ("lstm/lstm_cell/kernel"), and a Bidirectional layer's by its direction too
    ("bidirectional/forward_lstm/lstm_cell/kernel" is memo's "forward_kernel")."""
    path = variable.path.split("/")
    for side in ("forward", "backward"):
        if any(p.startswith(side + "_") for p in path[1:-1]):
            return side + "_" + path[-1]
    return path[-1]


# Keras 3 names a depthwise convolution's kernel "kernel"; Keras 2 (memo) "depthwise_kernel".
ALIASES = {"kernel": "depthwise_kernel"}


def set_weights(model, weights):
    for layer in model.layers:
        variables = layer.weights
        if not variables:
            continue
        given = weights.get(layer.name)
        if not given:
            raise Declined("layer %s: Keras has %d weights, memo none" % (layer.name, len(variables)), layer.name)
        values = []
        for v in variables:
            w = given.get(memo_name(v))
            if w is None:
                w = given.get(ALIASES.get(memo_name(v), ""))
            if w is None:
                raise Declined("layer %s: Keras has a weight %s that memo does not (memo has %s)" % (layer.name, v.path, ", ".join(given)), layer.name)
            values.append(w)
        if len(values) != len(given):
            raise Declined("layer %s: Keras has %d weights, memo %d" % (layer.name, len(variables), len(given)), layer.name)
        layer.set_weights(values)


# What Keras says when it lacks something (a class, a keyword, a dtype), rather than when it fails.
# (TensorFlow's CPU kernels of transposed and grouped convolutions take channels_last only: "only
# supports NHWC".)
LACKS = re.compile(r"Could not locate class|Unknown layer|Unrecognized keyword arguments|Could not interpret|not supported|"
                   r"is not implemented|NotImplementedError|Unknown activation|Invalid dtype|not understood|does not support|"
                   r"only supports (the )?NHWC|not currently supported|Unsupported|Current implementation only supports")


def lacks(e):
    return isinstance(e, (Declined, NotImplementedError)) or bool(LACKS.search("%s: %s" % (type(e).__name__, e)))


def first_line(e):
    """The library's own words: the first line of its message, past Keras' wrapping ("Exception
    encountered when calling X.call()."), which names the layer but not the fault."""
    lines = [l.strip() for l in str(e).strip().split("\n") if l.strip()]
    if len(lines) > 1 and lines[0].startswith("Exception encountered when calling"):
        lines = [lines[1] + " (" + lines[0][len("Exception encountered when calling "):].rstrip(".") + ")"]
    return "%s: %s" % (type(e).__name__, lines[0][:400]) if lines else type(e).__name__


def layers_of(spec):
    return spec["config"]["layers"]


def expected_shape(want):
    return tuple(None if d < 0 else d for d in want)


def check_shapes(model, spec, shapes):
    """The first layer whose output shape Keras infers otherwise than memo, as a verdict of its
    own: a layer that ignores a parameter shows here, not later as another layer's error."""
    for l, want in zip(layers_of(spec), shapes):
        if l["class_name"] == "InputLayer" or not want:
            continue
        got = model.get_layer(l["name"]).output
        got = tuple(got[0].shape if isinstance(got, (list, tuple)) else got.shape)
        if len(got) != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(got)):
            raise Misshapen("layer %s (%s): Keras 3 infers the output shape %s, memo %s" % (l["name"], l["class_name"], list(got[1:]),
                                                                                            list(want[1:])), l["name"])


def culprit(spec, shapes, error):
    """The layer Keras would not build, for a model it would not build: the first layer that
    fails built alone on inputs of the shapes memo infers, or whose output shape alone differs."""
    names = {l["name"]: i for i, l in enumerate(layers_of(spec))}
    for l in layers_of(spec):
        if l["class_name"] == "InputLayer":
            continue
        try:
            layer = keras.layers.deserialize({"class_name": l["class_name"], "config": dict(l["config"])}, custom_objects=CUSTOM)
            producers = [e[0] for e in (l["inbound_nodes"][0] if l["inbound_nodes"] else [])]
            ins = [keras.Input(batch_shape=expected_shape(shapes[names[p]]), dtype=l["config"].get("dtype", "float32")) for p in producers]
            out = layer(ins[0] if len(ins) == 1 else ins)
        except Exception as e:  # noqa: BLE001: whatever the library raises is the answer
            return l["name"], e
        got = tuple(out.shape)
        want = shapes[names[l["name"]]]
        if len(got) != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(got)):
            return l["name"], Misshapen("layer %s (%s): Keras 3 infers the output shape %s, memo %s" % (l["name"], l["class_name"], list(got[1:]),
                                                                                                     list(want[1:])), l["name"])
    return "", error


def build(spec, shapes, batch):
    for l in layers_of(spec):
        keras3_dialect(l["config"])
        # Keras 3's SpatialDropout layers take neither noise_shape (theirs to choose) nor trainable
        # (Keras 2 wrote both; both are inert at inference).
        if l["class_name"].startswith("SpatialDropout"):
            l["config"].pop("noise_shape", None)
            l["config"].pop("trainable", None)
    # A stateful RNN needs the batch size fixed (Keras 3 says so; Keras 2 let it pass).
    stateful = lambda c: c.get("stateful") or (isinstance(c.get("layer"), dict) and c["layer"].get("config", {}).get("stateful"))
    if any(stateful(l["config"]) for l in layers_of(spec)):
        for l in layers_of(spec):
            if l["class_name"] == "InputLayer":
                l["config"]["batch_input_shape"][0] = batch
    # Every layer no other reads is among the outputs: a Functional model holds only the layers its
    # outputs need, and memo's models may have others.
    read = {e[0] for l in layers_of(spec) for e in (l["inbound_nodes"][0] if l["inbound_nodes"] else [])}
    outputs = spec["config"]["output_layers"]
    own = len(outputs)
    for l in layers_of(spec):
        if l["class_name"] != "InputLayer" and l["name"] not in read and not any(o[0] == l["name"] for o in outputs):
            outputs.append([l["name"], 0, 0])
    try:
        model = keras.Model.from_config(copy.deepcopy(spec["config"]), custom_objects=CUSTOM)
    except Exception as e:  # noqa: BLE001
        layer, error = culprit(spec, shapes, e)
        if isinstance(error, Misshapen):
            raise error
        raise Declined(first_line(error), layer) if lacks(error) else Failed(error, layer)
    check_shapes(model, spec, shapes)
    return model, own


def to_numpy(t):
    t = ops.convert_to_numpy(t)
    return t.astype(np.float32) if t.dtype != np.float32 else t


def compiled(model):
    """The whole model compiled by the backend's compiler (a new function per model)."""
    if opts.backend == "tensorflow":
        return tf.function(lambda xs: model(xs, training=False), jit_compile=True)
    if opts.backend == "jax":
        trainable = [v.value for v in model.trainable_variables]
        fixed = [v.value for v in model.non_trainable_variables]
        f = jax.jit(lambda t, n, xs: model.stateless_call(t, n, xs, training=False)[0])
        return lambda xs: f(trainable, fixed, xs)
    return torch.compile(lambda xs: model(xs, training=False))


def eager(model, spec, inputs, forced):
    """Every layer applied to concrete tensors in memo's node order, each reading its producers'
    outputs, or with `forced` the given tensors."""
    layers = layers_of(spec)
    index = {l["name"]: i for i, l in enumerate(layers)}
    input_names = [e[0] for e in spec["config"]["input_layers"]]
    values = []
    for l in layers:
        if l["class_name"] == "InputLayer":
            values.append(ops.cast(inputs[input_names.index(l["name"])], l["config"].get("dtype", "float32")))
            continue
        producers = [index[e[0]] for e in (l["inbound_nodes"][0] if l["inbound_nodes"] else [])]
        xs = [ops.cast(forced[k], layers[k]["config"].get("dtype", "float32")) if forced else values[k] for k in producers]
        try:
            out = model.get_layer(l["name"])(xs[0] if len(xs) == 1 else xs, training=False)
        except Exception as e:  # noqa: BLE001
            raise Failed(e, l["name"])
        values.append(out[0] if isinstance(out, (list, tuple)) else out)
    return values


def serve(frame):
    start = time.perf_counter()
    if os.environ.get("MEMO_KERAS_FRAMES"):
        serve.count = getattr(serve, "count", 0) + 1
        with open(os.path.join(os.environ["MEMO_KERAS_FRAMES"], "request-%d.bin" % serve.count), "wb") as f:
            f.write(frame)
    try:
        q = decode(frame)

        spec = json.loads(q["json"])
        model, own = build(spec, q["shapes"], q["inputs"][0].shape[0] if q["inputs"] else None)
        set_weights(model, q["weights"])
        if q["mode"] == 0:
            feeds = [ops.convert_to_tensor(x) for x in q["inputs"]]
            feeds = feeds[0] if len(feeds) == 1 else feeds
            try:
                y = compiled(model)(feeds) if opts.jit else model(feeds, training=False)
            except Exception as e:  # noqa: BLE001
                # Which layer fails, when it fails alone too; when none does, the failure is the
                # library's running of the whole graph.
                try:
                    eager(model, spec, q["inputs"], [])
                except Failed as f:
                    raise Failed(e, f.layer)
                raise GraphFailed(first_line(e))
            y = list(y) if isinstance(y, (list, tuple)) else [y]
            outputs = y[:own]
            names = [o[0] for o in spec["config"]["output_layers"][:own]]
        else:
            outputs = eager(model, spec, q["inputs"], q["forced"])
            names = [l["name"] for l in layers_of(spec)]
        values = [to_numpy(t) for t in outputs]
        at = {l["name"]: i for i, l in enumerate(layers_of(spec))}
        for name, v in zip(names, values):
            want = q["shapes"][at[name]]
            if v.ndim != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(v.shape)):
                raise Misshapen("layer %s: Keras 3 computes an output of shape %s per sample, memo %s" % (name, list(v.shape[1:]), list(want[1:])), name)
        answer(encode(0, (time.perf_counter() - start) * 1e3, "", "", values))
    except Exception as e:  # noqa: BLE001
        cause = getattr(e, "cause", e)
        status = 3 if isinstance(e, Misshapen) else 2 if lacks(e) or lacks(cause) else 4 if isinstance(e, GraphFailed) else 1
        message = first_line(cause) if isinstance(e, Failed) else first_line(e) if not isinstance(e, (Declined, Misshapen, GraphFailed)) else str(e)
        if opts.replay:
            import traceback

            traceback.print_exc()
        answer(encode(status, (time.perf_counter() - start) * 1e3, message, getattr(e, "layer", ""), []))
    keras.backend.clear_session()


if opts.replay:
    import frames

    frames.answer = lambda parts: print("status %d, %.1f ms: %s" % (parts[0][0], np.frombuffer(parts[1])[0], Reader(b"".join(parts[2:])).str()))
    answer = frames.answer
    for path in opts.replay:
        with open(path, "rb") as f:
            serve(f.read())
else:
    serve_frames(serve)
