# TensorFlow 2.21 (CPU): max pooling drops a NaN in its window: tf.nn.max_pool2d answers the
# window's largest other value, where np.max and tf.reduce_max answer NaN. Keras' MaxPooling2D
# on TensorFlow inherits it. Exits 1 while the fault shows.
import sys

import numpy as np
import tensorflow as tf

x = np.array([np.nan, 1.0, 2.0, 3.0], np.float32).reshape(1, 2, 2, 1)
got = tf.nn.max_pool2d(x, 2, 2, "VALID").numpy().ravel()
print("tensorflow", tf.__version__)
print("max_pool2d of [nan, 1, 2, 3]:", got, "(expected nan, as np.max and tf.reduce_max say:", tf.reduce_max(x).numpy(), ")")
sys.exit(0 if np.isnan(got).all() else 1)
