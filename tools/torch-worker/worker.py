"""memo's PyTorch worker. It runs memo's models (memo's Keras JSON, model.to_json()'s form) with
PyTorch itself: each layer lowered to torch and torch.nn.functional by lowering.py, the weights
memo drew, the inputs memo gives, and answers with the outputs. It speaks the Keras workers'
frames (tools/tfjs-worker/worker.js has them field by field): one request at a time from fd 3,
each answer to fd 4.

Plain runs call the lowered model whole: eagerly, op by op, or with --compile compiled whole by
torch.compile (Inductor on the CPU, static shapes), so that Inductor's fusion and code generation
are tested against the eager run. Every node's output and teacher forcing apply each layer in
turn, eagerly. Each node runs in its own dtype: the frames carry float32 values, which are cast to
the dtype of the node that reads them, as memo's libtorch backend casts its float64 values.

A request of mode 3 asks for the model's reproducer instead (reproducer.py): a script in
PyTorch's terms and its data, written into the folder the request names.

Usage: worker.py [--compile] [--version] [--replay FRAME...]
MEMO_TORCH_FRAMES=DIR saves each request frame there (request-PID-N.bin: workers may share DIR), to
--replay it."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

args = argparse.ArgumentParser()
args.add_argument("--compile", action="store_true", help="run each model compiled whole by torch.compile (Inductor)")
args.add_argument("--version", action="store_true", help="print PyTorch's version, then exit")
args.add_argument("--replay", metavar="FRAME", nargs="+", help="serve request frames saved in files, print each answer's status and message, and exit")
opts = args.parse_args()

# One thread per worker: a campaign runs several lanes of models at once, each library in its own
# worker, and a library that spreads each small model over every core only makes them wait.
# Inductor's compiled kernels take their thread count from the same setting.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import lowering  # noqa: E402
import reproducer  # noqa: E402
import reproducing  # noqa: E402
from frames import CompileTime, Reader, answer, result_frame, serve_frames  # noqa: E402
from lowering import Declined  # noqa: E402

torch.set_num_threads(1)

if opts.version:
    print("torch %s" % torch.__version__)
    sys.exit(0)

if opts.compile:
    import torch._dynamo
    import torch._inductor.config as inductor

    # Compiles in this process, one kernel after the other: a pool of compile workers takes
    # seconds to start and a small model has few kernels. Compiled graphs are kept in Inductor's
    # cache, a folder of this user's under the temporary directory (/tmp/torchinductor_<user>, or
    # TORCHINDUCTOR_CACHE_DIR), where a model that comes again (a reduction re-runs its
    # candidates; weights are arguments, not constants) finds its graph compiled: tenths of a
    # second instead of seconds.
    inductor.compile_threads = 1
    inductor.fx_graph_cache = True


class Misshapen(Exception):
    """A layer whose output shape the lowering computes otherwise than memo infers."""

    def __init__(self, message, layer=""):
        super().__init__(message)
        self.layer = layer


class Failed(Exception):
    """PyTorch's own error, at a layer."""

    def __init__(self, cause, layer=""):
        super().__init__(str(cause))
        self.cause = cause
        self.layer = layer


class GraphFailed(Exception):
    """The compiled model failed where every layer applied alone runs."""


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


class Node:
    """A layer of the model: its class, dtype, producers (node indices) and the parameters its
    lowering takes; an input layer's index among the model's inputs."""

    def __init__(self, layer: dict, index_of: dict[str, int], input_names: list[str]):
        self.name = layer["name"]
        self.index = index_of[self.name]
        self.cls = layer["class_name"]
        config = layer["config"]
        dtype = config.get("dtype", "float32")
        if dtype not in DTYPES:
            raise Failed(Declined("PyTorch runs no dtype %r" % dtype), self.name)
        self.dtype = DTYPES[dtype]
        self.producers = [index_of[e[0]] for e in (layer["inbound_nodes"][0] if layer["inbound_nodes"] else [])]
        self.input = input_names.index(self.name) if self.cls == "InputLayer" else -1
        try:
            self.params = {} if self.cls == "InputLayer" else lowering.parameters(self.cls, config)
        except Declined as e:
            raise Failed(e, self.name)


