#pragma once
// The pipe protocol between a campaign and its worker processes: length-prefixed frames holding a
// run request (the model, the inputs, the options) or a run result. Little-endian, native doubles:
// both ends are memo's code from the same build on the same machine (a forked worker, or a worker
// program built beside memo-fuzz, memo-cuda-worker), with the same registry, so a model travels as
// its layer classes' names and its parameters in each class's order, not as JSON text to print and
// parse again for every run.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "../core/model.hpp"
#include "../tensors/weights.hpp"
#include "backend.hpp"

namespace memo::wire {

class writer {
public:
    template <class T>
    void pod(T x) {
        const auto* p = reinterpret_cast<const char*>(&x);
        buf_.append(p, sizeof x);
    }
    void str(std::string_view s) {
        pod<std::uint64_t>(s.size());
        buf_.append(s);
    }
    /// A u32 count and the dims: a tensor's, a given weight's and a node's shape alike.
    void dims(std::span<const std::int64_t> ds) {
        pod<std::uint32_t>(static_cast<std::uint32_t>(ds.size()));
        for (auto d : ds) pod<std::int64_t>(d);
    }
    /// A u64 count and the values, as they lie in memory.
    void doubles(std::span<const double> xs) {
        pod<std::uint64_t>(xs.size());
        buf_.append(reinterpret_cast<const char*>(xs.data()), xs.size() * sizeof(double));
    }
    void tensors(std::span<const tensor> ts) {
        pod<std::uint32_t>(static_cast<std::uint32_t>(ts.size()));
        for (const auto& t : ts) {
            pod<std::uint8_t>(static_cast<std::uint8_t>(t.type));
            dims(t.dims);
            doubles(t.data);
        }
    }
    std::string& bytes() noexcept { return buf_; }

private:
    std::string buf_;
};

class reader {
public:
    explicit reader(std::string_view b) : b_(b) {}
    template <class T>
    T pod() {
        T x{};
        need(sizeof x);
        std::memcpy(&x, b_.data() + at_, sizeof x);
        at_ += sizeof x;
        return x;
    }
    std::string str() { return std::string(raw(pod<std::uint64_t>())); }
    /// The next n bytes as they are.
    std::string_view raw(std::size_t n) {
        need(n);
        const auto v = b_.substr(at_, n);
        at_ += n;
        return v;
    }
    std::vector<std::int64_t> dims() {
        const auto n = pod<std::uint32_t>();
        need(std::size_t{n} * sizeof(std::int64_t));  // a u32 count cannot overflow it
        std::vector<std::int64_t> ds(n);
        for (auto& d : ds) d = pod<std::int64_t>();
        return ds;
    }
    std::vector<double> doubles() {
        const auto n = pod<std::uint64_t>();
        // Before allocating: a corrupt count is an error, not a huge vector.
        if (n > left() / sizeof(double)) throw error("truncated worker frame");
        const auto bytes = raw(n * sizeof(double));
        std::vector<double> xs(n);
        if (n) std::memcpy(xs.data(), bytes.data(), bytes.size());
        return xs;
    }
    std::vector<tensor> tensors() {
        std::vector<tensor> ts(pod<std::uint32_t>());
        for (auto& t : ts) {
            t.type = static_cast<dtype>(pod<std::uint8_t>());
            t.dims = dims();
            t.data = doubles();
        }
        return ts;
    }

    /// Whether every byte was read (a frame may end with fields an older worker did not send).
    bool done() const noexcept { return left() == 0; }

private:
    std::size_t left() const noexcept { return b_.size() - at_; }
    void need(std::size_t n) const {
        if (n > left()) throw error("truncated worker frame");
    }
    std::string_view b_;
    std::size_t at_ = 0;
};

/// A model as put_model writes it: what io::model_to_json holds (names, classes, edges, dtypes,
/// shapes, parameters, given weights, outputs, weight edits), in binary.
inline void put_value(writer& w, const value& v) {
    w.pod<std::uint8_t>(static_cast<std::uint8_t>(v.index()));
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) w.pod<std::uint8_t>(x);
            else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) w.pod<T>(x);
            else if constexpr (std::is_same_v<T, std::string>) w.str(x);
            else if constexpr (std::is_same_v<T, ints>) {
                w.pod<std::uint8_t>(static_cast<std::uint8_t>(x.size()));
                for (auto e : x) w.pod<std::int64_t>(e);
            }
        },
        v);
}

