#pragma once
// LEMON's operators, for the paper's ablation MEMO_o: the model-level rules (layer removal,
// switch, duplication, addition, activation removal and replacement) and the weight-level rules
// (Gaussian fuzzing, neuron effect blocking, neuron activation inverse, neuron switch), the latter
// kept as weight edits that backends apply when they draw weights from the model's seed.
// None of them looks at coverage.
#include "steps.hpp"

namespace memo::mutation {

namespace detail {
inline context unguided(const context& ctx) {
    context c = ctx;
    c.guided = false;
    return c;
}
inline const shape& input_shape(const model& m, int i) { return m.nodes[static_cast<std::size_t>(m.nodes[static_cast<std::size_t>(i)].inputs[0])].out; }
/// Universe nodes with one input whose output shape equals their input shape.
inline std::vector<int> shape_keeping(const model& m, const context& ctx) {
    std::vector<int> r;
    for (int i : steps::universe_nodes(m, ctx, true))
        if (m.nodes[static_cast<std::size_t>(i)].out == input_shape(m, i)) r.push_back(i);
    return r;
}
inline std::vector<int> with_activation(const model& m, bool non_linear) {
    std::vector<int> r;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const int j = m.nodes[i].layer->param_index("activation");
        if (j >= 0 && m.nodes[i].layer->in_universe && (!non_linear || as_str(m.nodes[i].params[static_cast<std::size_t>(j)]) != "linear"))
            r.push_back(static_cast<int>(i));
    }
    return r;
}
/// Nodes with trainable weights (they have an initializer parameter).
inline std::vector<int> with_weights(const model& m) {
    std::vector<int> r;
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        for (const auto& p : m.nodes[i].layer->params)
            if (p.what == role::init) {
                r.push_back(static_cast<int>(i));
                break;
            }
    return r;
}
template <weight_edit::kind K>
struct weight_rule {
    expected<model> operator()(const model& m, rng& r, const context&) const {
        const auto nodes = with_weights(m);
        if (nodes.empty()) return fail("no layer has weights");
        model out = m;
        out.weight_edits.push_back({K, nodes[r.index(nodes.size())], r.uniform_real(0.01, 0.5), r()});
        return out;
    }
};
}  // namespace detail

/// LR: removes a layer; its consumers read its input, adapted to the shape they had.
struct layer_removal {
    static constexpr std::string_view name = "LR";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = steps::universe_nodes(m, ctx, true);
        if (nodes.empty()) return fail("no layer to remove");
        model out = m;
        const int v = nodes[r.index(nodes.size())];
        const int src = out.nodes[static_cast<std::size_t>(v)].inputs[0];
        const shape keep = out.nodes[static_cast<std::size_t>(v)].out;
        const dtype keep_type = out.nodes[static_cast<std::size_t>(v)].type;
        int cursor = v + 1;
        auto bridge = convert_at(out, ctx.ad, src, cursor, keep, keep_type);
        if (!bridge) return bridge.error();
        redirect(out, v, *bridge);
        erase_at(out, v);
        if (out.outputs.empty()) return fail("removal left no output");
        return steps::within_limits(std::move(out), ctx);
    }
};

/// LS: switches two layers that have the same input and output shapes.
struct layer_switch {
    static constexpr std::string_view name = "LS";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = detail::shape_keeping(m, ctx);
        std::vector<std::pair<int, int>> pairs;
        for (int a : nodes)
            for (int b : nodes)
                if (a < b && m.nodes[static_cast<std::size_t>(a)].layer != m.nodes[static_cast<std::size_t>(b)].layer &&
                    detail::input_shape(m, a) == detail::input_shape(m, b))
                    pairs.emplace_back(a, b);
        if (pairs.empty()) return fail("no two layers to switch");
        const auto [a, b] = pairs[r.index(pairs.size())];
        model out = m;
        auto& x = out.nodes[static_cast<std::size_t>(a)];
        auto& y = out.nodes[static_cast<std::size_t>(b)];
        std::swap(x.layer, y.layer);
        std::swap(x.params, y.params);
        std::swap(x.name, y.name);
        if (auto ok = infer_shapes(out); !ok) return ok.error();
        return out;
    }
};

/// LD: duplicates a layer whose output shape equals its input shape, right after itself.
struct layer_duplication {
    static constexpr std::string_view name = "LD";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = detail::shape_keeping(m, ctx);
        if (nodes.empty()) return fail("no layer keeps its shape");
        model out = m;
        const int v = nodes[r.index(nodes.size())];
        node copy = out.nodes[static_cast<std::size_t>(v)];
        copy.inputs = {v};
        copy.name.clear();
        auto added = add_node(out, v + 1, *copy.layer, copy.params, {v}, {});
        if (!added) return added.error();
        redirect(out, v, *added);
        return steps::within_limits(std::move(out), ctx);
    }
};

/// LA: adds a layer of any class, drawn at random, after a random node.
struct layer_addition {
    static constexpr std::string_view name = "LA";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const context plain = detail::unguided(ctx);
        model out = m;
        const layer_def& L = *plain.singles[r.index(plain.singles.size())];
        if (auto at = steps::insert_layer_after(out, plain, L, steps::pick_node(out, r), r); !at) return at.error();
        return steps::within_limits(std::move(out), ctx);
    }
};

/// AFRm: removes a layer's activation function (sets it to linear).
struct activation_removal {
    static constexpr std::string_view name = "AFRm";
    expected<model> operator()(const model& m, rng& r, const context&) const {
        const auto nodes = detail::with_activation(m, true);
        if (nodes.empty()) return fail("no non-linear activation");
        model out = m;
        out.nodes[static_cast<std::size_t>(nodes[r.index(nodes.size())])].set("activation", "linear");
        return out;
    }
};

/// AFRp: replaces a layer's activation function with another.
struct activation_replacement {
    static constexpr std::string_view name = "AFRp";
    expected<model> operator()(const model& m, rng& r, const context&) const {
        const auto nodes = detail::with_activation(m, false);
        if (nodes.empty()) return fail("no activation");
        model out = m;
        node& n = out.nodes[static_cast<std::size_t>(nodes[r.index(nodes.size())])];
        const auto j = static_cast<std::size_t>(n.layer->param_index("activation"));
        n.params[j] = n.layer->params[j].dom.mutate(n.params[j], r);
        return out;
    }
};

/// GF, NEB, NAI, NS: LEMON's weight-level rules.
struct gaussian_fuzzing : detail::weight_rule<weight_edit::kind::gaussian_fuzz> {
    static constexpr std::string_view name = "GF";
};
struct neuron_effect_block : detail::weight_rule<weight_edit::kind::block_neurons> {
    static constexpr std::string_view name = "NEB";
};
struct neuron_activation_inverse : detail::weight_rule<weight_edit::kind::invert_activation> {
    static constexpr std::string_view name = "NAI";
};
struct neuron_switch : detail::weight_rule<weight_edit::kind::switch_neurons> {
    static constexpr std::string_view name = "NS";
};

}  // namespace memo::mutation
