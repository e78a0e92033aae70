#pragma once
// memo::keras_json_worker: an executor for a library that builds memo's models from their Keras
// JSON (io/keras.hpp) in a worker process it execs: TensorFlow.js' Node.js worker
// (tools/tfjs-worker) and Keras 3's Python worker (tools/keras-worker) speak the same frames. Each
// request holds the model's Keras JSON, the weights memo drew by layer and Keras name, the inputs,
// every node's output shape as memo infers it, and for teacher forcing one tensor per node; the
// answer holds a status, the worker's own time, the library's message, the failing layer and the
// outputs (tools/tfjs-worker/worker.js has the frames field by field). A subclass says what its
// library lacks (declined before anything is sent) and how its values round.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../io/keras.hpp"
#include "../tensors/weights.hpp"
#include "wire.hpp"
#include "worker_executor.hpp"

namespace memo {

namespace detail::keras_json {

enum class mode : std::uint8_t { outputs = 0, every_node = 1, forced = 2, reproducer = 3 };

inline void put_str(wire::writer& w, std::string_view s) {
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    w.bytes().append(s);
}
inline void put_tensor(wire::writer& w, const tensor& t) {
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
    for (auto d : t.dims) w.pod<std::int64_t>(d);
    for (double x : t.data) w.pod<float>(static_cast<float>(x));
}

/// The request frame: the model's Keras JSON, the mode, every weight by layer and Keras name, the
/// inputs, every node's output shape; with `forced` one tensor per node; for a reproducer its
/// folder, file stem and title, and each check's node, expected tensor and bound (a double).
inline std::string encode(const model& m, const std::vector<std::string>& names, std::span<const tensor> inputs, mode how, std::span<const tensor> forced,
                          const reproducer_request* reproducer = nullptr) {
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
    // Each layer's output shape as memo (Keras) infers it, which the worker holds its library's against.
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(m.size()));
    for (const auto& n : m.nodes) {
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(n.out.rank()));
        for (int k = 0; k < n.out.rank(); ++k) w.pod<std::int64_t>(k == 0 ? -1 : n.out[k]);
    }
    if (how == mode::forced) {
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(forced.size()));
        for (const auto& t : forced) put_tensor(w, t);
    }
    if (how == mode::reproducer && reproducer) {
        put_str(w, reproducer->directory);
        put_str(w, reproducer->stem);
        put_str(w, reproducer->title);
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(reproducer->checks.size()));
        for (const auto& c : reproducer->checks) {
            w.pod<std::uint32_t>(static_cast<std::uint32_t>(c.node));
            put_tensor(w, c.expected);
            w.pod<double>(c.bound);
        }
    }
    return std::move(w.bytes());
}

inline std::string get_str(wire::reader& r) {
    std::string s(r.pod<std::uint32_t>(), '\0');
    for (auto& c : s) c = static_cast<char>(r.pod<std::uint8_t>());
    return s;
}

/// The result frame: status (0 ok, 1 error, 2 declined, 3 misshapen, 4 an error of the whole
/// graph's run), the worker's own time, message, the failing layer, float32 outputs, and the part
/// of its time spent compiling and, for a plain run that computed every node, which nodes' outputs
/// hold a NaN or infinity (the Python workers': tools/frames.py; TensorFlow.js' frames end before
/// these). A layer whose
/// output shape the library infers otherwise is an invalid run (a shape verdict), as a model
/// ONNX's shape inference disagrees with is; a whole-model run that fails where every layer
/// applied alone runs is an error of the whole graph. Outputs take the dtypes of their nodes.
inline run_result decode(std::string_view frame, const std::vector<dtype>& types, const std::vector<std::string>& layer_names) {
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
        t.type = k < types.size() ? types[k] : dtype::float32;
        x.outputs.push_back(std::move(t));
    }
    const double compile_ms = r.done() ? 0.0 : r.pod<double>();
    if (!r.done()) {
        x.node_non_finite.resize(r.pod<std::uint32_t>());
        for (auto& f : x.node_non_finite) f = r.pod<std::uint8_t>();
    }
    if (status != 0) {
        x = run_result::failed(status == 2 ? run_status::unsupported : status == 3 ? run_status::invalid : run_status::error, message);
        x.whole_graph = status == 4;
        for (std::size_t i = 0; i < layer_names.size() && !layer.empty(); ++i)
            if (layer_names[i] == layer) x.node = static_cast<int>(i);
    }
    if (status == 0) x.message = message;  // a reproducer's run: what its script printed
    x.ms = ms;
    x.compile_ms = compile_ms;
    return x;
}

}  // namespace detail::keras_json

/// A library that builds memo's models from Keras JSON, behind a worker process it execs.
class keras_json_worker : public worker_executor {
public:
    /// Why the library cannot take `m` (naming the node), or nothing: declined before it is sent.
    using lacks_fn = std::function<expected<void>(const model&)>;

    keras_json_worker(std::vector<std::string> argv, isolation_limits limits, std::string name, lacks_fn lacks)
        : worker_executor(std::move(argv), limits), name_(std::move(name)), lacks_(std::move(lacks)) {}

    std::string_view name() const override { return name_; }
    expected<void> supports(const model& m) const override { return lacks_(m); }
    bool writes_reproducers() const override { return writes_reproducers_; }

    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override {
        begin();
        names_.clear();
        types_.clear();
        if (o.precision) return settle(run_result::failed(run_status::unsupported, name_ + " runs a model in its own dtypes"));
        if (auto ok = lacks_(m); !ok) return settle(run_result::failed(run_status::unsupported, ok.reason()));
        if (!o.forced.empty() && o.forced.size() != m.size()) return settle(run_result::failed(run_status::error, "forced run needs one tensor per node"));
        names_ = io::detail::keras::layer_names(m);
        using detail::keras_json::mode;
        if (o.reproducer) {
            if (!writes_reproducers_) return settle(run_result::failed(run_status::unsupported, name_ + " writes no reproducer"));
            worker().send(detail::keras_json::encode(m, names_, inputs, mode::reproducer, {}, o.reproducer));
            return;
        }
        if (o.every_node || !o.forced.empty())
            for (const auto& n : m.nodes) types_.push_back(n.type);
        else
            for (int i : m.outputs) types_.push_back(m[i].type);
        const auto how = !o.forced.empty() ? mode::forced : o.every_node ? mode::every_node : mode::outputs;
        worker().send(detail::keras_json::encode(m, names_, inputs, how, o.forced));
    }

protected:
    /// For a worker that answers mode 3 (a reproducer) by writing one.
    void set_writes_reproducers(bool on) noexcept { writes_reproducers_ = on; }

private:
    run_result decode(std::string_view frame) override { return detail::keras_json::decode(frame, types_, names_); }

    bool writes_reproducers_ = false;
    std::string name_;
    lacks_fn lacks_;
    std::vector<std::string> names_;  // the Keras layer names of the model in flight, by node
    std::vector<dtype> types_;        // the dtypes of the answer's tensors, in order
};

}  // namespace memo
