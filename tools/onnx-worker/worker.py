#!/usr/bin/env python3
"""memo's worker for the Python libraries that run memo's ONNX export: ONNX Runtime's PyPI release,
OpenVINO and Apache TVM, an engine each (ort_engine.py, openvino_engine.py, tvm_engine.py: how the
library compiles an .onnx file and runs it). It reads run requests from fd 3 and writes results to
fd 4, one at a time, in the frames of tools/ort-worker/worker.js (memo/backends/onnxruntime/
backend.hpp), so that one C++ executor serves every library that takes ONNX:

  request  u64 onnx length, onnx bytes,
           u32 inputs,  each: str name, u8 type (0 float32, 1 float64), u32 rank, i64 dims, data
           u32 outputs, each: str name
           and, for a reproducer (reproducer.py) rather than a run: str directory, str stem,
           str title, and for each output: u8 checked, if checked the values expected (u32 rank,
           i64 dims, float64 data) and f64 the most rounding explains
  result   u8 status (0 ok, 1 error, 2 declined: an operator or dtype the library lacks), f64
           milliseconds (compiling and running), str message, u32 outputs, each: u8 type
           (0 float32, 1 float64), u32 rank, i64 dims, data; f64 the milliseconds of compiling

Compiling is told on fd 5 as it begins and ends (frames.CompileTime), so that memo holds it to
compiling's limit, apart from the run's. Usage:
  python worker.py --engine ort|openvino|tvm --optimize SETTING [--replay FRAME...]
"""
import argparse
import importlib
import os
import shutil
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the engines; frames.py and reproducing.py

import numpy as np  # noqa: E402

from frames import CompileTime, Reader, answer, put_str, put_tensor, serve_frames  # noqa: E402


def decode(frame):
    """The request: ONNX bytes, inputs by name, output names, and the reproducer part or None."""
    r = Reader(frame)
    model = r.bytes(r.u64())
    feeds = {}
    for _ in range(r.u32()):
        name, kind = r.str(), r.u8()
        feeds[name] = r.array(r.dims(), "<f8" if kind == 1 else "<f4")
    names = [r.str() for _ in range(r.u32())]
    if r.at == len(r.buf):
        return model, feeds, names, None
    repro = {"directory": r.str(), "stem": r.str(), "title": r.str(), "outputs": []}
    for name in names:
        if not r.u8():
            repro["outputs"].append((name, None, None))
            continue
        expected = r.array(r.dims(), "<f8")
        repro["outputs"].append((name, expected, r.f64()))
    return model, feeds, names, repro


def result(status, ms, message, outputs=()):
    """The answer's parts: float32 outputs as they are, any other type as float64."""
    parts = [struct.pack("<Bd", status, ms)]
    put_str(parts, message)
    parts.append(struct.pack("<I", len(outputs)))
    for a in outputs:
        f32 = np.asarray(a).dtype == np.float32
        parts.append(bytes([0 if f32 else 1]))
        put_tensor(parts, a, "<f4" if f32 else "<f8")
    parts.append(struct.pack("<d", CompileTime.ms))
    return parts


def first_line(message):
    """The line that says what failed: after a traceback (TVM's errors carry one), its last error
    line; after OpenVINO's chain of "Exception from <source>:" lines, its last line, and of a graph
    pass's failure ("[Pass] END: node: <the node, its inputs and outputs> CALLBACK HAS THROWN: ...")
    what the pass threw."""
    lines = [s.strip() for s in message.strip().splitlines() if s.strip()]
    if lines and lines[0].startswith("Traceback"):
        said = [s for s in lines if "Error" in s.split(":")[0]]
        return said[-1] if said else lines[-1]
    if lines and lines[0].startswith("Exception from "):
        return lines[-1].rpartition("HAS THROWN: ")[2]
    return lines[0] if lines else "failed"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", required=True, choices=["ort", "openvino", "tvm"])
    p.add_argument("--optimize", required=True, help="the engine's setting (its SETTINGS)")
    p.add_argument("--version", action="store_true", help="print the library's version and exit")
    p.add_argument("--replay", nargs="*", help="serve these saved request frames, printing each answer")
    a = p.parse_args()
    engine = importlib.import_module(a.engine + "_engine")
    if a.version:
        print(engine.version())
        return
    if a.optimize not in engine.SETTINGS:
        p.error("--optimize: %s takes %s" % (a.engine, ", ".join(engine.SETTINGS)))
    import reproducer

    # The model goes to the library as a file, as a reproducer hands it over: in memory where there is /dev/shm.
    scratch = tempfile.mkdtemp(prefix="memo-onnx-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    path = os.path.join(scratch, "model.onnx")

    def serve(frame):
        start = time.perf_counter()
        ms = lambda: (time.perf_counter() - start) * 1e3  # noqa: E731
        try:
            model, feeds, names, repro = decode(frame)
            if repro:
                script = reproducer.write(engine, a.optimize, repro, model, feeds)
                answer(result(0, ms(), reproducer.command(script)))
                return
            with open(path, "wb") as f:
                f.write(model)
            compiled = CompileTime.timed(lambda: engine.compile_model(path, a.optimize))
            outputs = engine.run(compiled, feeds, names)
            del compiled
            answer(result(0, ms(), "", outputs))
        except Exception as e:  # the library's error is the run's result
            message = str(e) or type(e).__name__
            answer(result(2 if engine.declines(message) else 1, ms(), first_line(message)))

    try:
        serve_frames(serve, a.replay)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
