#pragma once
// A backend's kernel for a layer is found by the layer's type, as {fmt} finds a formatter<T>.
// A backend gathers its kernels in one struct of overloads: `static R run(L, Call c)` for a layer
// type L (a template covers a family: `template <int N, pool_kind K> run(layers::pooling<N, K>, ...)`),
// and `static constexpr std::string_view unsupported(L)`, saying why, for a layer it does not run.
// kernel_table() builds the backend's table by class name over a layer list; a layer of the list
// with neither is a compile error whose instantiation names the layer and the backend's kernels.
#include <concepts>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "layer.hpp"

namespace memo {

/// Kernels has a kernel for L, called with a Call (the backend's view of one node).
template <class Kernels, class L, class Call>
concept has_kernel = requires(Call c) {
    Kernels::run(L{}, std::forward<Call>(c));
};

/// Kernels says it does not run L, and why.
template <class Kernels, class L>
concept declares_unsupported = requires {
    { Kernels::unsupported(L{}) } -> std::convertible_to<std::string_view>;
};

/// A layer that takes no input (InputLayer) is fed, not run: it needs no kernel.
template <class L>
constexpr bool takes_inputs() {
    if constexpr (detail::has_arity<L>) return L::arity.max != 0;
    return true;
}

namespace detail {
template <class Kernels, class Call, class L, class Table>
void add_kernel(Table& t) {
    if constexpr (has_kernel<Kernels, L, Call>) t.emplace(std::string(L::name), [](Call c) { return Kernels::run(L{}, std::forward<Call>(c)); });
    else
        static_assert(declares_unsupported<Kernels, L> || !takes_inputs<L>(),
                      "a layer of the list has no kernel in this backend: give its kernels `static R run(L, Call)`, or "
                      "`static constexpr std::string_view unsupported(L)` saying why (L and Kernels are the template arguments above)");
}
}  // namespace detail

/// The kernels of every layer of List that Kernels runs, by class name, each an Op taking a Call.
template <class Kernels, class Call, class Op, class... Ls>
std::map<std::string, Op, std::less<>> kernel_table(layer_list<Ls...>) {
    std::map<std::string, Op, std::less<>> t;
    (detail::add_kernel<Kernels, Call, Ls>(t), ...);
    return t;
}

/// The layers of List that Kernels declares unsupported, by class name, with why.
template <class Kernels, class... Ls>
std::map<std::string, std::string, std::less<>> unsupported_layers(layer_list<Ls...>) {
    std::map<std::string, std::string, std::less<>> t;
    (
        [&] {
            if constexpr (declares_unsupported<Kernels, Ls>) t.emplace(std::string(Ls::name), std::string(Kernels::unsupported(Ls{})));
        }(),
        ...);
    return t;
}

}  // namespace memo
