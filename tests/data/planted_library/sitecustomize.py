"""Faults planted in Python libraries for the tests of reproducers (tests/cli/reproduce.sh;
node_planted.js plants them in Node packages). With this folder on PYTHONPATH, every Python that
starts (memo's workers, and a reproducer run alone) gets, as a library with a wrong kernel would:
  MEMO_PLANTED_FAULT=torch-conv2d   a torch.nn.functional.conv2d whose results are 1 % too large;
  MEMO_PLANTED_FAULT=torch-eager    every torch function's floating results 1 % too large, plus 0.01
                                    (a function mode on the main thread: eager runs only, as
                                    torch.compile traces the mode into what it compiles);
  MEMO_PLANTED_FAULT=torch-compile  what torch.compile returns gives outputs 1 % too large, plus
                                    0.01: a compiler's fault, the eager run right;
  MEMO_PLANTED_FAULT=keras-dense    a keras.layers.Dense whose outputs are 1 % too large, on every
                                    Keras backend, eager or compiled (patched once Keras is
                                    imported: importing it here would fix its backend too early);
  MEMO_PLANTED_FAULT=keras-layers   every keras.layers class's floating outputs 1 % too large, plus
                                    0.01 (so that zeros are wrong too);
  MEMO_PLANTED_FAULT=onnxruntime-outputs, openvino-outputs, tvm-outputs
                                    what a session (onnxruntime.InferenceSession.run), an infer
                                    request (openvino.InferRequest.infer) or a Relax virtual
                                    machine's function returns 1 % too large, plus 0.01.
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

elif FAULT in ("torch-eager", "torch-compile"):
    import torch

    def off(y):
        """y 1 % too large, plus 0.01; lists of them alike; what is not a floating tensor as it is."""
        if isinstance(y, (list, tuple)):
            return type(y)(off(v) for v in y)
        return y * 1.01 + 0.01 if isinstance(y, torch.Tensor) and y.is_floating_point() else y

    if FAULT == "torch-eager":

        class Off(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                y = func(*args, **(kwargs or {}))
                in_place = getattr(func, "__name__", "").endswith("_") or (kwargs or {}).get("out") is not None
                return y if in_place else off(y)

        Off().__enter__()  # left entered: every later call on this thread goes through it
    else:
        _compile = torch.compile

        def compile(model=None, **kwargs):
            if model is None:  # torch.compile(**options) as a decorator
                return lambda m: compile(m, **kwargs)
            compiled = _compile(model, **kwargs)
            return lambda *a, **k: off(compiled(*a, **k))

        torch.compile = compile

elif FAULT in ("keras-dense", "keras-layers"):
    import builtins
    import functools

    _import = builtins.__import__

    def off(y):
        """y 1 % too large (keras-dense), plus 0.01 (keras-layers); lists and non-floats as they are."""
        if isinstance(y, (list, tuple)):
            return type(y)(off(v) for v in y)
        if "float" not in str(getattr(y, "dtype", "")):
            return y
        ops = sys.modules["keras"].ops
        y = ops.multiply(y, 1.01)
        return ops.add(y, 0.01) if FAULT == "keras-layers" else y

    def plant(cls):
        call = cls.__dict__["call"]

        @functools.wraps(call)  # Keras reads call's signature to bind its arguments
        def wrong(self, *a, **k):
            return off(call(self, *a, **k))

        cls.call, cls.planted = wrong, True

    def planted_import(name, *args, **kwargs):
        module = _import(name, *args, **kwargs)
        layers = getattr(sys.modules.get("keras"), "layers", None)
        base = getattr(layers, "Layer", None)
        if base is not None and not getattr(base, "planted_all", False):
            base.planted_all = True
            wanted = ["Dense"] if FAULT == "keras-dense" else [n for n, c in vars(layers).items() if isinstance(c, type) and issubclass(c, base)]
            for n in wanted:  # the class that defines each one's call (Conv2D's is BaseConv's)
                owner = next((k for k in getattr(layers, n).__mro__ if "call" in k.__dict__), base)
                if owner is not base and not owner.__dict__.get("planted"):
                    plant(owner)
        return module

    builtins.__import__ = planted_import

elif FAULT in ("onnxruntime-outputs", "openvino-outputs", "tvm-outputs"):
    import numpy as np

    def off(y):
        y = np.asarray(y)
        return y * y.dtype.type(1.01) + y.dtype.type(0.01) if y.dtype.kind == "f" else y

    if FAULT == "onnxruntime-outputs":
        import onnxruntime

        _run = onnxruntime.InferenceSession.run
        onnxruntime.InferenceSession.run = lambda self, *a, **k: [off(y) for y in _run(self, *a, **k)]
    elif FAULT == "openvino-outputs":
        import openvino

        _infer = openvino.InferRequest.infer
        openvino.InferRequest.infer = lambda self, *a, **k: {port: off(y) for port, y in _infer(self, *a, **k).items()}
    else:
        import tvm
        from tvm import relax

        def wrong(y):
            return [wrong(v) for v in y] if not hasattr(y, "numpy") else tvm.runtime.tensor(off(y.numpy()))

        _getitem = relax.VirtualMachine.__getitem__
        relax.VirtualMachine.__getitem__ = lambda self, name: (lambda *a: wrong(_getitem(self, name)(*a)))
