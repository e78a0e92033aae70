#pragma once
// Reference kernels: Abs, Square, StopGradient and ScaleShift. Each works in acc_t<T> and rounds
// to T once per operation, so ScaleShift rounds its product before adding the shift, as the
// libraries' separate multiply and add do.
#include <cmath>

#include "array.hpp"

namespace memo::reference {

template <class T>
void register_elementwise(kernel_table<T>& t) {
    using A = acc_t<T>;
    auto each = [](std::span<const array<T>> in, auto f) {
        array<T> out = in[0];
        for (int64_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(f(static_cast<A>(in[0][i])));
        return out;
    };
    t.set("Abs", [each](const node&, std::span<const array<T>> in, std::span<const array<T>>) -> expected<array<T>> {
        return each(in, [](A x) { return std::fabs(x); });  // fabs(-0) = +0, fabs(NaN) is NaN
    });
    t.set("Square",
          [each](const node&, std::span<const array<T>> in, std::span<const array<T>>) -> expected<array<T>> { return each(in, [](A x) { return x * x; }); });
    t.set("StopGradient", [](const node&, std::span<const array<T>> in, std::span<const array<T>>) -> expected<array<T>> { return in[0]; });
    t.set("ScaleShift", [each](const node& n, std::span<const array<T>> in, std::span<const array<T>>) -> expected<array<T>> {
        params p{n};
        const A scale = static_cast<A>(p.real("scale")), shift = static_cast<A>(p.real("shift"));
        return each(in, [&](A x) { return static_cast<A>(static_cast<T>(x * scale)) + shift; });
    });
}

}  // namespace memo::reference
