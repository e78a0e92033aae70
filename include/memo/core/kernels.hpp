#pragma once
// A backend's kernel for a layer is found by the layer's type, as {fmt} finds a formatter<T>.
// A backend gathers its kernels in one struct of overloads: `static R run(L, args...)` for a layer
// type L (a template covers a family: `template <int N, pool_kind K> run(layers::pooling<N, K>, ...)`),
// and `static constexpr std::string_view unsupported(L)`, saying why, for a layer it does not run.
// kernel_table() builds the backend's table by class name over a layer list; a layer of the list
// with neither is a compile error whose instantiation names the layer and the backend's kernels.
#include <concepts>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "layer.hpp"

namespace memo {

namespace detail {
/// What an Op (a std::function) takes: a kernel of L is Kernels::run(L{}, those arguments).
template <class Op>
struct kernel_call;
template <class R, class... Args>
struct kernel_call<std::function<R(Args...)>> {
    template <class Kernels, class L>
    static constexpr bool found = requires(Args... a) {
        Kernels::run(L{}, std::forward<Args>(a)...);
    };
    template <class Kernels, class L>
    static std::function<R(Args...)> of() {
        return [](Args... a) -> R { return Kernels::run(L{}, std::forward<Args>(a)...); };
    }
};
}  // namespace detail

/// Kernels has a kernel for L that an Op (a std::function) can call.
template <class Kernels, class L, class Op>
concept has_kernel = detail::kernel_call<Op>::template found<Kernels, L>;

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
template <class Kernels, class L, class Op, class Table>
void add_kernel(Table& t) {
    if constexpr (has_kernel<Kernels, L, Op>) t.emplace(L::name, kernel_call<Op>::template of<Kernels, L>());
    else
        static_assert(declares_unsupported<Kernels, L> || !takes_inputs<L>(),
                      "a layer of the list has no kernel in this backend: give its kernels `static R run(L, ...)`, or "
                      "`static constexpr std::string_view unsupported(L)` saying why (L and Kernels are the template arguments above)");
}
}  // namespace detail

/// The kernels of every layer of List that Kernels runs, by class name, each as an Op.
template <class Kernels, class Op, class Key = std::string, class... Ls>
std::map<Key, Op, std::less<>> kernel_table(layer_list<Ls...>) {
    std::map<Key, Op, std::less<>> t;
    (detail::add_kernel<Kernels, Ls, Op>(t), ...);
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
