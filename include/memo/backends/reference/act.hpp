#pragma once
// Reference kernels: ReLU, Softmax, LeakyReLU, PReLU, ELU, ThresholdedReLU (Keras 2.8).
//
// Scalar parameters are rounded to T before use, as TensorFlow converts a Python float to the
// tensor's dtype (so a float16 ThresholdedReLU compares against half(theta)).
#include "../../layers/act.hpp"
#include "array.hpp"

namespace memo::reference {

namespace detail::act {

/// The parameter `x` as TensorFlow sees it in a T computation, widened to the accumulator.
template <class T>
acc_t<T> rounded(double x) {
    return static_cast<acc_t<T>>(static_cast<T>(static_cast<acc_t<T>>(x)));
}

/// x with f applied to every element, in the accumulator type.
template <class T, class F>
array<T> map(const array<T>& x, F f) {
    array<T> out = x;
    for (auto& v : out.data) v = static_cast<T>(f(static_cast<acc_t<T>>(v)));
    return out;
}

/// max(x, 0), keeping NaN.
template <class A>
A relu(A x) {
    return x < A(0) ? A(0) : x;
}

}  // namespace detail::act

/// The kernels of the activation layers.
template <class T>
struct act_kernels {
    using A = acc_t<T>;
    using ins = std::span<const array<T>>;

    // Keras 3's ReLU(negative_slope, max_value, threshold): relu(x), or where(x > threshold, x, 0)
    // for a threshold, clipped to [0, max_value], minus negative_slope * relu(threshold - x).
    // Written as Keras computes it: relu keeps a NaN, the threshold's select makes NaN and -inf 0
    // (Keras 2 multiplied by x > threshold, which made both NaN; Keras 3 selects).
    static expected<array<T>> run(layers::relu, const node& n, ins in, ins) {
        using detail::act::rounded, detail::act::map;
        params p{n};
        const A slope = rounded<T>(p.real("negative_slope")), threshold = rounded<T>(p.real("threshold"));
        const bool clip = !p.none("max_value");
        const A top = clip ? std::max(A(0), rounded<T>(p.real("max_value"))) : A(0);
        return map(in[0], [&](A x) {
            A y = threshold != A(0) ? (x > threshold ? x : A(0)) : detail::act::relu(x);
            if (clip) y = std::clamp(y, A(0), top);
            return slope != A(0) ? y - slope * detail::act::relu(threshold - x) : y;
        });
    }
    static expected<array<T>> run(layers::softmax, const node& n, ins in, ins) {
        array<T> out = in[0];
        softmax(out, static_cast<int>(params{n}.integer("axis")));
        return out;
    }
    static expected<array<T>> run(layers::leaky_relu, const node& n, ins in, ins) {
        using detail::act::rounded, detail::act::map;
        const A alpha = rounded<T>(params{n}.real("alpha"));
        return map(in[0], [&](A x) { return x < A(0) ? alpha * x : x; });
    }
    static expected<array<T>> run(layers::elu, const node& n, ins in, ins) {
        using detail::act::rounded, detail::act::map;
        using std::expm1;
        const A alpha = rounded<T>(params{n}.real("alpha"));
        return map(in[0], [&](A x) { return x > A(0) ? x : alpha * expm1(x); });
    }
    // Keras: x * cast(x > theta).
    static expected<array<T>> run(layers::thresholded_relu, const node& n, ins in, ins) {
        using detail::act::rounded, detail::act::map;
        const A theta = rounded<T>(params{n}.real("theta"));
        return map(in[0], [&](A x) { return x * A(x > theta ? 1 : 0); });
    }
    // relu(x) - alpha * relu(-x), alpha of the sample shape with shared axes of size 1 (broadcast).
    static expected<array<T>> run(layers::prelu, const node&, ins in, ins w) {
        if (w.size() != 1) return fail("PReLU takes one weight, alpha");
        const array<T>&x = in[0], &alpha = w[0];
        bool fits = alpha.rank() == x.rank() - 1;
        for (int d = 1; fits && d < x.rank(); ++d) fits = alpha.dim(d - 1) == 1 || alpha.dim(d - 1) == x.dim(d);
        if (!fits) return fail("PReLU alpha does not broadcast to the input sample shape");
        const auto xs = x.strides(), as = alpha.strides();
        array<T> out = x;
        for (int64_t e = 0; e < x.size(); ++e) {
            int64_t a = 0;  // alpha's element: x's index past the batch, 0 along shared axes
            for (std::size_t k = 1; k < xs.size(); ++k)
                if (alpha.dims[k - 1] != 1) a += (e % xs[k - 1]) / xs[k] * as[k - 1];
            const A v = static_cast<A>(x[e]);
            out[e] = static_cast<T>(v > A(0) ? v : static_cast<A>(alpha[a]) * v);
        }
        return out;
    }
};

}  // namespace memo::reference
