# JAX 0.10 (XLA:CPU): jit-compiling an unrolled recurrence (an LSTM of one unit, written as a Python
# loop, as Keras' LSTM(unroll=True) on JAX traces it) takes time and memory that grow far faster
# than its length once the gates use an activation that reads its input twice (selu, elu, relu:
# a compare and a select); with sigmoid gates they grow with the length. Keras on JAX met it as a
# worker past 4 GiB compiling LSTM(1, unroll=True, recurrent_activation="selu") over 96 steps.
# Exits 1 while doubling the length multiplies selu's compile time by more than 3.
import sys
import time

import jax
import jax.numpy as jnp


def lstm(act):
    def f(x, w, u):
        h = jnp.zeros((2, 1))
        c = jnp.zeros((2, 1))
        for t in range(x.shape[1]):
            z = x[:, t, :] @ w + h @ u
            i, f_, g, o = act(z[:, 0:1]), act(z[:, 1:2]), jnp.tanh(z[:, 2:3]), act(z[:, 3:4])
            c = f_ * c + i * g
            h = o * jnp.tanh(c)
        return h
    return f


def compile_seconds(act, steps):
    args = (jax.ShapeDtypeStruct((2, steps, 2), "float32"), jax.ShapeDtypeStruct((2, 4), "float32"), jax.ShapeDtypeStruct((1, 4), "float32"))
    t0 = time.perf_counter()
    jax.jit(lstm(act)).lower(*args).compile()
    return time.perf_counter() - t0


print("jax", jax.__version__, "on", jax.devices()[0].platform)
growth = {}
for name, act in [("sigmoid", jax.nn.sigmoid), ("selu", jax.nn.selu)]:
    a, b = compile_seconds(act, 24), compile_seconds(act, 48)
    growth[name] = b / a
    print("%s gates: compiling 24 steps %.1f s, 48 steps %.1f s (x%.1f)" % (name, a, b, growth[name]))
sys.exit(1 if growth["selu"] > 3 else 0)
