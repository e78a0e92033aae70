"""memo's Keras 3 worker. It builds Keras models (memo's Keras JSON, model.to_json()'s form) with
Keras 3 itself on one Keras backend (tensorflow, jax or torch; KERAS_BACKEND is read once, at
import, so one worker serves one backend), sets the weights memo drew, runs the inputs and answers
with the outputs. It speaks the TensorFlow.js worker's protocol (tools/tfjs-worker/worker.js has
the frames field by field): one request at a time from fd 3, each answer to fd 4.

Plain runs call the whole model: eagerly, op by op (`model(x)`), or with --jit compiled whole by
the backend's compiler (XLA through tf.function(jit_compile=True) or jax.jit, Inductor through
torch.compile), so that a compiler's fusion and layout passes are tested against the eager run.
Every node's output and teacher forcing apply each layer in turn, eagerly.

A request of mode 3 asks for the model's reproducer instead (reproducer.py): a script in Keras'
terms and its data, written into the folder the request names, and run once.

Usage: worker.py --backend tensorflow|jax|torch [--jit]"""
import argparse
import collections
import copy
import functools
import gc
import inspect
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
# MEMO_KERAS_FRAMES=DIR: each request frame is also saved there (request-BACKEND-PID-N.bin: workers may
# share DIR), to --replay it.
opts = args.parse_args()

