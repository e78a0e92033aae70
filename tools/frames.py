"""The framing memo's Python workers share, the same as tools/frames.js for the Node.js ones:
requests arrive on fd 3 and answers leave on fd 4, each a little-endian u64 length and a payload.
Strings are a u32 length and UTF-8 bytes; a tensor is a u32 rank, i64 dims and float32 values."""
import contextlib
import math
import os
import struct
import time

import numpy as np


class Reader:
    """Reads a request's fields in order. Fields are unpacked in place (struct.unpack_from), not
    sliced out first: a model's request holds thousands of them, and a slice each was a fifth of
    the PyTorch worker's time per small model."""

    def __init__(self, buf):
        self.buf = memoryview(buf)
        self.at = 0

    def _advance(self, n):
        """The offset of the next n bytes, which are then read."""
        at = self.at
        if at + n > len(self.buf):
            raise ValueError("truncated request")
        self.at = at + n
        return at

    def _take(self, n):
        at = self._advance(n)
        return self.buf[at:at + n]

    def u8(self):
        return self.buf[self._advance(1)]

    def u32(self):
        return _U32.unpack_from(self.buf, self._advance(4))[0]

    def u64(self):
        return _U64.unpack_from(self.buf, self._advance(8))[0]

    def i64(self):
        return _I64.unpack_from(self.buf, self._advance(8))[0]

    def f64(self):
        return _F64.unpack_from(self.buf, self._advance(8))[0]

    def str(self):
        return str(self._take(self.u32()), "utf-8")

    def bytes(self, n):
        return bytes(self._take(n))

    def dims(self):
        n = self.u32()
        return list(struct.unpack_from("<%dq" % n, self.buf, self._advance(8 * n)))

    def tensor(self):
        """A float32 tensor: its dims, then its values."""
        return self.array(self.dims())

    def array(self, dims, dtype="<f4"):
        """Values of these dims as an array of its own (aligned and writable, whatever the frame's
        offset)."""
        n = math.prod(dims)
        size = np.dtype(dtype).itemsize
        return np.frombuffer(self.buf, dtype=dtype, count=n, offset=self._advance(size * n)).reshape(dims).copy()


_U32, _U64, _I64, _F64 = struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<q"), struct.Struct("<d")


def put_str(parts, s):
    b = s.encode("utf-8")
    parts.append(struct.pack("<I", len(b)))
    parts.append(b)


def put_tensor(parts, t, dtype="<f4"):
    """A tensor's dims and its values, as float32 by default (float16 and bfloat16 values are
    exact there)."""
    t = np.asarray(t)
    parts.append(struct.pack("<I", t.ndim))
    parts.append(struct.pack("<%dq" % t.ndim, *t.shape))
    parts.append(np.ascontiguousarray(t, dtype=dtype).tobytes())


class CompileTime:
    """The time the request being served spent compiling (XLA's programs, Inductor's code): a
    compiled backend's time per model is mostly this, and its run time is the rest. serve_frames
    starts each request at 0; result_frame sends it. Each compiling phase is also told as it begins
    and ends on fd 5 (a u8, 1 compiling and 0 running, and the f64 milliseconds since the request
    was read), so that memo holds compiling and running each to its own limit while it waits: a
    compiler slower than the run's limit is not a hang, a run that hangs after it is one."""
    ms = 0.0
    start = 0.0  # when the request was read (perf_counter)
    depth = 0  # compiling phases open (a compile inside a compile is one phase)
    tell = True  # whether fd 5 is there to tell (not in a worker's --replay)

    @classmethod
    def begin_request(cls):
        cls.ms, cls.start, cls.depth = 0.0, time.perf_counter(), 0

    @classmethod
    def _phase(cls, compiling):
        if not cls.tell:
            return
        try:
            os.write(5, struct.pack("<Bd", compiling, (time.perf_counter() - cls.start) * 1e3))
        except OSError:  # no fd 5: run by hand, not by memo
            cls.tell = False

    @classmethod
    @contextlib.contextmanager
    def compiling(cls):
        """A phase of compiling: timed, and told as it begins and ends."""
        cls.depth += 1
        if cls.depth == 1:
            cls._phase(1)
        begun = time.perf_counter()
        try:
            yield
        finally:
            cls.depth -= 1
            if cls.depth == 0:
                cls.ms += (time.perf_counter() - begun) * 1e3
                cls._phase(0)

    @classmethod
    def timed(cls, f):
        """f(), its time counted as compiling."""
        with cls.compiling():
            return f()

    @classmethod
    def first_call(cls, f, between=lambda: None):
        """The result of f()'s second call, where f compiles at its first (tf.function,
        torch.compile): the first call, compiling and one run, is counted as compiling.
        `between` restores what the first call changed (a stateful layer's state)."""
        with cls.compiling():
            f()
        between()
        return f()


def result_frame(status, ms, message, layer, outputs, non_finite=()):
    """The parts of a Python worker's answer (keras_json_worker.hpp decodes it): the status (0 ok,
    1 error, 2 declined, 3 misshapen, 4 an error of the whole graph's run), the worker's time for
    the request, the message, the failing layer, the outputs, the part of the time spent
    compiling (CompileTime), and for a plain run that computed every node, which nodes' outputs
    hold a NaN or infinity (non_finite_nodes): where a NaN starts, without running it again."""
    parts = [bytes([status]), np.float64(ms).tobytes()]
    put_str(parts, message)
    put_str(parts, layer)
    parts.append(np.uint32(len(outputs)).tobytes())
    for t in outputs:
        put_tensor(parts, t)
    parts.append(np.float64(CompileTime.ms).tobytes())
    parts.append(np.uint32(len(non_finite)).tobytes())
    parts.append(bytes(bool(x) for x in non_finite))
    return parts


def non_finite_nodes(values):
    """Per node, whether its output (a NumPy array) holds a NaN or infinity."""
    return [not np.isfinite(v).all() for v in values]


def _read_exactly(fd, n):
    chunks, got = [], 0
    while got < n:
        c = os.read(fd, min(n - got, 1 << 20))
        if not c:
            return None
        chunks.append(c)
        got += len(c)
    return b"".join(chunks)


_printing = False  # --replay: answers are printed, not written to fd 4


def answer(parts):
    """Writes an answer of the given parts, with its length in front, whole."""
    body = b"".join(parts)
    if _printing:
        print("status %d, %.1f ms (%.1f compiling): %s" % (body[0], np.frombuffer(body[1:9])[0], np.frombuffer(body[-8:])[0], Reader(body[9:]).str()))
        return
    buf = memoryview(struct.pack("<Q", len(body)) + body)
    while buf:
        buf = buf[os.write(4, buf):]


def serve_frames(serve, replay=None):
    """Calls serve(frame) for each request, one after the other, until fd 3 closes; or, given the
    files of saved request frames (a worker's --replay), for each of them, printing each answer's
    status, time and message."""
    global _printing
    if replay:
        _printing = True
        for path in replay:
            with open(path, "rb") as f:
                CompileTime.tell = False
                CompileTime.begin_request()
                serve(f.read())
        return
    while True:
        head = _read_exactly(3, 8)
        if head is None:
            return
        frame = _read_exactly(3, struct.unpack("<Q", head)[0])
        if frame is None:
            return
        CompileTime.begin_request()
        serve(frame)