def build(spec: dict) -> tuple[list[Node], list[int], list[int]]:
    """The model's nodes in memo's order, its outputs, and every node no other reads (each is
    run, as every layer of the model is, though memo compares the outputs only)."""
    layers = spec["config"]["layers"]
    index_of = {l["name"]: i for i, l in enumerate(layers)}
    input_names = [e[0] for e in spec["config"]["input_layers"]]
    nodes = [Node(l, index_of, input_names) for l in layers]
    outputs = [index_of[o[0]] for o in spec["config"]["output_layers"]]
    read = {k for n in nodes for k in n.producers}
    sinks = outputs + [i for i, n in enumerate(nodes) if i not in read and i not in outputs and n.cls != "InputLayer"]
    return nodes, outputs, sinks


def run_layer(node: Node, xs: list[torch.Tensor], ws: dict[str, torch.Tensor]) -> torch.Tensor:
    return lowering.apply(node.cls, xs, ws, node.params)


def run_layer_checked(node: Node, xs: list[torch.Tensor], ws: dict[str, torch.Tensor]) -> torch.Tensor:
    """run_layer, a failure naming the layer."""
    try:
        return run_layer(node, xs, ws)
    except Exception as e:  # noqa: BLE001: whatever the library raises is the answer
        raise Failed(e, node.name)


def evaluate(nodes: list[Node], inputs: list[torch.Tensor], weights: dict, forced: list[torch.Tensor] | None = None, apply=run_layer_checked) -> list[torch.Tensor]:
    """Every node's value in order, each layer reading its producers' values, or with `forced`
    the given tensors, cast to its dtype."""
    values = []
    for node in nodes:
        if node.cls == "InputLayer":
            values.append(inputs[node.input].to(node.dtype))
            continue
        xs = [(forced[k] if forced is not None else values[k]).to(node.dtype) for k in node.producers]
        ws = {k: w.to(node.dtype) for k, w in weights.get(node.name, {}).items()}
        values.append(apply(node, xs, ws).to(node.dtype))
    return values


def compiled(nodes: list[Node], sinks: list[int]):
    """The whole model compiled by torch.compile: weights are arguments, not constants, so that a
    model that comes again with other weights finds its graph compiled."""

    def model(inputs, weights):
        values = evaluate(nodes, inputs, weights, None, run_layer)
        return [values[k] for k in sinks]

    return torch.compile(model, dynamic=False, fullgraph=True)


def decode(frame: bytes) -> dict:
    r = Reader(frame)
    q = {"json": r.str(), "mode": r.u8(), "weights": {}, "inputs": [], "shapes": [], "forced": []}
    for _ in range(r.u32()):
        layer, name = r.str(), r.str()
        q["weights"].setdefault(layer, {})[name] = r.tensor()
    q["inputs"] = [r.tensor() for _ in range(r.u32())]
    q["shapes"] = [r.dims() for _ in range(r.u32())]
    if q["mode"] == 2:
        q["forced"] = [r.tensor() for _ in range(r.u32())]
    if q["mode"] == 3:
        q.update(reproducing.read_request(r))
    return q


def tensor(a: np.ndarray) -> torch.Tensor:
    """A frame's float32 values (an array of their own: Reader.tensor) as a tensor."""
    return torch.from_numpy(a)


def lacks(e: BaseException) -> bool:
    """What PyTorch or this lowering lacks (a class, a value, a CPU kernel for a dtype, an op
    torch.compile cannot trace), rather than a failure."""
    if isinstance(e, (Declined, NotImplementedError)):
        return True
    if opts.compile and isinstance(e, torch._dynamo.exc.Unsupported):
        return True
    return "not implemented for 'Half'" in str(e) or "not implemented for 'BFloat16'" in str(e)


def unwrapped(e: BaseException) -> BaseException:
    """PyTorch's own error inside torch.compile's wrappers: Dynamo re-raises an op's error on fake
    tensors as a TorchRuntimeError, and Inductor's as a BackendCompilerFailed, each naming only
    the wrapping."""
    while type(e).__module__.startswith("torch._dynamo") and (e.__cause__ or e.__context__):
        e = e.__cause__ or e.__context__
    return e


def first_line(e: BaseException) -> str:
    """The library's own words: the first line of its message (with the next where the first
    only introduces it: Inductor's "backend='inductor' raised:")."""
    e = unwrapped(e)
    lines = [line.strip() for line in str(e).strip().split("\n") if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        lines = [lines[0] + " " + lines[1]]
    return "%s: %s" % (type(e).__name__, lines[0][:400]) if lines else type(e).__name__


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float32).numpy()


