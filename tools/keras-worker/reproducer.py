"""A bug's reproducer in Keras' own terms: memo's model written as a Python script that imports only
Keras, its backend's library and numpy. The model is a functional keras.Model, one line per layer
built from the layer's Keras config (the classes memo adds to Keras' own copied in from the
worker), memo's weights set layer by layer, the inputs and weights in an .npz beside it.

The script runs the model as the worker did (eagerly, or compiled whole by the backend's compiler:
XLA through tf.function(jit_compile=True) or jax.jit, Inductor through torch.compile), compares
each output with the values expected (memo's float64 reference; for a compiled run, the same model
run eagerly) within memo's rounding bound, prints what differs, and exits 1 while the fault shows
and 0 once it does not. A failing call is the fault where memo saw a crash."""
from __future__ import annotations

import os

import numpy as np

from reproducing import CHECK, HEAP_FILL, definitions, needed

WORKER = definitions(os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py"))

HEADER = '''"""{title}

Keras {keras} on {library}, {how}. memo's minimal model as a Keras model: each layer one line,
built from its Keras config, with memo's weights. Run it from its folder: it prints each output's
largest difference from the values expected, {against}, and exits 1 while the fault shows, 0 once it
does not."""
import os
import platform
import sys
{heap_fill}
os.environ["KERAS_BACKEND"] = "{backend}"
import numpy as np
import keras
from keras import ops
{backend_import}
'''

LIBRARY = {"tensorflow": ("tensorflow", "import tensorflow as tf"), "jax": ("jax", "import jax"), "torch": ("torch", "import torch")}

# The model compiled whole (once), and its call.
COMPILED = {
    "tensorflow": ("tf.function(lambda xs: model(xs, training=False), jit_compile=True)", "compiled(x)"),
    "jax": ("jax.jit(lambda t, n, xs: model.stateless_call(t, n, xs, training=False)[0])",
            "compiled([v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables], x)"),
    "torch": ("torch.compile(lambda xs: model(xs, training=False))", "compiled(x)"),
}


def clean(cls: str, config: dict) -> dict:
    """A layer's config as the script builds it: every initializer the class takes is zeros (memo
    sets every weight; a default one would run first, and Orthogonal fails in float16 on JAX, whose
    QR takes no float16), regularizers and constraints left to their defaults (they act in training
    only)."""
    import inspect

    import keras

    c = getattr(keras.layers, cls, None)
    takes = inspect.signature(c.__init__).parameters if isinstance(c, type) else {}
    out = {k: "zeros" for k in takes if k.endswith("_initializer")}
    for k, v in config.items():
        if k.endswith("_initializer"):
            out[k] = "zeros"
        elif k.endswith("_regularizer") or k.endswith("_constraint"):
            continue
        elif k == "layer" and isinstance(v, dict):
            out[k] = {**v, "config": clean(v.get("class_name", ""), v.get("config", {}))}
        else:
            out[k] = v
    return out


def write(directory, stem, title, graph, output_names, inputs, checks, backend, jit, library_version, producers) -> str:
    """Writes STEM.py and STEM.npz into directory; returns the script's path. `graph` is the worker's
    Graph of the model (its layers built and memo's weights set), `checks` the nodes that show the
    fault as (node, expected value, bound): the script's model returns their values, or without
    checks the model's outputs (`output_names`). A compiled run is held against its eager run, not
    `expected`."""
    import keras
    from keras import ops

    os.makedirs(directory, exist_ok=True)
    specs = graph.specs
    outputs = [c[0] for c in checks] if checks else [graph.index[n] for n in output_names]
    expected, bounds = [c[1] for c in checks], [c[2] for c in checks]
    data, lines, classes = {}, [], set()
    batch = inputs[0].shape[0] if inputs else None
    # Only the layers the checked outputs need (keras.Model leaves the others out, and setting their
    # weights would name no layer of it); the inputs stay, as the script feeds them all.
    live, todo = set(), list(outputs)
    while todo:
        k = todo.pop()
        if k not in live:
            live.add(k)
            todo += [graph.index[p] for p in producers(specs[k])]
    for i, l in enumerate(specs):
        name, cls = l["name"], l["class_name"]
        v = "v%d" % i
        if graph.layers[i] is not None and i not in live:
            continue
        if graph.layers[i] is None:
            k = graph.input_names.index(name)
            data["input_%d" % k] = np.asarray(inputs[k], dtype=np.float32)
            shape = tuple(inputs[k].shape[1:])
            lines.append("%s = keras.Input(shape=%r, batch_size=%d, dtype=%r, name=%r)" % (v, shape, batch, graph.dtypes[i], name))
            continue
        classes.add(cls)
        if isinstance(l["config"].get("layer"), dict):
            classes.add(l["config"]["layer"].get("class_name"))
        ps = ["v%d" % graph.index[p] for p in producers(l)]
        arg = ps[0] if len(ps) == 1 else "[%s]" % ", ".join(ps)
        config = clean(cls, l["config"])
        if cls.startswith("SpatialDropout"):  # Keras 3 takes neither (both inert at inference)
            config.pop("noise_shape", None), config.pop("trainable", None)
        lines.append("%s = layer(%r, %r)(%s)" % (v, cls, config, arg))
    weights = []
    for i, layer in enumerate(graph.layers):
        if layer is None or not layer.weights or i not in live:
            continue
        keys = []
        for k, variable in enumerate(layer.weights):  # the values memo set, in Keras' order
            key = "weight_%s_%d" % (specs[i]["name"], k)
            data[key] = np.asarray(ops.convert_to_numpy(ops.cast(variable.value, "float32")))
            keys.append(key)
        weights.append("model.get_layer(%r).set_weights([%s])" % (specs[i]["name"], ", ".join("w[%r]" % k for k in keys)))
    for i, e in enumerate(expected):
        data["expected_%d" % i] = np.asarray(e, dtype=np.float32)
    np.savez(os.path.join(directory, stem + ".npz"), **data)

    custom = sorted(c for c in classes if c in WORKER)
    lib, imp = LIBRARY[backend]
    how = "compiled whole (%s)" % {"tensorflow": "XLA, tf.function(jit_compile=True)", "jax": "XLA, jax.jit", "torch": "Inductor, torch.compile"}[backend] if jit else "eagerly"
    against = "the same model's run eagerly" if jit else "those memo's float64 reference computes"
    script = [HEADER.format(title=title, keras=keras.__version__, library="%s %s" % (lib, library_version), how=how, against=against, backend=backend, heap_fill=HEAP_FILL,
                            backend_import=imp)]
    script += ["\n\n" + WORKER[n][1] + "\n" for n in needed(WORKER, ["_Custom"] + custom) if n != "Unset"]
    script.append('''

# Keras' own layers by class name too: Keras 3 finds the class of a config without its module so.
CLASSES = {n: c for n, c in vars(keras.layers).items() if isinstance(c, type)} | {%s}


def layer(cls, config):
    """A layer from its Keras config: Keras' own class, or one of those above."""
    return keras.layers.deserialize({"class_name": cls, "config": config}, custom_objects=CLASSES)
''' % ", ".join("%r: %s" % (c, c) for c in custom))
    script.append(CHECK)
    input_vars = ["v%d" % graph.index[n] for n in graph.input_names]
    script.append('''

data = np.load("{stem}.npz")
w = {{k: data[k] for k in data.files if k.startswith("weight_")}}
{lines}
model = keras.Model([{inputs}], [{outputs}])
{weights}
x = [ops.cast(data["input_%d" % k], d) for k, d in enumerate({dtypes!r})]
outputs = {names!r}
bounds = {bounds!r}
print("Keras %s on %s %s, numpy %s, Python %s, %s" % (keras.__version__, "{lib}", {lib_module}.__version__, np.__version__, platform.python_version(),
                                                      platform.platform()))
'''.format(stem=stem, lines="\n".join(lines), inputs=", ".join(input_vars), outputs=", ".join("v%d" % k for k in outputs), weights="\n".join(weights),
           dtypes=[graph.dtypes[graph.index[n]] for n in graph.input_names], names=[specs[k]["name"] for k in outputs], bounds=[float(b) for b in bounds],
           lib=lib, lib_module={"tensorflow": "tf", "jax": "jax", "torch": "torch"}[backend]))
    listed = "\ndef listed(out):\n    return list(out) if isinstance(out, (list, tuple)) else [out]\n\n\n"
    stateful = any(getattr(graph.layers[i], "stateful", False) for i in live)
    if stateful:  # each run starts from zero state, as memo's did
        script.append("\ndef zero_state():\n    for layer in model.layers:\n        if getattr(layer, \"stateful\", False):\n            layer.reset_state()\n\n")
    if jit:
        script.append(listed + "expected = listed(model(x, training=False))\n")
        script.append("compiled = %s\n" % COMPILED[backend][0])
        call = COMPILED[backend][1]
    else:
        # A crash checks no values: none were saved, and the script shows the call that fails.
        script.append(listed + 'expected = [data["expected_%%d" %% i] for i in range(%d)]\n' % len(expected))
        call = "model(x, training=False)"
    if stateful:
        call = "(zero_state(), %s)[1]" % call
    script.append('''check = lambda got, show: [differs(name, ops.convert_to_numpy(ops.cast(g, "float32")), np.asarray(e), b, show)
                         for name, g, e, b in zip(outputs, got, expected, bounds)]
try:
    faults = checked_runs(lambda: listed(%s), check)
except Exception as e:  # the fault, where memo saw a crash
    print("the model fails: %%s: %%s" %% (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    sys.exit(1)
if not faults:
    print("the model runs")
sys.exit(1 if any(faults) else 0)
''' % call)
    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as out:
        out.write("".join(script))
    return path
