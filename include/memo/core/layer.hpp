#pragma once
// The layer concept, its run-time descriptor, and the compile-time registry.
//
// A layer is a small struct (see layers/ for Keras' 67 classes):
//
//   struct my_layer : memo::layer_kind<memo::family::act, memo::rank_set::between(2, 6)> {
//       static constexpr std::string_view name = "MyLayer";  // the Keras class name
//       static std::span<const memo::param> params();       // its named parameter domains
//       static memo::expected<memo::shape> infer(memo::inputs in, memo::args p);  // pure
//   };
//
// layer_kind states its group, the input ranks it takes (batch included) and whether coverage
// counts it (`in_universe`: default true); a struct may declare those members itself. Optional
// members: `arity` (how many inputs: default {1, 1}), `dtype_param` (the parameter that sets the output dtype: default none),
// `rounds_at(in, p)` (the magnitude its formula rounds against besides its output, as ELU's
// alpha: default none; oracle/rounding.hpp), `weights(node, list)` (its weights before any is
// drawn, in Keras' order and layouts: default none; layers/weights.hpp) and `flops(node)` (its
// multiply-adds per sample: default 0; layers/cost.hpp). So everything a layer is, its domains,
// roles and defaults, shape rule, weights and cost, is declared in its one struct.
#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../engine/error.hpp"
#include "domain.hpp"
#include "shape.hpp"

namespace memo {

/// The nine groups of MEMO's layer universe, plus core (Dense, Input) and the adapters.
enum class family : unsigned char { conv, pool, rnn, norm, reg, act, reshape, merge, local, core, adapter };

constexpr std::string_view name_of(family f) noexcept {
    constexpr std::array<std::string_view, 11> names{"conv", "pool", "rnn", "norm", "reg", "act", "reshape", "merge", "local", "core", "adapter"};
    return names[static_cast<std::size_t>(f)];
}

/// A set of tensor ranks (batch dimension included), 0..15.
struct rank_set {
    std::uint16_t bits = 0;

    static constexpr rank_set of(int r) noexcept { return {static_cast<std::uint16_t>(1u << r)}; }
    static constexpr rank_set between(int lo, int hi) noexcept {
        rank_set s;
        for (int r = lo; r <= hi; ++r) s.bits |= static_cast<std::uint16_t>(1u << r);
        return s;
    }
    constexpr bool contains(int r) const noexcept { return r >= 0 && r < 16 && (bits >> r) & 1u; }
    constexpr bool empty() const noexcept { return bits == 0; }
    constexpr int count() const noexcept { return std::popcount(bits); }
    constexpr int lowest() const noexcept { return std::countr_zero(bits); }
    constexpr int highest() const noexcept { return 15 - std::countl_zero(static_cast<std::uint16_t>(bits)) + 0; }
    constexpr rank_set operator|(rank_set o) const noexcept { return {static_cast<std::uint16_t>(bits | o.bits)}; }
    constexpr rank_set operator&(rank_set o) const noexcept { return {static_cast<std::uint16_t>(bits & o.bits)}; }
    friend constexpr bool operator==(rank_set, rank_set) = default;
    template <class F>
    constexpr void for_each(F f) const {
        for (int r = 0; r < 16; ++r)
            if (contains(r)) f(r);
    }
    std::string str() const {
        if (empty()) return "-";
        const int lo = lowest(), hi = highest();
        if (count() == hi - lo + 1) return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
        std::string s;
        for_each([&](int r) { s += (s.empty() ? "" : ",") + std::to_string(r); });
        return s;
    }
};

/// A named parameter: its domain, its role and its Keras default.
struct param {
    std::string_view name;
    any_domain dom;
    role what = role::mode;
    value fallback{};  // Keras' default, used when a Keras config leaves the parameter out
};

/// How many inputs a layer takes.
struct arity_t {
    int min = 1, max = 1;
};

using inputs = std::span<const shape>;
using args = std::span<const value>;
using infer_fn = expected<shape> (*)(inputs, args);

/// The magnitude a layer's formula rounds against besides its output, which the oracles allow a
/// dtype's rounding of as absolute difference (oracle/rounding.hpp): a constant (ELU's
/// alpha * (exp(x) - 1) rounds at alpha however small its output), a multiple of its inputs'
/// magnitude (a normalization's x * rstd - mean * rstd rounds at |x| * rstd, even where the exact
/// output is 0) and a multiple of its output's (a recurrence of T steps rounds at its state's
/// scale T times over).
struct rounding_scale {
    double constant = 0, per_input = 0, per_output = 0;
};

/// What a weight is before it is drawn: its name, its dimensions in Keras' layout, its
/// initializer, and (an LSTM bias with unit_forget_bias) how many forget-gate units start at one.
struct weight_spec {
    std::string name;
    std::vector<std::int64_t> dims;
    std::string_view initializer;
    std::int64_t forget_bias_units = 0;
};

/// A layer's weights, as its `weights` member lists them.
struct weight_list {
    std::vector<weight_spec> specs;

