#pragma once
// Operator sets: a search draws the operator of each seed from one, by index.
#include <array>
#include <cstddef>
#include <string_view>

#include "concepts.hpp"

namespace memo {

/// A set of mutation operators, dispatched by index at run time.
template <class... Ops>
struct operator_set {
    static constexpr std::size_t size = sizeof...(Ops);
    static constexpr std::array<std::string_view, sizeof...(Ops)> names{Ops::name...};

    /// Applies operator i.
    template <class Model, class Ctx>
    static expected<Model> apply(std::size_t i, const Model& m, rng& r, const Ctx& ctx) {
        static_assert((mutator<Ops, Model, Ctx> && ...), "every operator must satisfy memo::mutator");
        using fn = expected<Model> (*)(const Model&, rng&, const Ctx&);
        static constexpr std::array<fn, sizeof...(Ops)> table{+[](const Model& x, rng& g, const Ctx& c) { return Ops{}(x, g, c); }...};
        return table[i](m, r, ctx);
    }
};

}  // namespace memo
