#pragma once
// The model graph: nodes in topological order, each a layer with its parameter values, input
// edges, inferred output shape and dtype; one or more inputs (Input nodes) and outputs; and a
// weight seed, from which weights and inputs are drawn, so a model is a few hundred bytes.
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../engine/error.hpp"
#include "dtype.hpp"
#include "hash.hpp"
#include "layer.hpp"
#include "shape.hpp"
#include "value.hpp"

namespace memo {

/// Weights a node brings with it instead of drawing them from the model's seed (an imported
/// file's): one per weight of its layer, in the order and Keras layouts of its weight specs
/// (layers/weights.hpp). A weight whose spec no longer has these dims (a mutation changed the
/// layer or its input) is drawn as usual. `digest` identifies the values for model_key.
struct given_weights {
    struct one {
        std::vector<std::int64_t> dims;
        std::vector<double> values;
    };
    std::vector<one> weights;
    std::uint64_t digest = 0;
};

/// given_weights with its digest computed, shared between a model and its mutants.
inline std::shared_ptr<const given_weights> give_weights(std::vector<given_weights::one> ws) {
    hasher h;
    for (const auto& w : ws) {
        for (auto d : w.dims) h.mix(static_cast<std::uint64_t>(d));
        for (double v : w.values) h.mix(std::bit_cast<std::uint64_t>(v));
    }
    return std::make_shared<const given_weights>(given_weights{std::move(ws), h.value()});
}

struct node {
    const layer_def* layer = nullptr;
    std::vector<value> params;  // in the order of layer->params
    std::vector<int> inputs;    // indices of earlier nodes
    shape out;
    dtype type = dtype::float32;
    std::string name;                              // for people and Keras files; ignored by the structural hash
    std::shared_ptr<const given_weights> weights;  // null: drawn from the model's seed

    const value& param(std::string_view n) const {
        const int i = layer->param_index(n);
        if (i < 0) throw error("layer " + std::string(layer->name) + " has no parameter '" + std::string(n) + "'");
        return params[static_cast<std::size_t>(i)];
    }
    void set(std::string_view n, value v) {
        const int i = layer->param_index(n);
        if (i < 0) throw error("layer " + std::string(layer->name) + " has no parameter '" + std::string(n) + "'");
        params[static_cast<std::size_t>(i)] = std::move(v);
    }
};

/// A node's parameters read by name and type, as every backend's kernel for a layer reads them:
/// the argument a backend hands its kernels derives from it (or is it).
struct node_params {
    const node& n;

    const value& param(std::string_view name) const { return n.param(name); }
    bool has(std::string_view name) const { return n.layer->param_index(name) >= 0; }
    std::int64_t integer(std::string_view name) const { return as_int(param(name)); }
    double real(std::string_view name) const { return as_real(param(name)); }
    bool flag(std::string_view name) const { return as_bool(param(name)); }
    std::string_view str(std::string_view name) const { return as_str(param(name)); }
    bool none(std::string_view name) const { return is_none(param(name)); }
    /// A tuple parameter as `count` integers (a scalar is repeated).
    std::vector<std::int64_t> ints(std::string_view name, int count) const {
        const auto v = as_ints(param(name), count);
        return std::vector<std::int64_t>(v.begin(), v.end());
    }
    bool channels_first() const { return has("data_format") && str("data_format") == "channels_first"; }
};

/// A weight-level mutation (LEMON's rules), kept as data: a backend applies it when it draws the
/// weights of `node` from the model's seed. `amount` is the fraction of neurons touched (or the
/// relative standard deviation of Gaussian fuzzing); `seed` picks which.
struct weight_edit {
    enum class kind : unsigned char { gaussian_fuzz, block_neurons, invert_activation, switch_neurons };
    kind what = kind::gaussian_fuzz;
    int node = 0;
    double amount = 0.0;
    std::uint64_t seed = 0;
    friend bool operator==(const weight_edit&, const weight_edit&) = default;
};

inline constexpr std::string_view weight_edit_names[] = {"gaussian_fuzz", "block_neurons", "invert_activation", "switch_neurons"};

struct model {
    std::vector<node> nodes;
    std::vector<int> outputs;
    std::uint64_t seed = 0;
    std::vector<weight_edit> weight_edits;  // LEMON's weight-level mutations, in order

    std::size_t size() const noexcept { return nodes.size(); }
    const node& operator[](int i) const noexcept { return nodes[static_cast<std::size_t>(i)]; }
    node& operator[](int i) noexcept { return nodes[static_cast<std::size_t>(i)]; }
    /// Indices of the nodes with no inputs (the model's inputs).
    std::vector<int> input_nodes() const {
        std::vector<int> r;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].layer->arity.max == 0) r.push_back(static_cast<int>(i));
        return r;
    }
    /// Layers other than Input.
    std::size_t layer_count() const noexcept {
        std::size_t k = 0;
        for (const auto& n : nodes) k += n.layer->arity.max != 0;
        return k;
    }
};

namespace detail {
inline std::string where(const model& m, std::size_t i) {
    const auto& n = m.nodes[i];
    return "node " + std::to_string(i) + " '" + n.name + "' (" + std::string(n.layer ? n.layer->name : "?") + ")";
}
}  // namespace detail

