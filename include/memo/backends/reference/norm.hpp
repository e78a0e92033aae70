#pragma once
// Reference kernels: BatchNormalization (inference: moving statistics) and LayerNormalization
// (statistics of each sample over its one axis), both as Keras 2.8 computes them.
#include "../../layers/norm.hpp"
#include "array.hpp"

namespace memo::reference {

namespace detail::norm {

/// The input viewed as (outer, len, inner) around `axis` (Keras' axis, made non-negative).
struct around_axis {
    int axis;
    int64_t outer, len, inner;
    template <class T>
    static around_axis of(const array<T>& x, int64_t keras_axis) {
        const int axis = static_cast<int>(keras_axis < 0 ? keras_axis + x.rank() : keras_axis);
        const int64_t len = x.dim(axis), inner = x.strides()[static_cast<std::size_t>(axis)];
        return {axis, x.size() / std::max<int64_t>(1, len * inner), len, inner};
    }
    int64_t at(int64_t o, int64_t k, int64_t i) const noexcept { return (o * len + k) * inner + i; }
};

/// gamma and beta of a normalisation (each present only when scale or center), widened.
template <class T>
struct affine {
    std::vector<acc_t<T>> gamma, beta;
    std::size_t used = 0;  // weights consumed
    bool ok = true;        // every weight present, of the axis' size
    affine(const params& p, std::span<const array<T>> w, int64_t len) : gamma(static_cast<std::size_t>(len), 1), beta(static_cast<std::size_t>(len), 0) {
        auto take = [&](std::vector<acc_t<T>>& into) {
            if (!(ok = ok && used < w.size() && w[used].size() == len)) return;
            for (int64_t c = 0; c < len; ++c) into[static_cast<std::size_t>(c)] = static_cast<acc_t<T>>(w[used][c]);
            ++used;
        };
        if (p.flag("scale")) take(gamma);
        if (p.flag("center")) take(beta);
    }
};

}  // namespace detail::norm

/// The kernels of BatchNormalization and LayerNormalization.
template <class T>
struct norm_kernels {
    using A = acc_t<T>;
    using ins = std::span<const array<T>>;

    // gamma * (x - moving_mean) / sqrt(moving_variance + epsilon) + beta, per entry of `axis`;
    // weights in the order gamma, beta, moving_mean, moving_variance, skipping the absent ones.
    static expected<array<T>> run(layers::batch_normalization, const node& n, ins in, ins w) {
        using std::sqrt;
        params p{n};
        const array<T>& x = in[0];
        const auto v = detail::norm::around_axis::of(x, p.integer("axis"));
        // Keras takes TF's fused kernel for the channel axis of a 4-D (1 or 3) or 5-D (1 or 4) input
        // unless the model computes in float64, and that kernel raises epsilon to at least 1.001e-5.
        // It depends on the model's dtype, not on the precision this kernel runs in.
        const int rank = x.rank(), a = v.axis;
        const bool fused = n.type != dtype::float64 && ((rank == 4 && (a == 1 || a == 3)) || (rank == 5 && (a == 1 || a == 4)));
        const A eps = static_cast<A>(fused ? std::max(p.real("epsilon"), 1.001e-5) : p.real("epsilon"));
        const detail::norm::affine<T> ab(p, w, v.len);
        if (!ab.ok || w.size() != ab.used + 2 || w[ab.used].size() != v.len || w[ab.used + 1].size() != v.len)
            return fail("BatchNormalization's weights do not match its axis and its scale and center flags");
        const array<T>&mean = w[ab.used], &variance = w[ab.used + 1];
        array<T> out(x.dims);
        for (int64_t k = 0; k < v.len; ++k) {
            const auto c = static_cast<std::size_t>(k);
            const A scale = ab.gamma[c] / sqrt(static_cast<A>(variance[k]) + eps), mu = static_cast<A>(mean[k]);
            for (int64_t o = 0; o < v.outer; ++o)
                for (int64_t i = 0; i < v.inner; ++i) {
                    const int64_t e = v.at(o, k, i);
                    out[e] = static_cast<T>((static_cast<A>(x[e]) - mu) * scale + ab.beta[c]);
                }
        }
        return out;
    }
    // Mean and (biased) variance over `axis` within each sample, then gamma and beta of that axis.
    static expected<array<T>> run(layers::layer_normalization, const node& n, ins in, ins w) {
        using std::sqrt;
        params p{n};
        const array<T>& x = in[0];
        const auto v = detail::norm::around_axis::of(x, p.integer("axis"));
        const detail::norm::affine<T> ab(p, w, v.len);
        if (!ab.ok || w.size() != ab.used) return fail("LayerNormalization's weights do not match its axis and its scale and center flags");
        const A eps = static_cast<A>(p.real("epsilon"));
        array<T> out(x.dims);
        for (int64_t o = 0; o < v.outer; ++o)
            for (int64_t i = 0; i < v.inner; ++i) {
                A mean = 0, var = 0;
                for (int64_t k = 0; k < v.len; ++k) mean += static_cast<A>(x[v.at(o, k, i)]);
                mean /= static_cast<A>(v.len);
                for (int64_t k = 0; k < v.len; ++k) {
                    const A d = static_cast<A>(x[v.at(o, k, i)]) - mean;
                    var += d * d;
                }
                const A inv = A(1) / sqrt(var / static_cast<A>(v.len) + eps);
                for (int64_t k = 0; k < v.len; ++k) {
                    const auto c = static_cast<std::size_t>(k);
                    const int64_t e = v.at(o, k, i);
                    out[e] = static_cast<T>((static_cast<A>(x[e]) - mean) * inv * ab.gamma[c] + ab.beta[c]);
                }
            }
        return out;
    }
};

}  // namespace memo::reference
