#pragma once
// memo::keras3::runtime: Keras 3 itself as a library under test, on one of its backends
// (TensorFlow, JAX or PyTorch), run op by op ("keras-tensorflow", "keras-jax", "keras-torch") or
// compiled whole ("keras-tensorflow-xla" and "keras-jax-xla": XLA through
// tf.function(jit_compile=True) and jax.jit). Each model goes as Keras JSON, with the weights memo
// draws and the inputs, to a persistent Python worker (tools/keras-worker/worker.py, the
// TensorFlow.js worker's frames: keras_json_worker.hpp) that builds it with Keras 3's
// Model.from_config, memo's adapter layers as custom layers, sets the weights layer by layer and
// runs it. One worker per Keras backend: Keras reads KERAS_BACKEND once, at import.
//
//   memo::keras3::runtime tf({.python = ".venv/bin/python", .worker = "tools/keras-worker/worker.py"});
//   memo::keras3::runtime jax_xla({..., .backend = "jax", .jit = true, .name = "keras-jax-xla"});
//
// What Keras 3 dropped from Keras 2.8 (classes, parameter values) is declined with the reason,
// never a false inconsistency.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../keras_json_worker.hpp"
#include "../python.hpp"

namespace memo::keras3 {

struct options {
    std::string python;                  // the Python with Keras and the backend's library (.venv/bin/python)
    std::string worker;                  // path of worker.py
    std::string backend = "tensorflow";  // tensorflow, jax or torch
    bool jit = false;                    // the whole model compiled: XLA (tensorflow, jax), Inductor (torch)
    std::string name = "keras-tensorflow";
    isolation_limits limits{};
};

/// The Keras classes of memo's registry that Keras 3 no longer has (Keras 2.8 had them).
inline constexpr std::string_view missing_classes[] = {"LocallyConnected1D", "LocallyConnected2D", "ThresholdedReLU"};

/// Why Keras 3 cannot take node n, or empty: what Keras 3 itself lacks, known here so that a
/// campaign declines just those models.
inline std::string lacks(const model&, const node& n) {
    const std::string_view cls = n.layer->name;
    // The worker's frames carry float32 values: float16 and bfloat16 are exact there, float64 is not.
    if (n.type == dtype::float64) return "memo's Keras worker carries float32 values, not float64";
    if (std::find(std::begin(missing_classes), std::end(missing_classes), cls) != std::end(missing_classes)) return "Keras 3 has no layer " + std::string(cls);
    // Keras 3 redefined hard_sigmoid (Keras 2: clip(0.2 x + 0.5, 0, 1); Keras 3: relu6(x + 3) / 6):
    // the same name, another function, so not the model memo means.
    const auto& ps = n.layer->params;
    for (std::size_t p = 0; p < ps.size(); ++p)
        if (ps[p].name.ends_with("activation") && std::holds_alternative<std::string>(n.params[p]) && as_str(n.params[p]) == "hard_sigmoid")
            return "Keras 3's hard_sigmoid is relu6(x + 3) / 6, not Keras 2's clip(0.2 x + 0.5, 0, 1)";
    return {};
}

inline expected<void> supports(const model& m) {
    for (std::size_t i = 0; i < m.size(); ++i)
        if (auto why = lacks(m, m.nodes[i]); !why.empty()) return fail("node " + std::to_string(i) + ": " + why);
    return {};
}

/// The PyPI package of a Keras backend's library.
inline std::string_view library_package(std::string_view backend) { return backend == "tensorflow" ? "tensorflow_cpu" : backend == "jax" ? "jaxlib" : "torch"; }

/// Empty when Keras and the backend's library are installed for `python` and the worker is there; else why not.
inline std::string unavailable(const options& o) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.worker, ec)) return "the Keras worker is not at " + o.worker;
    if (auto why = python::missing(o.python, "keras", "Keras"); !why.empty()) return why;
    return python::missing(o.python, library_package(o.backend), library_package(o.backend));
}

/// Keras 3 on one backend behind a Python worker process, as a campaign executor.
class runtime final : public keras_json_worker {
public:
    explicit runtime(const options& o) : keras_json_worker(argv(o), o.limits, o.name, keras3::supports) {
        set_writes_reproducers(true);
        set_rewrites_graph(o.jit);  // compiled whole by XLA; its every-node and forced runs are eager
    }

private:
    static std::vector<std::string> argv(const options& o) {
        std::vector<std::string> a{o.python, o.worker, "--backend", o.backend};
        if (o.jit) a.emplace_back("--jit");
        return a;
    }
};

}  // namespace memo::keras3