/// The output shape and dtype of node i from its inputs, or why it cannot be computed.
/// Inputs must already be inferred.
inline expected<void> infer_node(model& m, std::size_t i) {
    node& n = m.nodes[i];
    const layer_def& L = *n.layer;
    const auto k = static_cast<int>(n.inputs.size());
    if (k < L.arity.min || k > L.arity.max)
        return fail("takes " + std::to_string(L.arity.min) + (L.arity.max > L.arity.min ? " or more" : "") + " inputs, has " + std::to_string(k));
    if (n.params.size() != L.params.size())
        return fail("has " + std::to_string(n.params.size()) + " parameter values, the layer has " + std::to_string(L.params.size()) + " parameters");
    shape in[16];
    const int count = std::min(k, 16);
    dtype t = n.type;
    for (int j = 0; j < count; ++j) {
        const int src = n.inputs[static_cast<std::size_t>(j)];
        if (src < 0 || static_cast<std::size_t>(src) >= i) return fail("input " + std::to_string(src) + " is not an earlier node");
        in[j] = m.nodes[static_cast<std::size_t>(src)].out;
        if (!L.ranks.contains(in[j].rank()))
            return fail("input of rank " + std::to_string(in[j].rank()) + " " + in[j].str() + ", accepts ranks " + L.ranks.str());
        const dtype tj = m.nodes[static_cast<std::size_t>(src)].type;
        if (j == 0) t = tj;
        else if (tj != t) return fail("inputs have different dtypes");
    }
    for (std::size_t p = 0; p < L.params.size(); ++p)
        if (!L.params[p].dom.validate(n.params[p]))
            return fail("parameter " + std::string(L.params[p].name) + " = " + to_string(n.params[p]) + " is outside " + L.params[p].dom.describe());
    auto s = L.infer({in, static_cast<std::size_t>(count)}, n.params);
    if (!s) return s.error();
    n.out = *s;
    if (L.dtype_param >= 0)
        if (auto d = parse_dtype(as_str(n.params[static_cast<std::size_t>(L.dtype_param)]))) t = *d;
    n.type = t;
    return {};
}

/// Re-infers every node's shape and dtype in order; the first failure names the node and why.
inline expected<void> infer_shapes(model& m) {
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (auto r = infer_node(m, i); !r) return fail(detail::where(m, i) + ": " + r.reason());
    return {};
}

/// Checks that the stored graph is valid as it stands: topological edges, accepted ranks, values in
/// their domains, and stored shapes and dtypes equal to what inference gives. Reports the first
/// broken node and why.
inline expected<void> validate(const model& m) {
    if (m.nodes.empty()) return fail("model has no nodes");
    model copy = m;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        if (!m.nodes[i].layer) return fail(detail::where(m, i) + ": no layer");
        if (auto r = infer_node(copy, i); !r) return fail(detail::where(m, i) + ": " + r.reason());
        if (!(copy.nodes[i].out == m.nodes[i].out))
            return fail(detail::where(m, i) + ": stored shape " + m.nodes[i].out.str() + ", inference gives " + copy.nodes[i].out.str());
        if (copy.nodes[i].type != m.nodes[i].type)
            return fail(detail::where(m, i) + ": stored dtype " + std::string(name_of(m.nodes[i].type)) + ", inference gives " +
                        std::string(name_of(copy.nodes[i].type)));
    }
    if (m.outputs.empty()) return fail("model has no outputs");
    for (int o : m.outputs)
        if (o < 0 || static_cast<std::size_t>(o) >= m.nodes.size()) return fail("output " + std::to_string(o) + " is not a node");
    return {};
}

/// A hash of the structure: layers, parameter values, edges, shapes, dtypes and outputs.
/// Node names and the weight seed do not count.
inline std::uint64_t structural_hash(const model& m) {
    hasher h;
    h.mix(m.nodes.size());
    for (const auto& n : m.nodes) {
        h.mix(n.layer->name);
        for (const auto& v : n.params) hash_value(h, v);
        h.mix(n.inputs.size());
        for (int e : n.inputs) h.mix(static_cast<std::uint64_t>(e));
        for (auto d : n.out.view()) h.mix(static_cast<std::uint64_t>(d));
        h.mix(static_cast<std::uint64_t>(n.type));
    }
    for (int o : m.outputs) h.mix(static_cast<std::uint64_t>(o) ^ 0x5bd1e995ULL);
    return h.value();
}

/// A model's identity for memoisation: its structure (structural_hash) and what structural_hash
/// leaves out but a run depends on, its weight seed, weight edits and given weights.
inline std::uint64_t model_key(const model& m) {
    hasher h;
    h.mix(structural_hash(m)).mix(m.seed).mix(m.weight_edits.size());
    for (const auto& e : m.weight_edits)
        h.mix(static_cast<std::uint64_t>(e.what)).mix(static_cast<std::uint64_t>(e.node)).mix(std::bit_cast<std::uint64_t>(e.amount)).mix(e.seed);
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (m.nodes[i].weights) h.mix(i).mix(m.nodes[i].weights->digest);
    return h.value();
}

/// A node of layer L with its parameters at their Keras defaults, not yet connected.
inline node make_node(const layer_def& L, std::string name = {}) {
    node n;
    n.layer = &L;
    n.name = std::move(name);
    n.params.reserve(L.params.size());
    for (const auto& p : L.params) n.params.push_back(p.fallback);
    return n;
}

}  // namespace memo
