# Keras 3.15.1 on JAX: a GRU without a bias (use_bias=False, reset_after=True, the default) in
# float16 or bfloat16 fails: the JAX backend's GRU (keras/src/backend/jax/rnn.py, gru) stands in
# zeros for the missing biases with jnp.zeros(3 * units), which is float32, so the step's new state
# is float32 where lax.scan's carry is float16 ("scan body function carry input and carry output
# must have equal types"). With a bias, or in float32, the layer runs. Exits 1 while the fault shows.
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"
import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

print("keras", keras.__version__, "backend", keras.backend.backend(), "jax", jax.__version__)
faults = 0
x = np.ones((2, 4, 2), "float32")
for dtype in ["float16", "bfloat16"]:
    for use_bias in [True, False]:
        gru = keras.layers.GRU(3, use_bias=use_bias, dtype=dtype, kernel_initializer="ones", recurrent_initializer="ones")
        try:
            got = keras.ops.convert_to_numpy(keras.ops.cast(gru(keras.ops.cast(x, dtype)), "float32"))
            print("GRU(3, use_bias=%s, dtype=%s): runs, %s" % (use_bias, dtype, got[0].round(3)))
        except Exception as e:
            message = " ".join(str(e).split())
            at = message.find("scan body")
            print("GRU(3, use_bias=%s, dtype=%s) fails: %s" % (use_bias, dtype, message[at if at >= 0 else 0:][:200]))
            faults += 1
sys.exit(1 if faults else 0)
