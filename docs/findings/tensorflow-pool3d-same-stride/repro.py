# TensorFlow 2.21 (CPU): 3-D pooling with padding "SAME" and a stride larger than the window
# shifts every window by (stride - window) // 2. One axis of six values, window 1, stride 3:
# the windows start at 0 and 3 (TensorFlow's own 1-D and 2-D pooling say so), 3-D pooling
# takes 1 and 4. The fault is in TensorFlow's own CPU kernels, its default on CPUs without AVX-512
# VNNI, BF16 or AMX; where it turns its oneDNN kernels on instead (those CPUs), they pool right, so
# the script asks for TensorFlow's own (TF_ENABLE_ONEDNN_OPTS=0). Exits 1 while the fault shows.
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # read when TensorFlow is imported

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = np.arange(6, dtype=np.float32)
expected = np.array([0.0, 3.0], np.float32)
print("tensorflow", tf.__version__)
print("avg_pool2d SAME:", tf.nn.avg_pool2d(x.reshape(1, 1, 6, 1), (1, 1), (1, 3), "SAME").numpy().ravel(), "(expected", expected, ")")
bad = False
for op in (tf.nn.avg_pool3d, tf.nn.max_pool3d):
    got = op(x.reshape(1, 1, 1, 6, 1), (1, 1, 1), (1, 1, 3), "SAME").numpy().ravel()
    print(op.__name__, "SAME:", got, "(expected", expected, ")")
    bad |= not np.array_equal(got, expected)
sys.exit(1 if bad else 0)
