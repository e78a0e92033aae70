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

#include "../../io/keras.hpp"
#include "../../tensors/weights.hpp"
#include "../wire.hpp"
#include "../worker_executor.hpp"

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

namespace detail {

enum class mode : std::uint8_t { outputs = 0, every_node = 1, forced = 2 };

inline void put_str(wire::writer& w, std::string_view s) {
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    w.bytes().append(s);
}
inline void put_tensor(wire::writer& w, const tensor& t) {
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
    for (auto d : t.dims) w.pod<std::int64_t>(d);
    for (double x : t.data) w.pod<float>(static_cast<float>(x));
}

/// The request frame of worker.js: the model's Keras JSON, the mode, every weight by layer and
/// Keras name, the inputs, every node's output shape, and with `forced` one tensor per node.
inline std::string encode(const model& m, const std::vector<std::string>& names, std::span<const tensor> inputs, mode how, std::span<const tensor> forced) {
    wire::writer w;
    put_str(w, io::keras_to_json(m).dump());
    w.pod<std::uint8_t>(static_cast<std::uint8_t>(how));
    std::vector<std::pair<std::size_t, weight>> all;
    for (std::size_t i = 0; i < m.size(); ++i)
        for (auto& x : weights_of(m, static_cast<int>(i), &drawn_weights())) all.emplace_back(i, std::move(x));
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(all.size()));
    for (const auto& [i, x] : all) {
        put_str(w, names[i]);
        put_str(w, x.name);
        put_tensor(w, x.value);
    }
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(inputs.size()));
    for (const auto& t : inputs) put_tensor(w, t);
    // Each layer's output shape as memo (Keras) infers it, which the worker holds tfjs' against.
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(m.size()));
    for (const auto& n : m.nodes) {
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(n.out.rank()));
        for (int k = 0; k < n.out.rank(); ++k) w.pod<std::int64_t>(k == 0 ? -1 : n.out[k]);
    }
    if (how == mode::forced) {
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(forced.size()));
        for (const auto& t : forced) put_tensor(w, t);
    }
    return std::move(w.bytes());
}

inline std::string get_str(wire::reader& r) {
    std::string s(r.pod<std::uint32_t>(), '\0');
    for (auto& c : s) c = static_cast<char>(r.pod<std::uint8_t>());
    return s;
}

/// The result frame: status, the worker's own time, message, the failing layer, float32 outputs.
/// A layer whose output shape tfjs infers otherwise is an invalid run (a shape verdict), as a
/// model ONNX's shape inference disagrees with is; a model.predict that fails where every layer
/// applied alone runs is an error of the whole graph.
inline run_result decode(std::string_view frame, const std::vector<std::string>& layer_names) {
    wire::reader r(frame);
    run_result x;
    const auto status = r.pod<std::uint8_t>();
    const double ms = r.pod<double>();
    const auto message = get_str(r);
    const auto layer = get_str(r);
    const auto n = r.pod<std::uint32_t>();
    for (std::uint32_t k = 0; k < n; ++k) {
        tensor t;
        t.dims.resize(r.pod<std::uint32_t>());
        for (auto& d : t.dims) d = r.pod<std::int64_t>();
        t.data.resize(static_cast<std::size_t>(tensor::count(t.dims)));
        for (auto& v : t.data) v = r.pod<float>();
        t.type = dtype::float32;
        x.outputs.push_back(std::move(t));
    }
    if (status != 0) {
        x = run_result::failed(status == 2 ? run_status::unsupported : status == 3 ? run_status::invalid : run_status::error, message);
        x.whole_graph = status == 4;
        for (std::size_t i = 0; i < layer_names.size() && !layer.empty(); ++i)
            if (layer_names[i] == layer) x.node = static_cast<int>(i);
    }
    x.ms = ms;
    return x;
}

}  // namespace detail

/// TensorFlow.js behind a Node.js worker process, as a campaign executor.
class runtime final : public worker_executor {
public:
    explicit runtime(options o) : worker_executor({o.node, o.worker, "--backend", o.kernels}, o.limits), o_(std::move(o)) {}

    std::string_view name() const override { return o_.name; }
    expected<void> supports(const model& m) const override { return tfjs::supports(m); }

    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override {
        begin();
        names_.clear();
        if (o.precision) return settle(run_result::failed(run_status::unsupported, "TensorFlow.js runs a model in float32"));
        if (auto ok = tfjs::supports(m); !ok) return settle(run_result::failed(run_status::unsupported, ok.reason()));
        if (!o.forced.empty() && o.forced.size() != m.size()) return settle(run_result::failed(run_status::error, "forced run needs one tensor per node"));
        names_ = io::detail::keras::layer_names(m);
        const auto how = !o.forced.empty() ? detail::mode::forced : o.every_node ? detail::mode::every_node : detail::mode::outputs;
        worker().send(detail::encode(m, names_, inputs, how, o.forced));
    }

private:
    run_result decode(std::string_view frame) override { return detail::decode(frame, names_); }

    options o_;
    std::vector<std::string> names_;  // the Keras layer names of the model in flight, by node
};

}  // namespace memo::tfjs