def run(q: dict) -> tuple[list[torch.Tensor], list[Node]]:
    """The answer's tensors, and the nodes they are the outputs of."""
    nodes, outputs, sinks = build(json.loads(q["json"]))
    inputs = [tensor(x) for x in q["inputs"]]
    weights = {layer: {k: tensor(w) for k, w in ws.items()} for layer, ws in q["weights"].items()}
    if q["mode"] != 0:
        forced = [tensor(t) for t in q["forced"]] if q["mode"] == 2 else None
        return evaluate(nodes, inputs, weights, forced), nodes
    if not opts.compile:
        values = evaluate(nodes, inputs, weights)
        return [values[k] for k in outputs], [nodes[k] for k in outputs]
    try:
        f = compiled(nodes, sinks)
        values = CompileTime.first_call(lambda: f(inputs, weights))
    except Exception as e:  # noqa: BLE001
        # Which layer fails, when it fails alone too (eagerly); when none does, the failure is
        # torch.compile's of the whole model, or a graph break (what Dynamo cannot trace, which
        # memo's models should not have).
        try:
            evaluate(nodes, inputs, weights)
        except Failed as f:
            raise f if lacks(f.cause) else Failed(e, f.layer)
        if isinstance(e, torch._dynamo.exc.Unsupported):
            raise
        raise GraphFailed(first_line(e))
    return values[: len(outputs)], [nodes[k] for k in outputs]


def check_shapes(values: list[np.ndarray], nodes: list[Node], shapes: list[list[int]]) -> None:
    """The first output whose shape differs from memo's inference, as a verdict of its own."""
    for v, node in zip(values, nodes):
        want = shapes[node.index]
        if v.ndim != len(want) or any(k > 0 and d != want[k] for k, d in enumerate(v.shape)):
            raise Misshapen("layer %s: PyTorch computes an output of shape %s per sample, memo %s" % (node.name, list(v.shape[1:]), list(want[1:])), node.name)


def serve(frame: bytes) -> None:
    start = time.perf_counter()
    if os.environ.get("MEMO_TORCH_FRAMES"):
        serve.count = getattr(serve, "count", 0) + 1
        with open(os.path.join(os.environ["MEMO_TORCH_FRAMES"], "request-%d-%d.bin" % (os.getpid(), serve.count)), "wb") as f:
            f.write(frame)
    try:
        q = decode(frame)
        if q["mode"] == 3:
            nodes, outputs, _ = build(json.loads(q["json"]))
            script = reproducer.write(q["directory"], q["stem"], q["title"], nodes, outputs, q["inputs"], q["weights"], q["checks"], opts.compile)
            said = reproducer.command(script)
            answer(result_frame(0, (time.perf_counter() - start) * 1e3, said, "", []))
            return
        with torch.inference_mode():
            values, nodes = run(q)
            values = [to_numpy(v) for v in values]
        check_shapes(values, nodes, q["shapes"])
        answer(result_frame(0, (time.perf_counter() - start) * 1e3, "", "", values))
    except Exception as e:  # noqa: BLE001
        cause = getattr(e, "cause", e)
        status = 3 if isinstance(e, Misshapen) else 2 if lacks(e) or lacks(cause) else 4 if isinstance(e, GraphFailed) else 1
        message = str(cause) if isinstance(cause, (Declined, Misshapen, GraphFailed)) else first_line(cause)
        if opts.replay:
            import traceback

            traceback.print_exc()
        answer(result_frame(status, (time.perf_counter() - start) * 1e3, message, getattr(e, "layer", ""), []))
    finally:
        if opts.compile:
            torch._dynamo.reset()  # the compiled model and its guards go with the request


def warm_up() -> None:
    """Compiles a model of one op, once: Inductor's first compilation in a process also imports its
    passes and probes the C++ compiler (seconds), which would otherwise count against the first
    model's time."""
    with torch.inference_mode():
        torch.compile(lambda x: torch.relu(x) + 1.0, dynamic=False, fullgraph=True)(torch.ones(2, 3))
    torch._dynamo.reset()


if opts.compile:
    warm_up()

serve_frames(serve, opts.replay)
