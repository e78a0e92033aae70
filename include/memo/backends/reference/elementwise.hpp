#pragma once
// Reference kernels: Abs, Square, StopGradient and ScaleShift. Each works in acc_t<T> and rounds
// to T once per operation, so ScaleShift rounds its product before adding the shift, as the
// libraries' separate multiply and add do.
#include <cmath>

#include "../../layers/elementwise.hpp"
#include "array.hpp"

namespace memo::reference {

/// The kernels of the element-wise layers.
template <class T>
struct elementwise_kernels {
    using A = acc_t<T>;
    using ins = std::span<const array<T>>;

    static expected<array<T>> run(layers::absolute, const node&, ins in, ins) {
        return each(in, [](A x) { return std::fabs(x); });  // fabs(-0) = +0, fabs(NaN) is NaN
    }
    static expected<array<T>> run(layers::square, const node&, ins in, ins) {
        return each(in, [](A x) { return x * x; });
    }
    static expected<array<T>> run(layers::stop_gradient, const node&, ins in, ins) { return in[0]; }
    static expected<array<T>> run(layers::scale_shift, const node& n, ins in, ins) {
        params p{n};
        const A scale = static_cast<A>(p.real("scale")), shift = static_cast<A>(p.real("shift"));
        return each(in, [&](A x) { return static_cast<A>(static_cast<T>(x * scale)) + shift; });
    }

private:
    template <class F>
    static array<T> each(ins in, F f) {
        array<T> out = in[0];
        for (int64_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(f(static_cast<A>(in[0][i])));
        return out;
    }
};

}  // namespace memo::reference
