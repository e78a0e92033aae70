#pragma once
// Reference kernels: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and their Global forms (Keras 2.8).
//
// Pooling slides the conv family's window (conv.hpp) with dilation 1; padded positions are never
// visited, so "same" max pooling ignores the padding and "same" average pooling divides by the
// count of real elements in the window, as TensorFlow does. A NaN in a window makes its max NaN.
#include <limits>

#include "../../layers/pool.hpp"
#include "conv.hpp"

namespace memo::reference {

namespace detail::pool {
/// The running max with v folded in; the first NaN sticks.
template <class A>
A fold_max(A max, A v) {
    using std::isnan;
    return isnan(max) || !(isnan(v) || v > max) ? max : v;
}
}  // namespace detail::pool

/// {Max,Average}Pooling{1,2,3}D: strides None means strides = pool_size.
template <class T, bool Max>
expected<array<T>> pool_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>>) {
    using A = acc_t<T>;
    using namespace detail::conv;
    const auto g = prepare(n, in[0], "pool_size");
    const int64_t C = g.channels, in_volume = g.w.in_volume(), out_volume = g.w.out_volume();
    if (C != g.out_channels) return fail("input has " + std::to_string(C) + " channels, the node's shape " + n.out.str());
    array<T> out(g.out_dims);
    std::vector<A> acc(static_cast<std::size_t>(C));
    for (int64_t b = 0; b < g.batch; ++b)
        g.w.positions([&](int64_t o, const axes& at) {
            std::fill(acc.begin(), acc.end(), Max ? -std::numeric_limits<A>::infinity() : A(0));
            int64_t count = 0;
            g.w.taps_of(at, [&](int64_t, int64_t pos) {
                const T* xs = &g.x[(b * in_volume + pos) * C];
                for (int64_t c = 0; c < C; ++c) {
                    const A v = static_cast<A>(xs[c]);
                    A& a = acc[static_cast<std::size_t>(c)];
                    if constexpr (Max) a = detail::pool::fold_max(a, v);
                    else a += v;
                }
                ++count;
            });
            T* ys = &out[(b * out_volume + o) * C];
            for (int64_t c = 0; c < C; ++c) {
                const A a = acc[static_cast<std::size_t>(c)];
                ys[c] = static_cast<T>(Max ? a : a / static_cast<A>(std::max<int64_t>(1, count)));
            }
        });
    return finish(std::move(out), g, n);
}

/// Global{Max,Average}Pooling{1,2,3}D: the max or mean over all spatial positions per channel.
/// (batch, channels), (batch, 1..., channels) and (batch, channels, 1...) share one element order.
template <class T, bool Max>
expected<array<T>> global_pool_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>>) {
    using A = acc_t<T>;
    const bool first = params{n}.channels_first();
    const array<T> x = first ? detail::conv::move_channels(in[0], true) : in[0];
    const int64_t batch = x.dims[0], C = x.dims.back(), S = x.size() / std::max<int64_t>(1, batch * C);
    array<T> out(concrete(n.out, batch));
    if (out.size() != batch * C) return fail("input has " + std::to_string(C) + " channels, the node's shape " + n.out.str());
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t c = 0; c < C; ++c) {
            A a = Max ? -std::numeric_limits<A>::infinity() : A(0);
            for (int64_t s = 0; s < S; ++s) {
                const A v = static_cast<A>(x[(b * S + s) * C + c]);
                if constexpr (Max) a = detail::pool::fold_max(a, v);
                else a += v;
            }
            out[b * C + c] = static_cast<T>(Max ? a : a / static_cast<A>(std::max<int64_t>(1, S)));
        }
    return out;
}

/// The kernels of the pooling layers: one loop per kind, which reads the rank from the node.
template <class T>
struct pool_kernels {
    using ins = std::span<const array<T>>;

    template <int N, layers::pool_kind K>
    static expected<array<T>> run(layers::pooling<N, K>, const node& n, ins in, ins w) {
        return pool_nd<T, K == layers::pool_kind::max>(n, in, w);
    }
    template <int N, layers::pool_kind K>
    static expected<array<T>> run(layers::global_pooling<N, K>, const node& n, ins in, ins w) {
        return global_pool_nd<T, K == layers::pool_kind::max>(n, in, w);
    }
};

}  // namespace memo::reference
