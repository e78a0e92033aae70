#pragma once
// memo::tfjs::runtime: TensorFlow.js as a library under test, on its pure-JavaScript CPU kernels
// ("tfjs-cpu") or its WebAssembly ones ("tfjs-wasm"). TensorFlow.js implements Keras' layers API
// itself: each model goes as Keras JSON (io/keras.hpp), with the weights memo draws and the inputs,
// to a persistent Node.js worker (tools/tfjs-worker/worker.js) that builds it with tfjs-layers'
// modelFromJSON, runs it and answers with the outputs, or with every layer's output for
// localisation (each layer applied in turn, fed its producers' outputs or the given tensors). The
// worker is a worker_process: its death, a time-out or a runaway memory use is a run result.
//
//   memo::tfjs::runtime cpu({.worker = "tools/tfjs-worker/worker.js"});                            // "tfjs-cpu"
//   memo::tfjs::runtime wasm({.worker = "tools/tfjs-worker/worker.js", .kernels = "wasm", .name = "tfjs-wasm"});
//
// TensorFlow.js' layers carry float32 only: a model with another dtype is declined. So is a layer,
// a parameter value or an initializer tfjs lacks (its own words), never a false inconsistency.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../keras_json_worker.hpp"

namespace memo::tfjs {

struct options {
    std::string worker;           // path of worker.js (its folder holds node_modules)
    std::string node = "node";    // the Node.js executable, looked up on PATH
    std::string kernels = "cpu";  // tfjs' backend: cpu or wasm
    std::string name = "tfjs-cpu";
    isolation_limits limits{};
};

/// Whether the worker script and its tfjs packages are installed at `worker`.
inline bool installed(const std::string& worker) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path script(worker), modules = script.parent_path() / "node_modules" / "@tensorflow";
    for (const char* p : {"tfjs-core", "tfjs-layers", "tfjs-backend-cpu", "tfjs-backend-wasm"})
        if (!fs::is_regular_file(modules / p / "package.json", ec)) return false;
    return fs::is_regular_file(script, ec);
}

/// The Keras classes of memo's registry that tfjs-layers 4.22 has no class for ("Unknown layer").
inline constexpr std::string_view missing_classes[] = {
    "SeparableConv1D", "DepthwiseConv1D",        "GlobalMaxPooling3D", "GlobalAveragePooling3D", "ConvLSTM1D",
    "ConvLSTM3D",      "ActivityRegularization", "SpatialDropout2D",   "SpatialDropout3D",       "Cropping1D",
    "Cropping3D",      "UpSampling1D",           "UpSampling3D",       "ZeroPadding1D",          "ZeroPadding3D",
    "Subtract",        "LocallyConnected1D",     "LocallyConnected2D"};

/// Why tfjs cannot take node n, or empty: what tfjs-layers 4.22 itself says it lacks, known here
/// so that a campaign declines just those models, not every model of the class (what it learns
/// from a decline at run time).
inline std::string lacks(const model& m, const node& n) {
    const std::string_view cls = n.layer->name;
    if (n.type != dtype::float32) return "TensorFlow.js layers compute in float32 only, not " + std::string(name_of(n.type));
    if (std::find(std::begin(missing_classes), std::end(missing_classes), cls) != std::end(missing_classes)) return "tfjs has no layer " + std::string(cls);
    const auto& ps = n.layer->params;
    for (std::size_t p = 0; p < ps.size(); ++p)
        if (ps[p].name.ends_with("activation") && std::holds_alternative<std::string>(n.params[p]) && as_str(n.params[p]) == "exponential")
            return "tfjs has no exponential activation";
    if (cls == "ELU" && as_real(n.param("alpha")) != 1.0) return "tfjs' ELU takes alpha 1 only";
    if (cls == "Softmax" && as_int(n.param("axis")) != -1 && as_int(n.param("axis")) != n.out.rank() - 1) return "tfjs' Softmax takes the last axis only";
    if (cls == "GRU" && as_bool(n.param("reset_after"))) return "tfjs' GRU lacks reset_after";
    if (cls == "Conv1D" && as_str(n.param("padding")) == "causal") return "tfjs' Conv1D lacks causal padding";
    if (cls == "BatchNormalization" && (n.out.rank() < 2 || n.out.rank() > 4)) return "tfjs' batch normalization takes ranks 2 to 4";
    // Keras flattens a (batch, n) input to itself; tfjs' Flatten asks for min_ndim 3.
    if (cls == "Flatten" && !n.inputs.empty() && m[n.inputs[0]].out.rank() < 3) return "tfjs' Flatten takes ranks 3 and up";
    if (cls == "Dot")
        for (int i : n.inputs)
            if (m[i].out.rank() >= 4) return "tfjs' Dot takes ranks up to 3";
    return {};
}

/// Why tfjs cannot take `m`, before it is sent (lacks() of its first node tfjs lacks).
inline expected<void> supports(const model& m) {
    for (std::size_t i = 0; i < m.size(); ++i)
        if (auto why = lacks(m, m.nodes[i]); !why.empty()) return fail("node " + std::to_string(i) + ": " + why);
    return {};
}

/// TensorFlow.js behind a Node.js worker process, as a campaign executor.
class runtime final : public keras_json_worker {
public:
    explicit runtime(options o) : keras_json_worker({o.node, o.worker, "--backend", o.kernels}, o.limits, o.name, tfjs::supports) {
        set_writes_reproducers(true);
    }
};

}  // namespace memo::tfjs
