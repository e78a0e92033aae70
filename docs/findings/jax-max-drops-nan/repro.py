# JAX 0.10.2 (XLA:CPU): a max over the middle axis of a (2, n, 5) float32 array drops a NaN
# once n reaches 410 (np.max, and jnp.max for smaller n, return NaN). Keras' GlobalMaxPooling1D
# on JAX inherits it. Exits 1 while the fault shows.
import sys

import jax
import jax.numpy as jnp
import numpy as np

x = np.zeros((2, 2186, 5), np.float32)
x[:, 1000, :] = np.nan
got = np.asarray(jnp.max(x, axis=1))
print("jax", jax.__version__, "jaxlib", jax.lib.__version__ if hasattr(jax.lib, "__version__") else "")
print("jnp.max(x, axis=1)[0] =", got[0], " np.max:", np.max(x, axis=1)[0])
sys.exit(0 if np.isnan(got).all() else 1)