# One thread per worker: a campaign runs several lanes of models at once, each library in its own
# worker, and a library that spreads each small model over every core only makes them wait.
os.environ["KERAS_BACKEND"] = opts.backend
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# A model compiled whole outlives the worker, as Inductor's code does: XLA's caches on disk, for JAX
# and TensorFlow. A campaign starts from the seeds the last one started from and meets many of its
# models again: 15 models of a campaign compiled by jax.jit took 8.3 s with the cache empty (5 % more
# than with none) and 3.0 s with it full. Not for JAX's eager runs, which compile each layer alone:
# writing thousands of small programs cost a 60 s campaign a third of its models, and reading them
# back saved less than a tenth. MEMO_COMPILE_CACHE names the folder; set empty, nothing is kept.
CACHE = opts.jit and os.environ.get("MEMO_COMPILE_CACHE", os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memo"))
if CACHE and opts.backend == "tensorflow":
    os.environ.setdefault("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=" + os.path.join(CACHE, "tensorflow-xla"))

# TensorFlow's AutoGraph writes each function it converts as a file in the temporary folder, left
# there when a worker is killed: each worker keeps them in a folder of its own, removed at its exit,
# and sweeps those of workers that are gone.
import atexit  # noqa: E402
import glob  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

for old in glob.glob(os.path.join(tempfile.gettempdir(), "memo-keras-*")):
    pid = old.rsplit("-", 1)[-1]
    if pid.isdigit() and not os.path.exists("/proc/" + pid):
        shutil.rmtree(old, ignore_errors=True)
tempfile.tempdir = os.path.join(tempfile.gettempdir(), "memo-keras-%d" % os.getpid())
os.makedirs(tempfile.tempdir, exist_ok=True)
atexit.register(shutil.rmtree, tempfile.tempdir, True)

import numpy as np  # noqa: E402

if opts.backend != "jax":
    # Keras imports JAX wherever it is installed (for a checkpointing callback memo never uses): a
    # second of CPU at each start of a TensorFlow or PyTorch worker. Keras goes on without it.
    sys.modules["jax"] = None
if opts.backend != "tensorflow":
    # Keras imports TensorFlow, where installed, the first time it serializes a layer (to ask
    # whether a value is a tf.TensorShape: Bidirectional copies its layer so): 2.5 s of CPU and
    # 1,700 modules in the middle of a JAX or PyTorch worker's campaign. Keras goes on without it.
    sys.modules["tensorflow"] = None

import keras  # noqa: E402
from keras import ops  # noqa: E402

from frames import CompileTime, Reader, answer, non_finite_nodes, result_frame, serve_frames  # noqa: E402
import reproducing  # noqa: E402

if opts.backend == "tensorflow":
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    library_version = tf.__version__
elif opts.backend == "jax":
    import jax
    from jax._src.interpreters import mlir

    # JAX makes an MLIR context for each program it lowers, 5 ms of registering dialects: a
    # layer's lowering took 18 ms, and the eager run lowers each new layer. One context serves
    # them all (the programs are the same; its types are shared, made thread-safe by JAX).
    _context = mlir.make_ir_context()
    mlir.make_ir_context = lambda: _context

    if CACHE:
        jax.config.update("jax_compilation_cache_dir", os.path.join(CACHE, "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        jax.config.update("jax_compilation_cache_max_size", 1 << 30)  # the least recently used go first
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


@functools.lru_cache(maxsize=None)
def constructor_args(class_name):
    """The parameters a layer class's constructor names (none for a class Keras lacks): asked for
    each layer of each model, answered once a class."""
    cls = CUSTOM.get(class_name)
    return frozenset(inspect.signature(cls.__init__).parameters) if cls else frozenset()


def keras3_dialect(class_name, config):
    """A Keras 2 layer config as Keras 3 reads it for inference. Every initializer the class takes
    becomes Unset, those memo's JSON leaves out too (memo sets every weight; a default one, random
    or orthogonal, ran on the backend: JAX compiled it for each new weight shape, 16 ms a variable),
    and LSTM's unit_forget_bias goes (it adds ones to the bias's initial value);
    regularizers and constraints go (they act in training only)."""
    takes = constructor_args(class_name)
    for key in takes | set(config):
        if key.endswith("_initializer"):
            config[key] = {"class_name": "Unset", "config": {}}
    if "unit_forget_bias" in takes:
        config["unit_forget_bias"] = False
    for key in list(config):
        v = config[key]
        if key.endswith("_regularizer") or key.endswith("_constraint"):
            config.pop(key)
        elif key == "layer" and isinstance(v, dict):
            keras3_dialect(v.get("class_name", ""), v.get("config", {}))


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
    if q["mode"] == 3:
        q.update(reproducing.read_request(r))
    return q


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


def set_weights(layer, name, weights):
    """memo's weights of the node `name` into its Keras layer."""
    variables = layer.weights
    if not variables:
        return
    given = weights.get(name)
    if not given:
        raise Declined("layer %s: Keras has %d weights, memo none" % (name, len(variables)), name)
    values = []
    for v in variables:
        w = given.get(memo_name(v))
        if w is None:
            w = given.get(ALIASES.get(memo_name(v), ""))
        if w is None:
            raise Declined("layer %s: Keras has a weight %s that memo does not (memo has %s)" % (name, v.path, ", ".join(given)), name)
        values.append(w)
    if len(values) != len(given):
        raise Declined("layer %s: Keras has %d weights, memo %d" % (name, len(variables), len(given)), name)
    layer.set_weights(values)


# What Keras says when it lacks something (a class, a keyword, a dtype), rather than when it fails.
# (TensorFlow's CPU kernels of transposed and grouped convolutions take channels_last only: "only
# supports NHWC"; its transposed convolutions on the CPU take no dilation: "do not yet support
# dilation rates larger than 1".)
LACKS = re.compile(r"Could not locate class|Unknown layer|Unrecognized keyword arguments|Could not interpret|not supported|"
                   r"is not implemented|NotImplementedError|Unknown activation|Invalid dtype|not understood|does not support|"
                   r"only supports (the )?ND?HWC|Could not find device for node|not currently supported|Unsupported|"
                   r"Current implementation only supports|not yet support")


def lacks(e):
    return isinstance(e, (Declined, NotImplementedError)) or bool(LACKS.search("%s: %s" % (type(e).__name__, e)))


def first_line(e):
    """The library's own words: the first line of its message, past Keras' wrapping ("Exception
    encountered when calling X.call()."), which names the layer but not the fault."""
    lines = [l.strip() for l in str(e).strip().split("\n") if l.strip()]
    if len(lines) > 1 and lines[0].startswith("Exception encountered when calling"):
        lines = [lines[1] + " (" + lines[0][len("Exception encountered when calling "):].rstrip(".") + ")"]
    return "%s: %s" % (type(e).__name__, lines[0][:400]) if lines else type(e).__name__


def refusal(e):
    """Why Keras would not make a layer from its configuration: Keras wraps the constructor's own
    words ("The `padding` argument must be ... Received: causal") in "could not be deserialized
    properly ... Exception encountered: ..."."""
    text = str(e)
    said = text.rfind("Exception encountered:")
    return first_line(e) if said < 0 else text[said + len("Exception encountered:"):].strip()[:400]


def layers_of(spec):
    return spec["config"]["layers"]


def expected_shape(want):
    return tuple(None if d < 0 else d for d in want)


# Keras 3 refuses a "/" in a layer's name (Keras 2 took it: MEMO's seed models have conv1/conv):
# the worker names such a layer otherwise and answers with memo's name.
SLASH = "__slash__"


def keras_name(name):
    return name.replace("/", SLASH)


def memo_layer(name):
    return name.replace(SLASH, "/")


def plain_names(spec):
    config = spec["config"]
    for l in config["layers"]:
        l["name"] = keras_name(l["name"])
        l["config"]["name"] = keras_name(l["config"].get("name", l["name"]))
        for node in l["inbound_nodes"]:
            for e in node:
                e[0] = keras_name(e[0])
    for key in ("input_layers", "output_layers"):
        for e in config[key]:
            e[0] = keras_name(e[0])
    return spec


def producers(l):
    return [e[0] for e in (l["inbound_nodes"][0] if l["inbound_nodes"] else [])]


def is_stateful(config):
    return bool(config.get("stateful") or (isinstance(config.get("layer"), dict) and config["layer"].get("config", {}).get("stateful")))


def reset_state(layer):
    """A stateful recurrent layer's state back to zeros (Bidirectional's too)."""
    (getattr(layer, "reset_state", None) or getattr(layer, "reset_states"))()


class Pool:
    """Keras layers built before, by their class, configuration (but for the name) and input
    shapes and dtypes, for the next models to reuse with memo's weights set anew. A model made by
    mutating another shares most of its layers with it, and building a layer (its construction,
    Keras' shape inference, its variables) is most of the cost of a small model. A layer a model
    uses twice is two layers of the pool. Each entry keeps the output shape Keras inferred."""

    limit = 512

    def __init__(self):
        self.entries = collections.OrderedDict()  # key -> [(layer, inferred output shape, step)]
        self.size = 0

    def take(self, l, in_shapes, in_dtypes, batch, used):
        config = l["config"]
        keras3_dialect(l["class_name"], config)
        # Keras 3's SpatialDropout layers take neither noise_shape (theirs to choose) nor trainable
        # (Keras 2 wrote both; both are inert at inference).
        if l["class_name"].startswith("SpatialDropout"):
            config.pop("noise_shape", None)
            config.pop("trainable", None)
        stateful = is_stateful(config)
        # A stateful RNN needs the batch size fixed (Keras 3 says so; Keras 2 let it pass).
        shapes = [((batch if stateful else None),) + tuple(s[1:]) for s in in_shapes]
        key = json.dumps([l["class_name"], {k: v for k, v in config.items() if k != "name"}, shapes, in_dtypes], sort_keys=True)
        n = used[key] = used.get(key, 0) + 1
        have = self.entries.setdefault(key, [])
        self.entries.move_to_end(key)
        if len(have) < n:
            have.append(self.make(l, shapes, in_dtypes, have[0][2] if have else None))
            self.size += 1
            while self.size > self.limit:
                _, gone = self.entries.popitem(last=False)
                self.size -= len(gone)
        layer, inferred, step = have[n - 1]
        if stateful:
            reset_state(layer)
        return layer, inferred, step

    @staticmethod
    def make(l, shapes, dtypes, twin_step):
        name = l["config"]["name"]
        try:
            layer = keras.layers.deserialize({"class_name": l["class_name"], "config": copy.deepcopy(l["config"])}, custom_objects=CUSTOM)
        except Exception as e:  # noqa: BLE001: a constructor refusing its arguments is what Keras lacks
            raise Declined(refusal(e), name)
        try:
            ins = [keras.KerasTensor(s, dtype=d) for s, d in zip(shapes, dtypes)]
            out = layer(ins[0] if len(ins) == 1 else ins)  # Keras' shape inference, which builds the layer
        except Exception as e:  # noqa: BLE001: whatever the library raises is the answer
            raise Declined(first_line(e), name) if lacks(e) else Failed(e, name)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return layer, tuple(out.shape), eager_step(layer, twin_step)


POOL = Pool()


def eager_step(layer, twin_step=None):
    """How a layer runs op by op: its call, on TensorFlow and PyTorch. JAX has no kernels but
    compiled ones (every op is compiled by XLA for its shapes), so its "op by op" is each layer
    compiled alone, once per layer of the pool and shapes of its inputs: one compilation a layer
    rather than one an op (step.compiled holds XLA's executables, by signature). A second layer of
    the same class, configuration and shapes (`twin_step`: the first one's step) computes the same
    function of its variables: it runs the first one's compiled code."""
    if opts.backend != "jax":
        return lambda x: layer(x, training=False)
    f = twin_step.jitted if twin_step else jax.jit(lambda t, n, x: stateless(layer, t, n, x))
    compiled = twin_step.compiled if twin_step else {}

    def state():
        return [v.value for v in layer.trainable_variables], [v.value for v in layer.non_trainable_variables]

    def lowered(x):
        """XLA's program of the layer for inputs like x (arrays or shapes), to compile."""
        return f.lower(*state(), x)

    def step(x):
        t, n = state()
        sig = signature(x)
        if sig not in compiled:
            compiled[sig] = CompileTime.timed(lambda: f.lower(t, n, x).compile(QUICK))
        return compiled[sig](t, n, x)

    step.jitted, step.compiled, step.lowered = f, compiled, lowered
    return step


def signature(x):
    """The shapes and dtypes of a layer's input (one array or a list), which its code is compiled for."""
    return tuple((tuple(a.shape), str(a.dtype)) for a in (x if isinstance(x, (list, tuple)) else [x]))


# JAX's eager run tests its kernels and Keras' ops, a layer at a time; XLA's fusion and LLVM's
# optimisation at their defaults are what keras-jax-xla tests, on whole models. So the eager run's
# layers are compiled quickly: the older fusion emitter, LLVM unoptimised. XLA took 16 ms rather
# than 47 for a small layer, whose run keeps its kernels (docs/benchmarks.md).
QUICK = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}

# XLA compiles with Python's lock released: a model's new layers are compiled two at a time, on the
# core the other workers leave free, while Python lowers the next ones. Only JAX's eager run
# compiles layer by layer.
COMPILERS = None
if opts.backend == "jax" and not opts.jit:
    import concurrent.futures

    COMPILERS = concurrent.futures.ThreadPoolExecutor(2)


def stateless(layer, trainable, fixed, x):
    """The layer's outputs for x with the variables' values given (JAX traces functions of values).
    stateless_call passes `training` on only to a call that takes it."""
    kwargs = {"training": False} if getattr(layer, "_call_has_training_arg", False) else {}
    return layer.stateless_call(trainable, fixed, x, **kwargs)[0]


def first(out):
    return out[0] if isinstance(out, (list, tuple)) else out


def to_numpy(t):
    t = ops.convert_to_numpy(t)
    return t.astype(np.float32) if t.dtype != np.float32 else t


class Graph:
    """memo's model as Keras layers in memo's node order, each reading its producers' outputs."""

    def __init__(self, spec, shapes, weights, batch, strict=True):
        """`strict`: a layer whose output shape Keras infers otherwise than memo is a verdict
        (Misshapen); a reproducer's graph (not strict) keeps it, for its script to show."""
        self.specs = layers_of(spec)
        self.index = {l["name"]: i for i, l in enumerate(self.specs)}
        self.input_names = [e[0] for e in spec["config"]["input_layers"]]
        self.layers, self.steps = [], []
        used = {}
        dtypes = [l["config"].get("dtype", "float32") for l in self.specs]
        dtypes = [d if isinstance(d, str) else d.get("config", {}).get("name", "float32") for d in dtypes]
        for i, l in enumerate(self.specs):
            if l["class_name"] == "InputLayer":
                self.layers.append(None)
                self.steps.append(None)
                continue
            ps = [self.index[p] for p in producers(l)]
            layer, inferred, step = POOL.take(l, [expected_shape(shapes[k]) for k in ps], [dtypes[k] for k in ps], batch, used)
            want = shapes[i]
            if strict and want and (len(inferred) != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(inferred))):
                # A layer that ignores a parameter shows here, not later as another layer's error.
                raise Misshapen("layer %s (%s): Keras 3 infers the output shape %s, memo %s" % (l["name"], l["class_name"], list(inferred[1:]),
                                                                                                list(want[1:])), l["name"])
            set_weights(layer, l["name"], weights)
            self.layers.append(layer)
            self.steps.append(step)
        self.dtypes = dtypes
        if COMPILERS and batch:
            self.compile_ahead(shapes, batch)

    def compile_ahead(self, shapes, batch):
        """Compiles the code of each layer that has none yet for the shapes memo gives its inputs,
        each as soon as it is lowered: XLA compiles on two threads while Python lowers the next
        layer. What cannot be lowered ahead is left to its run, which says why. Lowering and
        compiling are one phase of compiling, timed on the wall (two layers compile at once); a
        model whose layers all have their code compiles nothing."""
        wanted = {}
        for i, l in enumerate(self.specs):
            if self.layers[i] is None:
                continue
            ins = [jax.ShapeDtypeStruct((batch,) + tuple(shapes[k][1:]), self.dtypes[k]) for k in [self.index[p] for p in producers(l)]]
            if any(d < 0 for a in ins for d in a.shape):
                continue
            x = ins[0] if len(ins) == 1 else ins
            step, sig = self.steps[i], signature(x)
            if sig not in step.compiled:
                wanted.setdefault((id(step.compiled), sig), (step, sig, x))
        if not wanted:
            return
        with CompileTime.compiling():
            todo = []
            for step, sig, x in wanted.values():
                try:
                    lowered = step.lowered(x)
                except Exception:  # noqa: BLE001: the layer's own run raises it again, in its place
                    continue
                todo.append((step.compiled, sig, COMPILERS.submit(lowered.compile, QUICK)))
            for into, sig, compiling in todo:
                into[sig] = compiling.result()

    def run(self, inputs, forced=(), call=None):
        """Every node's output: each layer applied in turn by `call(i, x)` (its eager step), or with
        `forced` to the given tensors (teacher forcing)."""
        call = call or (lambda i, x: self.steps[i](x))
        values = []
        for i, l in enumerate(self.specs):
            if self.layers[i] is None:
                values.append(ops.cast(inputs[self.input_names.index(l["name"])], self.dtypes[i]))
                continue
            ps = [self.index[p] for p in producers(l)]
            xs = [ops.cast(forced[k], self.dtypes[k]) for k in ps] if len(forced) else [values[k] for k in ps]
            try:
                out = call(i, xs[0] if len(xs) == 1 else xs)
            except Exception as e:  # noqa: BLE001
                raise Failed(e, l["name"])
            values.append(first(out))
        return values

    def compiled(self, outputs, feeds):
        """The outputs of the whole model compiled by the backend's compiler (a new function per
        model). JAX compiles ahead, on request; TensorFlow and PyTorch compile at the first call,
        which is timed as compiling less the second's run. The graph runs once for all outputs:
        once per output would advance a stateful layer's state between them."""
        at = [self.index[n] for n in outputs]
        pick = lambda values: [values[k] for k in at]
        if opts.backend == "jax":
            state = [([v.value for v in l.trainable_variables], [v.value for v in l.non_trainable_variables]) if l else None for l in self.layers]

            def whole(state, xs):
                step = lambda i, x: stateless(self.layers[i], state[i][0], state[i][1], x)
                return pick(self.run(xs, call=step))

            return CompileTime.timed(lambda: jax.jit(whole).lower(state, feeds).compile())(state, feeds)
        f = lambda xs: pick(self.run(xs, call=lambda i, x: self.layers[i](x, training=False)))
        f = tf.function(f, jit_compile=True) if opts.backend == "tensorflow" else torch.compile(f)
        return CompileTime.first_call(lambda: f(feeds), between=self.reset_states)

    def reset_states(self):
        """Stateful layers back to zero state (a second call starts where the first did)."""
        for i, l in enumerate(self.specs):
            if self.layers[i] is not None and is_stateful(l["config"]):
                reset_state(self.layers[i])


def serve(frame):
    start = time.perf_counter()
    if os.environ.get("MEMO_KERAS_FRAMES"):
        serve.count = getattr(serve, "count", 0) + 1
        with open(os.path.join(os.environ["MEMO_KERAS_FRAMES"], "request-%s-%d-%d.bin" % (opts.backend, os.getpid(), serve.count)), "wb") as f:
            f.write(frame)
    try:
        q = decode(frame)
        spec = plain_names(json.loads(q["json"]))
        q["weights"] = {keras_name(k): v for k, v in q["weights"].items()}
        graph = Graph(spec, q["shapes"], q["weights"], q["inputs"][0].shape[0] if q["inputs"] else None, strict=q["mode"] != 3)
        feeds = [ops.convert_to_tensor(x) for x in q["inputs"]]
        if q["mode"] == 3:  # the bug's reproducer (reproducer.py), written and run once
            import reproducer

            names = [o[0] for o in spec["config"]["output_layers"]]
            script = reproducer.write(q["directory"], q["stem"], q["title"], graph, names, q["inputs"], q["checks"], opts.backend, opts.jit,
                                      library_version, producers)
            answer(result_frame(0, (time.perf_counter() - start) * 1e3, reproducing.command(script), "", []))
            return
        flags = []  # which nodes' outputs hold a NaN or infinity, when every node ran (eagerly)
        if q["mode"] == 0:
            names = [o[0] for o in spec["config"]["output_layers"]]
            if opts.jit:
                try:
                    outputs = graph.compiled(names, feeds)
                except Exception as e:  # noqa: BLE001
                    # Which layer fails, when it fails alone too; when none does, the failure is the
                    # library's compiling or running of the whole graph.
                    try:
                        graph.run(feeds)
                    except Failed as f:
                        raise Failed(e, f.layer)
                    raise GraphFailed(first_line(e))
            else:
                values = graph.run(feeds)
                outputs = [values[graph.index[n]] for n in names]
                flags = non_finite_nodes(to_numpy(t) for t in values)
        else:
            outputs = graph.run(feeds, q["forced"])
            names = [l["name"] for l in layers_of(spec)]
        values = [to_numpy(t) for t in outputs]
        for name, v in zip(names, values):
            want = q["shapes"][graph.index[name]]
            if v.ndim != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(v.shape)):
                raise Misshapen("layer %s: Keras 3 computes an output of shape %s per sample, memo %s" % (name, list(v.shape[1:]), list(want[1:])), name)
        answer(result_frame(0, (time.perf_counter() - start) * 1e3, "", "", values, flags))
    except Exception as e:  # noqa: BLE001
        cause = getattr(e, "cause", e)
        status = 3 if isinstance(e, Misshapen) else 2 if lacks(e) or lacks(cause) else 4 if isinstance(e, GraphFailed) else 1
        message = first_line(cause) if isinstance(e, Failed) else first_line(e) if not isinstance(e, (Declined, Misshapen, GraphFailed)) else str(e)
        if opts.replay:
            import traceback

            traceback.print_exc()
        answer(result_frame(status, (time.perf_counter() - start) * 1e3, message, memo_layer(getattr(e, "layer", "")), []))


# What was imported and built so far lives as long as the worker: the collector need not walk it.
gc.collect()
gc.freeze()

serve_frames(serve, opts.replay)
