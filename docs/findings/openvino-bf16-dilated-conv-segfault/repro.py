"""OpenVINO (CPU plugin) at inference precision bf16: a Conv with dilation 4 and a kernel of 4
(or 2) over an input of height 1 or 2 kills the process with a segmentation fault when compiled or
run; at f32 it runs. One input channel and one filter are enough: [1, 1, 1, 5] input, kernel 4x4,
dilation 4, 'same' padding (6 on each side). The CPU here has AVX-512 BF16 and AMX, where bf16 is
the plugin's default precision. Each precision runs in a child process, so that the crash is shown,
not suffered. Exits 1 while the fault shows. Needs openvino, onnx and numpy."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

if len(sys.argv) > 1:
    w = numpy_helper.from_array(np.ones((1, 1, 4, 4), np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], dilations=[4, 4], pads=[6, 6, 6, 6])
    graph = helper.make_graph([conv], "dilated", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 5])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    core = ov.Core()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "dilated_conv.onnx")
        onnx.save(model, path)
        compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": sys.argv[1]})
    y = next(iter(compiled.create_infer_request().infer({"x": np.ones((1, 1, 1, 5), np.float32)}).values()))
    print("ran:", y.ravel().tolist())
    sys.exit(0)

print("OpenVINO", ov.__version__)
crashed = False
for precision in ("f32", "bf16"):
    r = subprocess.run([sys.executable, __file__, precision], capture_output=True, text=True)
    said = r.stdout.strip() if r.returncode == 0 else ("killed by signal %d" % -r.returncode if r.returncode < 0 else "exit %d: %s" % (r.returncode, r.stderr.strip().splitlines()[-1:]))
    print("inference precision %s: %s" % (precision, said))
    crashed |= r.returncode < 0
sys.exit(1 if crashed else 0)