inline value get_value(reader& r) {
    switch (r.pod<std::uint8_t>()) {
        case 0: return none;
        case 1: return r.pod<std::uint8_t>() != 0;
        case 2: return r.pod<std::int64_t>();
        case 3: return r.pod<double>();
        case 4: return r.str();
        case 5: {
            ints x;
            for (int n = r.pod<std::uint8_t>(); n > 0; --n) x.push(r.pod<std::int64_t>());
            return x;
        }
        default: throw error("worker frame: unknown parameter value kind");
    }
}

inline void put_model(writer& w, const model& m) {
    w.pod<std::uint64_t>(m.seed);
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(m.nodes.size()));
    for (const auto& n : m.nodes) {
        w.str(n.layer->name);
        w.str(n.name);
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(n.inputs.size()));
        for (int e : n.inputs) w.pod<std::int32_t>(e);
        w.pod<std::uint8_t>(static_cast<std::uint8_t>(n.type));
        w.dims(n.out.view());
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(n.params.size()));
        for (const auto& v : n.params) put_value(w, v);
        w.pod<std::uint8_t>(n.weights != nullptr);
        if (n.weights) {
            w.pod<std::uint32_t>(static_cast<std::uint32_t>(n.weights->weights.size()));
            for (const auto& g : n.weights->weights) {
                w.dims(g.dims);
                w.doubles(g.values);
            }
        }
    }
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(m.outputs.size()));
    for (int o : m.outputs) w.pod<std::int32_t>(o);
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(m.weight_edits.size()));
    for (const auto& e : m.weight_edits) {
        w.pod<std::uint8_t>(static_cast<std::uint8_t>(e.what));
        w.pod<std::int32_t>(e.node);
        w.pod<double>(e.amount);
        w.pod<std::uint64_t>(e.seed);
    }
}

/// The model put_model wrote. Its sender validated it; what could crash the worker (an unknown
/// class, a parameter count or an edge that does not fit) is checked again.
inline model get_model(reader& r, const registry& reg) {
    model m;
    m.seed = r.pod<std::uint64_t>();
    m.nodes.resize(r.pod<std::uint32_t>());
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const auto cls = r.str();
        const layer_def* L = reg.find(cls);
        if (!L) throw error("worker frame: unknown layer class '" + cls + "'");
        node& n = m.nodes[i];
        n = make_node(*L, r.str());
        n.inputs.resize(r.pod<std::uint32_t>());
        for (int& e : n.inputs)
            if (e = r.pod<std::int32_t>(); e < 0 || static_cast<std::size_t>(e) >= i) throw error("worker frame: an edge from a later node");
        n.type = static_cast<dtype>(r.pod<std::uint8_t>());
        for (auto d : r.dims()) n.out.push(d);
        if (r.pod<std::uint32_t>() != n.params.size()) throw error("worker frame: " + cls + " with another parameter count");
        for (auto& v : n.params) v = get_value(r);
        if (r.pod<std::uint8_t>()) {
            std::vector<given_weights::one> ws(r.pod<std::uint32_t>());
            for (auto& g : ws) {
                g.dims = r.dims();
                g.values = r.doubles();
            }
            n.weights = give_weights(std::move(ws));
        }
    }
    m.outputs.resize(r.pod<std::uint32_t>());
    for (int& o : m.outputs)
        if (o = r.pod<std::int32_t>(); o < 0 || static_cast<std::size_t>(o) >= m.nodes.size()) throw error("worker frame: an output that is not a node");
    m.weight_edits.resize(r.pod<std::uint32_t>());
    for (auto& e : m.weight_edits) {
        e.what = static_cast<weight_edit::kind>(r.pod<std::uint8_t>());
        e.node = r.pod<std::int32_t>();
        e.amount = r.pod<double>();
        e.seed = r.pod<std::uint64_t>();
    }
    return m;
}

/// A weight the sender drew, for the worker's cache (drawn_weights): what weights_of would draw.
struct drawn_weight {
    std::uint64_t stream = 0;
    std::string initializer;
    tensor value;
};

/// A run request, as the worker decodes it.
struct request {
    model m;
    std::vector<tensor> inputs, forced;
    run_options options;
    std::vector<drawn_weight> drawn;

    /// Puts the sender's draws in this thread's cache, where the backend's weights_of finds them.
    void keep_drawn() {
        for (auto& d : drawn) drawn_weights().keep(d.stream, d.initializer, std::move(d.value));
        drawn.clear();
    }
};

