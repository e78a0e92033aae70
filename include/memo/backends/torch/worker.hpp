#pragma once
// memo::torch::worker_runtime: PyTorch itself (its Python package) as a library under test, run
// eagerly op by op ("torch") or compiled whole by torch.compile ("torch-compile": Inductor's
// generated C++ on the CPU, static shapes). Each model goes as Keras JSON, with the weights memo
// draws and the inputs, to a persistent Python worker (tools/torch-worker/worker.py, the
// TensorFlow.js worker's frames: keras_json_worker.hpp) that lowers each layer to torch and
// torch.nn.functional (tools/torch-worker/lowering.py: the lowering of memo's libtorch backend,
// torch/backend.hpp, in Python), and runs it in each node's dtype. Every node's output and
// teacher forcing run layer by layer, eagerly, in either mode.
//
//   memo::torch::worker_runtime eager({.python = ".venv/bin/python", .worker = "tools/torch-worker/worker.py"});
//   memo::torch::worker_runtime inductor({..., .compile = true, .name = "torch-compile"});
//
// Neither ATen nor any libtorch header is included: a campaign runs PyTorch without linking it.
// What the worker cannot carry (float64 values) is declined with the reason; what PyTorch lacks
// (a CPU kernel for float16) the worker declines when it meets it.
#include <filesystem>
#include <string>
#include <vector>

#include "../keras/backend.hpp"
#include "../keras_json_worker.hpp"
#include "../python.hpp"

namespace memo::torch {

struct worker_options {
    std::string python;    // the Python with PyTorch (.venv/bin/python)
    std::string worker;    // path of tools/torch-worker/worker.py
    bool compile = false;  // the whole model compiled by torch.compile (Inductor), else eager
    std::string name = "torch";
    isolation_limits limits{};
};

/// Why the PyTorch worker cannot take node n, or empty.
inline std::string lacks(const model&, const node& n) {
    // The worker's frames carry float32 values: float16 and bfloat16 are exact there, float64 is not.
    if (n.type == dtype::float64) return "memo's PyTorch worker carries float32 values, not float64";
    return {};
}

inline expected<void> supports(const model& m) {
    for (std::size_t i = 0; i < m.size(); ++i)
        if (auto why = lacks(m, m.nodes[i]); !why.empty()) return fail("node " + std::to_string(i) + ": " + why);
    return {};
}

/// Empty when PyTorch is installed for `python` and the worker is there; else why not.
inline std::string unavailable(const worker_options& o) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.worker, ec)) return "the PyTorch worker is not at " + o.worker;
    return python::missing(o.python, "torch", "PyTorch");
}

/// PyTorch behind a Python worker process, as a campaign executor.
class worker_runtime final : public keras_json_worker {
public:
    explicit worker_runtime(const worker_options& o) : keras_json_worker(argv(o), o.limits, o.name, torch::supports) {
        set_writes_reproducers(true);
        set_rewrites_graph(o.compile);  // compiled whole; its every-node and forced runs are eager
    }

private:
    static std::vector<std::string> argv(const worker_options& o) {
        std::vector<std::string> a{o.python, o.worker};
        if (o.compile) a.emplace_back("--compile");
        return a;
    }
};

}  // namespace memo::torch
