# PyTorch 2.13 (CPU, oneDNN 3.12): conv3d of a float32 input with ONE channel laid out channels-last
# (an NDHWC array seen as NCDHW by a permute, as Keras' channels_last layers on PyTorch are), a
# batch of 2 or more, and a stride above 1 on the last axis where that axis' output has one element
# leaves most of its output unwritten: oneDNN's brg_conv_fwd:avx512_core kernel returns whatever the
# output's memory held before (right on a fresh heap, garbage once freed tensors are reused). With
# oneDNN off, or a contiguous copy, the values are right. Exits 1 while the fault shows.
import sys

import numpy as np
import torch

print("torch", torch.__version__)
torch.set_num_threads(1)
rng = np.random.default_rng(0)
x_ndhwc = rng.standard_normal((2, 5, 6, 3, 1)).astype(np.float32)  # batch 2, D 5, H 6, W 3, one channel
w = rng.standard_normal((4, 1, 2, 2, 2)).astype(np.float32)  # 4 filters of 2x2x2
b = np.arange(1, 5, dtype=np.float32)
stride = (1, 1, 3)  # W: 3 -> 1 output

# Expected, in float64 with numpy.
x = x_ndhwc.transpose(0, 4, 1, 2, 3).astype(np.float64)
out = (5 - 2) // 1 + 1, (6 - 2) // 1 + 1, (3 - 2) // 3 + 1
want = np.zeros((2, 4) + out)
for d in range(out[0]):
    for h in range(out[1]):
        for v in range(out[2]):
            patch = x[:, :, d : d + 2, h : h + 2, v * 3 : v * 3 + 2]
            want[:, :, d, h, v] = np.einsum("ncijk,ocijk->no", patch, w) + b

xt = torch.from_numpy(x_ndhwc).permute(0, 4, 1, 2, 3)  # strides (90, 1, 18, 3, 1): channels-last
worst = 0.0
for run in range(3):
    garbage = torch.full((20000,), 1e30)  # a tensor freed before the call, as in any program
    del garbage
    got = torch.conv3d(xt, torch.from_numpy(w), torch.from_numpy(b), stride).double().numpy()
    err = float(np.abs(got - want).max())
    wrong = int((np.abs(got - want) > 1e-4).sum())
    print(f"run {run}: largest difference from numpy {err:.3g}, {wrong} of {got.size} values wrong")
    worst = max(worst, err)
with torch.backends.mkldnn.flags(enabled=False):
    off = torch.conv3d(xt, torch.from_numpy(w), torch.from_numpy(b), stride).double().numpy()
print(f"oneDNN off: largest difference {float(np.abs(off - want).max()):.3g}")
sys.exit(1 if worst > 1e-4 else 0)
