# TensorFlow 2.21 on the CPU: tf.nn.elu and tf.nn.selu (Keras' elu and selu on TensorFlow) compute
# exp(x) - 1 for x < 0 in the input's dtype, not expm1(x): for a small negative x, exp(x) rounds to
# 1 and the result to 0 (or to a multiple of the dtype's step at 1). In float16 and bfloat16 that
# reaches values a network holds: elu(-1e-4) is 0 in float16, elu(-1e-3) is 0 in bfloat16, and
# elu(-3e-4) is -4.9e-4 in float16, 63 % off. (A recurrent layer then grows such an error: a float16
# ConvLSTM1D with selu turned a state of -2e-4 into 0 and ended with the other sign.) Exits 1
# while the fault shows.
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

print("tensorflow", tf.__version__)
x = np.array([-1e-4, -3e-4, -1e-3], np.float64)
exact = {"elu": np.expm1(x), "selu": 1.0507009873554805 * 1.6732632423543772 * np.expm1(x)}
faults = 0
for name, f in [("elu", tf.nn.elu), ("selu", tf.nn.selu)]:
    for dtype in [tf.float16, tf.bfloat16]:
        got = tf.cast(f(tf.constant(x, dtype)), tf.float64).numpy()
        # The input rounded to the dtype is close to x; the answer should be within a few of the
        # dtype's relative steps of the exact one (float16 2^-11, bfloat16 2^-8), not 0.
        step = 2.0**-11 if dtype == tf.float16 else 2.0**-8
        bad = np.abs(got - exact[name]) > 4 * step * np.abs(exact[name])
        print("%s %s on %s: %s, expected %s" % (name, dtype.name, x.tolist(), got.tolist(), exact[name].round(7).tolist()))
        faults += int(bad.any())
sys.exit(1 if faults else 0)
