#pragma once
// What memo's generic algorithms ask of the types a user brings: a coverage metric and a mutation
// operator over a model of one's own (the selector concept is in selector.hpp). Nothing here names
// a concrete model type: memo's Keras graph (core/model.hpp) is one model among others.
#include <concepts>
#include <cstddef>
#include <string_view>

#include "error.hpp"
#include "rng.hpp"

namespace memo {

/// The coverage-metric concept. Requires:
///   c.add(m)     records model m; returns how many items were new (convertible to size_t)
///   c.gain(m)    how many items m would add, without recording it
///   c.covered()  items covered so far
///   c.total()    items in the universe
template <class C, class Model>
concept coverage_metric = requires(C& c, const C& cc, const Model& m) {
    { c.add(m) } -> std::convertible_to<std::size_t>;
    { cc.gain(m) } -> std::convertible_to<std::size_t>;
    { cc.covered() } -> std::convertible_to<std::size_t>;
    { cc.total() } -> std::convertible_to<std::size_t>;
};

/// The mutator concept. Requires:
///   Op::name           the operator's short name ("NLA")
///   op(m, rng, ctx)    a valid mutant of m, or the reason none could be made (never an invalid model)
/// ctx is the search's context: what operators may consult (memo's: the coverage, the cost limit).
template <class Op, class Model, class Ctx>
concept mutator = requires(const Op op, const Model& m, rng& r, const Ctx& ctx) {
    { Op::name } -> std::convertible_to<std::string_view>;
    { op(m, r, ctx) } -> std::same_as<expected<Model>>;
};

}  // namespace memo
