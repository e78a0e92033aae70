#pragma once
// The operator sets a search draws from.
#include <tuple>

#include "lemon_ops.hpp"
#include "memo_ops.hpp"

namespace memo::mutation {

/// A set of mutation operators, dispatched by index at run time.
template <class... Ops>
struct operator_set {
    static constexpr std::size_t size = sizeof...(Ops);
    static constexpr std::array<std::string_view, sizeof...(Ops)> names{Ops::name...};

    /// Applies operator i.
    template <class Model, class Ctx>
    static expected<Model> apply(std::size_t i, const Model& m, rng& r, const Ctx& ctx) {
        static_assert((mutator<Ops, Model, Ctx> && ...), "every operator must satisfy memo::mutation::mutator");
        using fn = expected<Model> (*)(const Model&, rng&, const Ctx&);
        static constexpr std::array<fn, sizeof...(Ops)> table{+[](const Model& x, rng& g, const Ctx& c) { return Ops{}(x, g, c); }...};
        return table[i](m, r, ctx);
    }
};

/// MEMO's operators: the paper's seven and its code's MDims and MDtype.
using memo_operators = operator_set<nla, lresh, lmerge, lconn, cshape, cmode, nan_input, mdims, mdtype>;
/// LEMON's operators (the ablation MEMO_o).
using lemon_operators = operator_set<layer_removal, layer_switch, layer_duplication, layer_addition, activation_removal, activation_replacement,
                                     gaussian_fuzzing, neuron_effect_block, neuron_activation_inverse, neuron_switch>;

}  // namespace memo::mutation
