# PyTorch 2.13 (CPU): layer_norm returns NaN for a float32 row whose values' squares overflow
# float32 (|x| above about 1.8e19), though its mean and variance are finite: [2e19, 3e19]
# normalises to [-1, 1] and a constant row to 0 (float64 gives both). At 2e19 rows of up to 16
# values fail, at 1e30 longer ones too. Keras' LayerNormalization on PyTorch, and
# torch.nn.LayerNorm, return NaN so. Exits 1 while the fault shows.
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__)
rows = {"[2e19, 3e19]": [2e19, 3e19], "4 x 2e19": [2e19] * 4, "32 x 1e30": [1e30] * 32}
bad = False
for name, row in rows.items():
    x = torch.tensor([row], dtype=torch.float32)
    got = F.layer_norm(x, (len(row),), eps=1e-3)
    want = F.layer_norm(x.double(), (len(row),), eps=1e-3).float()
    ok = torch.equal(got, want)
    bad |= not ok
    print(f"layer_norm of {name}: {got[0, :2].tolist()}, float64 gives {want[0, :2].tolist()}" + ("" if ok else "  <- wrong"))
sys.exit(1 if bad else 0)
