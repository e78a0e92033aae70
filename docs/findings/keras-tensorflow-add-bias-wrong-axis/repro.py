# Keras 3.15 on TensorFlow: keras.ops.add(x, y) takes y for a bias whenever y squeezes to a vector
# whose length is x's axis 1 or last axis, and adds it along the last axis if that one matches
# (tf.nn.bias_add, NHWC), whatever axis y stands on. x of shape (1, 3, 3) plus y of shape (1, 3, 1)
# adds y along the last axis, not along axis 1 as broadcasting says (JAX and PyTorch do). Every
# channels_first layer that adds its bias through ops.add shows it where the last spatial size equals
# the channels: Conv2D, Conv3D, DepthwiseConv2D, ... Exits 1 while the fault shows.
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"
import numpy as np  # noqa: E402
import keras  # noqa: E402

x = np.zeros((1, 3, 3), np.float32)
y = np.array([1, 2, 3], np.float32).reshape(1, 3, 1)
got = np.asarray(keras.ops.add(x, y))
print("keras", keras.__version__, "on", keras.backend.backend())
print("ops.add(zeros (1, 3, 3), [1, 2, 3] of shape (1, 3, 1)):", got[0].tolist())
print("expected (numpy's broadcasting):                          ", (x + y)[0].tolist())

# The same fault in a layer: DepthwiseConv2D, channels_first, 7 channels, width 7.
layer = keras.layers.DepthwiseConv2D(kernel_size=1, data_format="channels_first")
inputs = np.zeros((1, 7, 1, 7), np.float32)
layer.build(inputs.shape)
layer.set_weights([np.ones((1, 1, 7, 1), np.float32), np.arange(7, dtype=np.float32)])
out = np.asarray(layer(inputs))
print("DepthwiseConv2D(channels_first) of zeros with bias 0..6, channel 2:", out[0, 2, 0].tolist(), "(expected all 2.0)")
sys.exit(0 if np.array_equal(got, x + y) and np.all(out[0, 2, 0] == 2.0) else 1)
