#pragma once
// Reference kernels: Dense, Activation, CustomScaleLayer, the regularisation layers (identity at
// inference) and the adapters (Reshape, expand, drop-dim, pad, crop, cast, inject).
#include <limits>

#include "../../layers/adapters.hpp"
#include "../../layers/core.hpp"
#include "../../layers/reg.hpp"
#include "array.hpp"

namespace memo::reference {

/// out[..., u] = act(sum_k in[..., k] * kernel[k, u] + bias[u]) over the last axis.
template <class T>
expected<array<T>> dense(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    params p{n};
    const array<T>& x = in[0];
    const int64_t k = x.dim(-1), units = p.integer("units"), rows = x.size() / std::max<int64_t>(1, k);
    auto dims = x.dims;
    dims.back() = units;
    array<T> out(dims);
    const bool bias = p.flag("use_bias");
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t u = 0; u < units; ++u) {
            acc_t<T> s = bias ? static_cast<acc_t<T>>(w[1][u]) : acc_t<T>(0);
            for (int64_t j = 0; j < k; ++j) s += static_cast<acc_t<T>>(x[r * k + j]) * static_cast<acc_t<T>>(w[0][j * units + u]);
            out[r * units + u] = static_cast<T>(s);
        }
    apply_activation(out, p.str("activation"));
    return out;
}

/// The kernels of Dense, Activation, CustomScaleLayer, the regularisation layers and the adapters.
template <class T>
struct core_kernels {
    using ins = std::span<const array<T>>;

    template <class Tag>
    static expected<array<T>> run(layers::regularization<Tag>, const node&, ins in, ins) {
        return in[0];
    }
    static expected<array<T>> run(layers::cast, const node&, ins in, ins) { return in[0]; }  // the interpreter rounds a cast's output to its dtype
    static expected<array<T>> run(layers::dense, const node& n, ins in, ins w) { return dense<T>(n, in, w); }
    static expected<array<T>> run(layers::activation, const node& n, ins in, ins) {
        array<T> out = in[0];
        apply_activation(out, params{n}.str("activation"));
        return out;
    }
    static expected<array<T>> run(layers::custom_scale, const node& n, ins in, ins) {
        using A = acc_t<T>;
        const A scale = static_cast<A>(params{n}.real("scale"));
        array<T> out = in[0];
        for (int64_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(static_cast<A>(in[0][i]) + static_cast<A>(in[1][i]) * scale);
        return out;
    }
    // Shape-only adapters: the same elements in a new shape (taken from the node's inferred shape).
    static expected<array<T>> run(layers::reshape, const node& n, ins in, ins) { return reshaped(n, in); }
    static expected<array<T>> run(layers::expand_dims, const node& n, ins in, ins) { return reshaped(n, in); }
    static expected<array<T>> run(layers::drop_dim, const node& n, ins in, ins) {
        const int axis = static_cast<int>(params{n}.integer("axis"));
        const array<T>& x = in[0];
        const int64_t len = x.dim(axis), inner = x.strides()[static_cast<std::size_t>(axis)], outer = x.size() / (len * inner);
        array<T> out(concrete(n.out, x.dims[0]));
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) out[o * inner + i] = x[o * len * inner + i];  // index 0 along axis
        return out;
    }
    static expected<array<T>> run(layers::pad, const node& n, ins in, ins) { return border(n, in, +1); }
    static expected<array<T>> run(layers::crop, const node& n, ins in, ins) { return border(n, in, -1); }
    static expected<array<T>> run(layers::inject, const node& n, ins in, ins) {
        params p{n};
        const auto v = p.str("value");
        const double x = v == "nan"   ? std::numeric_limits<double>::quiet_NaN()
                         : v == "inf" ? std::numeric_limits<double>::infinity()
                                      : -std::numeric_limits<double>::infinity();
        array<T> out = in[0];
        const int64_t stride = std::max<int64_t>(1, p.integer("stride"));
        for (int64_t i = 0; i < out.size(); i += stride) out[i] = static_cast<T>(static_cast<acc_t<T>>(x));
        return out;
    }

private:
    static expected<array<T>> reshaped(const node& n, ins in) {
        array<T> out = in[0];
        out.dims = concrete(n.out, in[0].dims[0]);
        return out;
    }
    // Pad and crop: copy the overlap of input and output at an offset per axis.
    static array<T> border(const node& n, ins in, int sign) {
        params p{n};
        const auto& amounts = std::get<ints>(p.param(sign > 0 ? "padding" : "cropping"));
        const array<T>& x = in[0];
        array<T> out(concrete(n.out, x.dims[0]));
        if (sign > 0) std::fill(out.data.begin(), out.data.end(), static_cast<T>(static_cast<acc_t<T>>(p.real("constant_values"))));
        const auto xs = x.strides(), os = out.strides();
        std::vector<int64_t> idx(static_cast<std::size_t>(x.rank()), 0);
        for (int64_t e = 0; e < x.size(); ++e) {
            int64_t rem = e, dst = 0;
            bool inside = true;
            for (int d = 0; d < x.rank(); ++d) {
                const int64_t i = rem / xs[static_cast<std::size_t>(d)];
                rem %= xs[static_cast<std::size_t>(d)];
                const int64_t shift = d == 0 ? 0 : amounts[2 * (d - 1)];
                const int64_t j = sign > 0 ? i + shift : i - shift;
                if (j < 0 || j >= out.dims[static_cast<std::size_t>(d)]) {
                    inside = false;
                    break;
                }
                dst += j * os[static_cast<std::size_t>(d)];
            }
            if (inside) out[dst] = x[e];
        }
        return out;
    }
};

}  // namespace memo::reference
