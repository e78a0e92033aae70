"""A fault planted in PyTorch for the tests of reproducers (tests/cli/reproduce.sh): with this folder
on PYTHONPATH and MEMO_PLANTED_FAULT=torch-conv2d, every Python that starts (memo's PyTorch worker,
and a reproducer run alone) gets a torch.nn.functional.conv2d whose results are 1 % too large, as a
library with a wrong kernel would. Without the variable nothing is imported or changed."""
import os

if os.environ.get("MEMO_PLANTED_FAULT") == "torch-conv2d":
    import torch.nn.functional as F

    _conv2d = F.conv2d

    def conv2d(*args, **kwargs):
        return _conv2d(*args, **kwargs) * 1.01

    F.conv2d = conv2d
