"""TensorFlow 2.21 (CPU): tf.nn.softmax (Keras' Softmax layer and softmax activation on
TensorFlow) refuses a tensor of more than 5 dimensions, "Input dims must be <= 5 and >=1", on CPUs
where TensorFlow turns its oneDNN kernels on by default (those with AVX-512 VNNI, BF16 or AMX: the
kernel is mkl_softmax_op); with TF_ENABLE_ONEDNN_OPTS=0, or on other CPUs, the same call works, and
NumPy, PyTorch and JAX take any rank. Each setting runs in a child process (the variable is read at
import). Exits 1 while the fault shows. Needs tensorflow-cpu and numpy."""
import os
import subprocess
import sys

if len(sys.argv) > 1:
    import numpy as np
    import tensorflow as tf

    x = np.random.default_rng(0).random((2, 3, 4, 2, 3, 2), dtype=np.float32)
    try:
        y = tf.nn.softmax(x, axis=-1).numpy()
        print("TensorFlow %s: softmax of a rank-6 tensor runs, rows sum to 1 within %.1e" % (tf.__version__, float(np.abs(y.sum(-1) - 1).max())))
    except Exception as e:
        print("TensorFlow %s: softmax of a rank-6 tensor fails: %s" % (tf.__version__, str(e).strip().splitlines()[0].split("}}")[-1].strip()))
        sys.exit(1)
    sys.exit(0)

failed = False
for onednn in ("1", "0"):
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPP_MIN_LOG_LEVEL="3")
    r = subprocess.run([sys.executable, __file__, "run"], env=env, capture_output=True, text=True)
    print("TF_ENABLE_ONEDNN_OPTS=%s: %s" % (onednn, r.stdout.strip() or r.stderr.strip().splitlines()[-1:]))
    failed |= r.returncode != 0
sys.exit(1 if failed else 0)