    void add(std::string name, std::vector<std::int64_t> dims, std::string_view initializer) {
        specs.push_back({std::move(name), std::move(dims), initializer, 0});
    }
    /// LSTM's bias with unit_forget_bias: the forget gate's quarter (`units` of it) is ones.
    void forget_bias_ones(std::int64_t units) { specs.back().forget_bias_units = units; }
};

/// The value of the parameter called `name` among a layer's parameters `ps` and a node's values
/// `p` (in the same order), or nullptr where the layer has none.
inline const value* find_value(std::span<const param> ps, args p, std::string_view name) noexcept {
    for (std::size_t i = 0; i < ps.size() && i < p.size(); ++i)
        if (ps[i].name == name) return &p[i];
    return nullptr;
}

/// One node as its layer's `weights` and `flops` see it: the input shapes, the parameter values
/// (in the layer's params() order, read by name) and the output shape.
struct node_view {
    inputs in;
    args p;
    const shape& out;
    std::span<const param> ps;

    /// The value of the parameter called `name`, or nullptr where the layer has none.
    const value* find(std::string_view name) const noexcept { return find_value(ps, p, name); }
    std::int64_t integer(std::string_view name, std::int64_t fallback) const noexcept {
        const value* v = find(name);
        return v && !is_none(*v) ? as_int(*v) : fallback;
    }
    bool flag(std::string_view name, bool fallback) const noexcept {
        const value* v = find(name);
        return v ? as_bool(*v) : fallback;
    }
    std::string_view text(std::string_view name, std::string_view fallback) const noexcept {
        const value* v = find(name);
        return v && !is_none(*v) ? as_str(*v) : fallback;
    }
    bool channels_first() const noexcept { return text("data_format", "channels_last") == "channels_first"; }
    /// The `count` entries of a size parameter (kernel_size, pool_size).
    std::vector<std::int64_t> sizes(std::string_view name, int count) const {
        const value* v = find(name);
        if (!v || is_none(*v)) return std::vector<std::int64_t>(static_cast<std::size_t>(std::max(count, 0)), 1);
        const auto k = as_ints(*v, count);
        return std::vector<std::int64_t>(k.begin(), k.end());
    }
    /// The product of the `count` entries of a size parameter (1 where the layer has none).
    std::int64_t volume(std::string_view name, int count) const {
        std::int64_t v = 1;
        for (auto k : sizes(name, count)) v *= k;
        return v;
    }
    const shape& input() const noexcept { return in[0]; }
    /// The channels of the first input (its last axis, or axis 1 channels_first).
    std::int64_t channels() const noexcept {
        const shape& s = in[0];
        if (s.rank() < 2) return 0;
        return channels_first() ? s[1] : s.back();
    }
};

using weights_fn = void (*)(const node_view&, weight_list&);
using flops_fn = std::int64_t (*)(const node_view&);

/// The run-time view of a layer type: what a model node points to.
struct layer_def {
    std::string_view name;
    family fam;
    rank_set ranks;
    arity_t arity;
    std::span<const param> params;
    infer_fn infer;
    bool in_universe;
    int dtype_param;  // index of the parameter that sets the output dtype, or -1
    /// What the layer's own formula rounds against besides its output (oracle/rounding.hpp).
    /// nullptr: its output alone.
    rounding_scale (*rounds_at)(inputs, args) = nullptr;
    /// Its weights before any is drawn (layers/weights.hpp); nullptr: it has none.
    weights_fn weights = nullptr;
    /// Its multiply-adds per sample (layers/cost.hpp); nullptr: none.
    flops_fn flops = nullptr;

