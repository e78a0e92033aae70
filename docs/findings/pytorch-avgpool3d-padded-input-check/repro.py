# PyTorch 2.13 (CPU): avg_pool3d refuses an input smaller than the kernel even when the padding
# makes room for a window: "input image (T: 1 H: 1 W: 1) smaller than kernel size (kT: 3 ...)" for
# a 1x1x1 input, kernel 3, padding 1, where the documented output size is 1 and avg_pool1d,
# avg_pool2d and max_pool3d accept the same case (its shape check passes check_input_size=true,
# which ignores the padding). Keras' AveragePooling3D(3, padding="same") on PyTorch fails so.
# Exits 1 while the fault shows.
import sys

import numpy as np
import torch
import torch.nn.functional as F

print("torch", torch.__version__)
x = torch.tensor(np.full((1, 1, 1, 1, 1), 5.0, np.float32))
print("max_pool3d(kernel 3, padding 1):", F.max_pool3d(x, 3, stride=1, padding=1).flatten().tolist())
print("avg_pool2d(kernel 3, padding 1):", F.avg_pool2d(x[0], 3, stride=1, padding=1, count_include_pad=False).flatten().tolist())
try:
    got = F.avg_pool3d(x, 3, stride=1, padding=1, count_include_pad=False).flatten().tolist()
except RuntimeError as e:
    print("avg_pool3d(kernel 3, padding 1) fails:", str(e).splitlines()[0], "- expected [5.0]")
    sys.exit(1)
print("avg_pool3d(kernel 3, padding 1):", got, "expected [5.0]")
sys.exit(0 if np.allclose(got, [5.0]) else 1)