/// The weights of m costly to draw (costly_to_draw), from this thread's cache: drawn once in the
/// campaign's process (whose ONNX export and float64 truth find them there too) rather than again
/// in every worker. The rest each worker draws faster than it could read them.
inline void put_drawn(writer& w, const model& m) {
    std::uint32_t count = 0;
    const auto at = w.bytes().size();
    w.pod<std::uint32_t>(0);
    for (std::size_t i = 0; i < m.size(); ++i)
        for (const auto& d : draws_of(m, static_cast<int>(i))) {
            if (!costly_to_draw(d.initializer)) continue;
            const tensor& t = drawn_weights().draw(d.stream, d.initializer, d.dims);
            w.pod<std::uint64_t>(d.stream);
            w.str(d.initializer);
            w.dims(t.dims);
            w.doubles(t.data);
            ++count;
        }
    std::memcpy(w.bytes().data() + at, &count, sizeof count);
}

inline std::vector<drawn_weight> get_drawn(reader& r) {
    std::vector<drawn_weight> out(r.pod<std::uint32_t>());
    for (auto& d : out) {
        d.stream = r.pod<std::uint64_t>();
        d.initializer = r.str();
        d.value = tensor(r.dims(), dtype::float64);
        d.value.data = r.doubles();
        if (static_cast<std::int64_t>(d.value.data.size()) != tensor::count(d.value.dims)) throw error("worker frame: a drawn weight of another size");
    }
    return out;
}

inline std::string encode_request(const model& m, std::span<const tensor> inputs, const run_options& o) {
    writer w;
    w.pod<std::uint8_t>(o.every_node);
    w.pod<std::uint8_t>(o.digest_nodes);
    w.pod<std::int8_t>(o.precision ? static_cast<std::int8_t>(*o.precision) : std::int8_t{-1});
    put_model(w, m);
    put_drawn(w, m);
    w.tensors(inputs);
    w.tensors(o.forced);
    return std::move(w.bytes());
}

inline request decode_request(std::string_view bytes, const registry& reg) {
    reader r(bytes);
    request q;
    q.options.every_node = r.pod<std::uint8_t>() != 0;
    q.options.digest_nodes = r.pod<std::uint8_t>() != 0;
    if (const auto p = r.pod<std::int8_t>(); p >= 0) q.options.precision = static_cast<dtype>(p);
    q.m = get_model(r, reg);
    q.drawn = get_drawn(r);
    q.inputs = r.tensors();
    q.forced = r.tensors();
    q.options.forced = q.forced;
    return q;
}

inline std::string encode_result(const run_result& x) {
    writer w;
    w.pod<std::uint8_t>(static_cast<std::uint8_t>(x.status));
    w.str(x.message);
    w.pod<std::int32_t>(x.signal);
    w.pod<std::int32_t>(x.node);
    w.pod<double>(x.ms);
    w.pod<double>(x.cpu_ms);
    w.pod<double>(x.compile_ms);
    w.pod<std::int64_t>(x.peak_kb);
    w.pod<std::int64_t>(x.start_kb);
    w.tensors(x.outputs);
    w.pod<std::uint64_t>(x.node_digests.size());
    for (const auto& d : x.node_digests) {
        w.pod<std::uint64_t>(d.hash);
        w.pod<double>(d.abs_sum);
    }
    w.pod<std::uint64_t>(x.node_spans.size());
    for (const auto& v : x.node_spans) {
        w.pod<double>(v.lo);
        w.pod<double>(v.hi);
        w.pod<std::uint8_t>(v.classes);
    }
    return std::move(w.bytes());
}

inline run_result decode_result(std::string_view bytes) {
    reader r(bytes);
    run_result x;
    x.status = static_cast<run_status>(r.pod<std::uint8_t>());
    x.message = r.str();
    x.signal = r.pod<std::int32_t>();
    x.node = r.pod<std::int32_t>();
    x.ms = r.pod<double>();
    x.cpu_ms = r.pod<double>();
    x.compile_ms = r.pod<double>();
    x.peak_kb = r.pod<std::int64_t>();
    x.start_kb = r.pod<std::int64_t>();
    x.outputs = r.tensors();
    x.node_digests.resize(r.pod<std::uint64_t>());
    for (auto& d : x.node_digests) {
        d.hash = r.pod<std::uint64_t>();
        d.abs_sum = r.pod<double>();
    }
    x.node_spans.resize(r.pod<std::uint64_t>());
    for (auto& v : x.node_spans) {
        v.lo = r.pod<double>();
        v.hi = r.pod<double>();
        v.classes = r.pod<std::uint8_t>();
    }
    return x;
}

}  // namespace memo::wire