    /// Index of the parameter called `n`, or -1.
    int param_index(std::string_view n) const noexcept {
        for (std::size_t i = 0; i < params.size(); ++i)
            if (params[i].name == n) return static_cast<int>(i);
        return -1;
    }
    bool is_merge() const noexcept { return fam == family::merge; }
};

namespace detail {
template <class L>
concept has_arity = requires {
    { L::arity } -> std::convertible_to<arity_t>;
};
template <class L>
concept has_in_universe = requires {
    { L::in_universe } -> std::convertible_to<bool>;
};
template <class L>
concept has_dtype_param = requires {
    { L::dtype_param } -> std::convertible_to<std::string_view>;
};
template <class L>
concept has_rounds_at = requires(inputs in, args p) {
    { L::rounds_at(in, p) } -> std::convertible_to<rounding_scale>;
};
template <class L>
concept has_weights = requires(const node_view& n, weight_list& w) {
    L::weights(n, w);
};
template <class L>
concept has_flops = requires(const node_view& n) {
    { L::flops(n) } -> std::convertible_to<std::int64_t>;
};
}  // namespace detail

/// The layer concept. Requires:
///   L::name     the class name (Keras' where Keras has the layer)
///   L::family   its group
///   L::ranks    the input ranks it accepts, batch dimension included
///   L::params() its parameters, in a fixed order (node values are stored in this order)
///   L::infer(in, p) the output shape for these input shapes and parameter values, or why not
template <class L>
concept layer = requires(inputs in, args p) {
    { L::name } -> std::convertible_to<std::string_view>;
    { L::family } -> std::convertible_to<family>;
    { L::ranks } -> std::convertible_to<rank_set>;
    { L::params() } -> std::convertible_to<std::span<const param>>;
    { L::infer(in, p) } -> std::same_as<expected<shape>>;
};

/// Whether coverage counts a layer type (MEMO's universe) or not (Dense, Input, the adapters).
enum class counted : bool { no, yes };

/// What a layer type states first, as a base: its group, the input ranks it takes and whether
/// coverage counts it (`struct dense : layer_kind<family::core, rank_set::between(2, 6), counted::no>`).
template <family F, rank_set Ranks, counted C = counted::yes>
struct layer_kind {
    static constexpr memo::family family = F;
    static constexpr rank_set ranks = Ranks;
    static constexpr bool in_universe = C == counted::yes;
};

/// The descriptor of a layer type.
template <layer L>
layer_def describe() {
    layer_def d{L::name, L::family, L::ranks, {}, L::params(), &L::infer, true, -1};
    if constexpr (detail::has_arity<L>) d.arity = L::arity;
    if constexpr (detail::has_in_universe<L>) d.in_universe = L::in_universe;
    if constexpr (detail::has_dtype_param<L>) d.dtype_param = d.param_index(L::dtype_param);
    if constexpr (detail::has_rounds_at<L>) d.rounds_at = &L::rounds_at;
    if constexpr (detail::has_weights<L>) d.weights = &L::weights;
    if constexpr (detail::has_flops<L>) d.flops = &L::flops;
    return d;
}

/// A registry is a plain type list of layers.
template <class... Ls>
struct layer_list {
    static constexpr std::size_t size = sizeof...(Ls);
};

namespace detail {
template <class... Lists>
struct concat_impl;
template <class... As>
struct concat_impl<layer_list<As...>> {
    using type = layer_list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat_impl<layer_list<As...>, layer_list<Bs...>, Rest...> {
    using type = typename concat_impl<layer_list<As..., Bs...>, Rest...>::type;
};
}  // namespace detail

/// Concatenates registries: `using mine = memo::concat<memo::keras_layers, memo::layer_list<my_layer>>;`
template <class... Lists>
using concat = typename detail::concat_impl<Lists...>::type;

/// Calls f(std::type_identity<L>{}) for the layer at index i of List: run-time dispatch through a
/// table of function pointers built at compile time.
template <class List, class F>
decltype(auto) with_index(std::size_t i, F&& f);

template <class... Ls, class F>
decltype(auto) with_index_impl(layer_list<Ls...>, std::size_t i, F&& f) {
    using R = decltype(f(std::type_identity<std::tuple_element_t<0, std::tuple<Ls...>>>{}));
    using thunk = R (*)(F&);
    static constexpr std::array<thunk, sizeof...(Ls)> table{+[](F& g) -> R { return g(std::type_identity<Ls>{}); }...};
    return table.at(i)(f);
}
template <class List, class F>
decltype(auto) with_index(std::size_t i, F&& f) {
    return with_index_impl(List{}, i, std::forward<F>(f));
}

/// The run-time table of a registry: descriptors by index and by name.
class registry {
public:
    template <layer... Ls>
    static registry make(layer_list<Ls...>) {
        registry r;
        (r.add(describe<Ls>()), ...);
        return r;
    }

    std::size_t size() const noexcept { return defs_.size(); }
    const layer_def& operator[](std::size_t i) const noexcept { return defs_[i]; }
    auto begin() const noexcept { return defs_.begin(); }
    auto end() const noexcept { return defs_.end(); }

    /// The descriptor named `name`, or nullptr.
    const layer_def* find(std::string_view name) const noexcept {
        auto it = by_name_.find(name);
        return it == by_name_.end() ? nullptr : &defs_[it->second];
    }
    /// The descriptor named `name`; throws memo::error naming it when there is none.
    const layer_def& at(std::string_view name) const {
        if (auto d = find(name)) return *d;
        throw error("unknown layer class '" + std::string(name) + "'");
    }
    std::size_t index_of(const layer_def& d) const noexcept { return static_cast<std::size_t>(&d - defs_.data()); }

private:
    void add(layer_def d) {
        by_name_.emplace(d.name, defs_.size());
        defs_.push_back(d);
    }
    std::vector<layer_def> defs_;
    std::unordered_map<std::string_view, std::size_t> by_name_;
};

/// The registry of a type list, built once on first use (no static-initialiser registration).
template <class List>
const registry& registry_of() {
    static const registry r = registry::make(List{});
    return r;
}

}  // namespace memo
