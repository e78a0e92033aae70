# Keras 3.15.1 on PyTorch: average pooling with padding "same" whose padding is uneven on some
# axis (e.g. pool 3, stride 2 over 2 values: 0 before, 1 after) pads the input by replicating its
# edge values and averages them as if they were data, where Keras (and its TensorFlow and JAX
# backends) average only the input's values in the window. Exits 1 while the fault shows.
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"
import keras  # noqa: E402
import numpy as np  # noqa: E402

print("keras", keras.__version__, "backend", keras.backend.backend())
faults = 0
# [10, 20], pool 3, stride 2, "same": one window, [10, 20] and a pad: expected 15.
x = np.array([10.0, 20.0], "float32").reshape(1, 2, 1)
got = keras.ops.convert_to_numpy(keras.layers.AveragePooling1D(3, strides=2, padding="same")(x)).ravel()
print("AveragePooling1D(3, strides=2, 'same') on [10, 20]:", got, "expected [15.]")
faults += not np.allclose(got, [15.0])
# [1, 3] as a 1x2 image, pool (4, 5), stride 1, "same": each window holds both values: expected [2, 2].
x = np.array([1.0, 3.0], "float32").reshape(1, 1, 2, 1)
got = keras.ops.convert_to_numpy(keras.layers.AveragePooling2D((4, 5), strides=1, padding="same")(x)).ravel()
print("AveragePooling2D((4, 5), strides=1, 'same') on [[1, 3]]:", got, "expected [2. 2.]")
faults += not np.allclose(got, [2.0, 2.0])
sys.exit(1 if faults else 0)
