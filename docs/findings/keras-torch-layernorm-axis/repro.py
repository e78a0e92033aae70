# Keras 3.15.1 on PyTorch: LayerNormalization over an axis other than the last calls
# torch's F.layer_norm, which normalises the trailing axes. Where the sizes match it
# normalises the wrong axis silently; where they do not it raises. TensorFlow and JAX are right.
# Exits 1 while the fault shows.
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"
import keras  # noqa: E402
import numpy as np  # noqa: E402

x = np.random.default_rng(0).standard_normal((2, 4, 4)).astype("float32")
mean, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
expected = (x - mean) / np.sqrt(var + 1e-3)
got = keras.ops.convert_to_numpy(keras.layers.LayerNormalization(axis=1)(x))
err = float(np.abs(got - expected).max())
print("keras", keras.__version__, "backend", keras.backend.backend())
print("LayerNormalization(axis=1) on (2, 4, 4): max |keras - numpy| =", err)
sys.exit(1 if err > 1e-4 else 0)
