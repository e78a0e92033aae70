"""Faults planted in Python libraries for the tests of reproducers (tests/cli/reproduce.sh;
node_planted.js plants them in Node packages). With this folder on PYTHONPATH, every Python that
starts (memo's workers, and a reproducer run alone) gets, as a library with a wrong kernel would:
  MEMO_PLANTED_FAULT=torch-conv2d   a torch.nn.functional.conv2d whose results are 1 % too large;
  MEMO_PLANTED_FAULT=keras-dense    a keras.layers.Dense whose outputs are 1 % too large, on every
                                    Keras backend, eager or compiled (patched once Keras is
                                    imported: importing it here would fix its backend too early).
Without the variable nothing is imported or changed."""
import os
import sys

FAULT = os.environ.get("MEMO_PLANTED_FAULT")

if FAULT == "torch-conv2d":
    import torch.nn.functional as F

    _conv2d = F.conv2d

    def conv2d(*args, **kwargs):
        return _conv2d(*args, **kwargs) * 1.01

    F.conv2d = conv2d

elif FAULT == "keras-dense":
    import builtins
    import functools

    _import = builtins.__import__

    def planted_import(name, *args, **kwargs):
        module = _import(name, *args, **kwargs)
        dense = getattr(getattr(sys.modules.get("keras"), "layers", None), "Dense", None)
        if dense is not None and not getattr(dense, "planted", False):
            call = dense.call

            @functools.wraps(call)  # Keras reads call's signature to bind its arguments
            def wrong(self, *a, **k):
                return sys.modules["keras"].ops.multiply(call(self, *a, **k), 1.01)

            dense.call, dense.planted = wrong, True
        return module

    builtins.__import__ = planted_import
