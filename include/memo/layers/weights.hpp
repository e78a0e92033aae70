#pragma once
// A node's weights before any is drawn: their Keras names, dimensions in Keras' layouts and
// initializers (weight_specs, from its layer's `weights` member), and how many a model has
// (count_weights, as Keras' count_params() reports them: BatchNormalization's moving mean and
// variance count). Backends draw them by these (tensors/weights.hpp); the zoo, reduction and the
// memory budget count them.
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "../core/model.hpp"
#include "common.hpp"

namespace memo {

namespace detail {
/// Calls f(node_view) for node `index` of `m`, whose input shapes must be inferred.
template <class F>
decltype(auto) with_node_view(const model& m, std::size_t index, F&& f) {
    const node& n = m.nodes[index];
    shape in[8];
    std::vector<shape> many;
    std::span<const shape> view;
    if (n.inputs.size() <= std::size(in)) {
        for (std::size_t k = 0; k < n.inputs.size(); ++k) in[k] = m.nodes[static_cast<std::size_t>(n.inputs[k])].out;
        view = {in, n.inputs.size()};
    } else {
        for (int i : n.inputs) many.push_back(m.nodes[static_cast<std::size_t>(i)].out);
        view = many;
    }
    return f(node_view{view, n.params, n.out, n.layer->params});
}

/// The sum of f(m, i) over the nodes of `m`.
template <class F>
std::int64_t sum_over_nodes(const model& m, F f) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += f(m, i);
    return total;
}
}  // namespace detail

/// The weights of node `index` of `m`, undrawn, in Keras' order and layouts, as its layer declares
/// them (its `weights` member; each layer's comment gives its layouts); empty for weightless
/// layers. The node's input shapes must be inferred.
inline std::vector<weight_spec> weight_specs(const model& m, int index) {
    const node& n = m[index];
    if (n.inputs.empty() || !n.layer->weights) return {};
    weight_list w;
    detail::with_node_view(m, static_cast<std::size_t>(index), [&](const node_view& v) { n.layer->weights(v, w); });
    return std::move(w.specs);
}

/// The weights (trainable and not) of node `i` of `m`.
inline std::int64_t count_weights(const model& m, std::size_t i) {
    std::int64_t total = 0;
    for (const auto& w : weight_specs(m, static_cast<int>(i))) {
        std::int64_t n = 1;
        for (auto d : w.dims) n *= d;
        total += n;
    }
    return total;
}

/// The weights of `m`, as Keras' model.count_params() reports them.
inline std::int64_t count_weights(const model& m) {
    return detail::sum_over_nodes(m, [](const model& g, std::size_t i) { return count_weights(g, i); });
}

}  // namespace memo
