#pragma once
// Reference kernels: Conv1D/2D/3D, SeparableConv1D/2D, DepthwiseConv1D/2D, Conv2D/3DTranspose and
// LocallyConnected1D/2D (Keras 2.8, TensorFlow 2.9).
//
// One N-dimensional loop per kind: over output positions, and over the kernel taps that land
// inside the input (padding contributes nothing, so it is never materialised). A channels_first
// input is moved to channels_last and the result moved back, so every loop sees
// (batch, spatial..., channels). Output sizes are the node's inferred shape.
#include <array>

#include "../../layers/common.hpp"
#include "../../layers/conv.hpp"
#include "../../layers/local.hpp"
#include "array.hpp"

namespace memo::reference {

namespace detail::conv {

inline constexpr int max_axes = 3;
using axes = std::array<int64_t, max_axes>;

/// A sliding window over the spatial axes: input position = out * stride + tap * dilation - pad.
struct window {
    int n = 0;
    axes in{}, out{}, kernel{}, stride{}, dilation{}, pad{};

    static int64_t volume(const axes& a, int n) {
        int64_t v = 1;
        for (int i = 0; i < n; ++i) v *= a[static_cast<std::size_t>(i)];
        return v;
    }
    int64_t in_volume() const { return volume(in, n); }
    int64_t out_volume() const { return volume(out, n); }
    int64_t taps() const { return volume(kernel, n); }

    /// Calls f(flat, multi_index) for every output position, in row-major order.
    template <class F>
    void positions(F&& f) const {
        axes o{};
        const int64_t total = out_volume();
        for (int64_t flat = 0; flat < total; ++flat) {
            f(flat, o);
            for (int a = n - 1; a >= 0 && ++o[static_cast<std::size_t>(a)] == out[static_cast<std::size_t>(a)]; --a) o[static_cast<std::size_t>(a)] = 0;
        }
    }

    /// Calls f(tap, pos) for each kernel tap of output position `o` that lands inside the input;
    /// tap and pos are flat row-major indices over the kernel and the input's spatial grid.
    template <class F>
    void taps_of(const axes& o, F&& f) const {
        axes base{}, lo{}, hi{}, t{};
        for (std::size_t a = 0; a < static_cast<std::size_t>(n); ++a) {
            base[a] = o[a] * stride[a] - pad[a];
            // Taps with 0 <= base + t * dilation < in.
            lo[a] = base[a] >= 0 ? 0 : (-base[a] + dilation[a] - 1) / dilation[a];
            hi[a] = base[a] >= in[a] ? -1 : std::min(kernel[a] - 1, (in[a] - 1 - base[a]) / dilation[a]);
            if (lo[a] > hi[a]) return;
            t[a] = lo[a];
        }
        for (;;) {
            int64_t tap = 0, pos = 0;
            for (std::size_t a = 0; a < static_cast<std::size_t>(n); ++a) {
                tap = tap * kernel[a] + t[a];
                pos = pos * in[a] + base[a] + t[a] * dilation[a];
            }
            f(tap, pos);
            int a = n - 1;
            for (; a >= 0; --a) {
                const auto i = static_cast<std::size_t>(a);
                if (++t[i] <= hi[i]) break;
                t[i] = lo[i];
            }
            if (a < 0) return;
        }
    }
};

/// Moves the channel axis: (batch, channels, spatial...) to (batch, spatial..., channels), or back.
template <class T>
array<T> move_channels(const array<T>& x, bool to_last) {
    const int64_t batch = x.dims[0], channels = to_last ? x.dims[1] : x.dims.back();
    const int64_t inner = x.size() / std::max<int64_t>(1, batch * channels);
    std::vector<int64_t> dims{batch};
    if (!to_last) dims.push_back(channels);
    for (int d = to_last ? 2 : 1; d < (to_last ? x.rank() : x.rank() - 1); ++d) dims.push_back(x.dims[static_cast<std::size_t>(d)]);
    if (to_last) dims.push_back(channels);
    array<T> out(dims);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t s = 0; s < inner; ++s) {
                const int64_t first = (b * channels + c) * inner + s, last = (b * inner + s) * channels + c;
                out[to_last ? last : first] = x[to_last ? first : last];
            }
    return out;
}

/// A windowed node's input in channels_last, its window and its output dimensions.
template <class T>
struct windowed {
    array<T> x;                     // (batch, spatial..., channels)
    window w;                       // the forward window; a transposed conv scatters through it
    std::vector<int64_t> out_dims;  // (batch, spatial..., channels), from the node's shape
    int64_t batch = 0, channels = 0, out_channels = 0;
    bool channels_first = false;
};

/// The window of node `n` over `input`. `kernel_param` names the window size ("kernel_size",
/// "pool_size"); strides None means strides = window size; no dilation_rate means 1. For a
/// transposed conv the window is the forward conv's, from this node's output to its input.
template <class T>
windowed<T> prepare(const node& n, const array<T>& input, std::string_view kernel_param, bool transposed = false) {
    params p{n};
    windowed<T> g;
    g.channels_first = p.channels_first();
    g.x = g.channels_first ? move_channels(input, true) : input;
    const int N = g.x.rank() - 2;
    if (N < 1 || N > max_axes) throw error(std::string(n.layer->name) + ": input of rank " + std::to_string(input.rank()));
    g.batch = g.x.dims[0];
    g.channels = g.x.dims.back();
    const auto out = layers::spatial::of(n.out, g.channels_first ? "channels_first" : "channels_last");
    g.out_channels = out.channels;
    g.out_dims = {g.batch};
    const auto kernel = p.ints(kernel_param, N);
    const auto stride = p.has("strides") && !p.none("strides") ? p.ints("strides", N) : kernel;
    const auto dilation = p.has("dilation_rate") ? p.ints("dilation_rate", N) : std::vector<int64_t>(static_cast<std::size_t>(N), 1);
    const auto padding = p.has("padding") ? p.str("padding") : std::string_view("valid");
    window& w = g.w;
    w.n = N;
    for (std::size_t a = 0; a < static_cast<std::size_t>(N); ++a) {
        const int64_t in_size = g.x.dims[a + 1], out_size = out.sizes[a];
        g.out_dims.push_back(out_size);
        w.in[a] = transposed ? out_size : in_size;
        w.out[a] = transposed ? in_size : out_size;
        w.kernel[a] = kernel[a];
        w.stride[a] = stride[a];
        w.dilation[a] = dilation[a];
        w.pad[a] = memo::layers::window_padding(padding, w.in[a], (kernel[a] - 1) * dilation[a] + 1, stride[a]).before;
    }
    g.out_dims.push_back(out.channels);
    return g;
}

/// Moves a channels_last result back to the node's layout, then applies its activation.
template <class T>
array<T> finish(array<T> out, const windowed<T>& g, const node& n) {
    if (g.channels_first) out = move_channels(out, false);
    if (params p{n}; p.has("activation")) apply_activation(out, p.str("activation"));
    return out;
}

/// Fails unless weight `i` exists and holds `count` elements.
template <class T>
expected<void> expect_weight(const node& n, std::span<const array<T>> w, std::size_t i, int64_t count, std::string_view what) {
    if (i < w.size() && w[i].size() == count) return {};
    return fail(std::string(n.layer->name) + ": " + std::string(what) + " should hold " + std::to_string(count) + " values");
}

/// The depthwise stage: out[b, o, c * dm + m] = sum over taps of x[b, o * s + t * d - pad, c] *
/// kernel[t, c, m] (+ bias[c * dm + m]), channels_last, no activation.
template <class T>
array<T> depthwise(const windowed<T>& g, const array<T>& kernel, int64_t dm, const array<T>* bias) {
    using A = acc_t<T>;
    const int64_t C = g.channels, CM = C * dm, in_volume = g.w.in_volume(), out_volume = g.w.out_volume();
    std::vector<int64_t> dims = g.out_dims;
    dims.back() = CM;
    array<T> out(dims);
    std::vector<A> acc(static_cast<std::size_t>(CM));
    for (int64_t b = 0; b < g.batch; ++b)
        g.w.positions([&](int64_t o, const axes& at) {
            for (int64_t k = 0; k < CM; ++k) acc[static_cast<std::size_t>(k)] = bias ? static_cast<A>((*bias)[k]) : A(0);
            g.w.taps_of(at, [&](int64_t tap, int64_t pos) {
                const T* xs = &g.x[(b * in_volume + pos) * C];
                const T* ks = &kernel[tap * CM];
                for (int64_t k = 0; k < CM; ++k) acc[static_cast<std::size_t>(k)] += static_cast<A>(xs[k / dm]) * static_cast<A>(ks[k]);
            });
            T* ys = &out[(b * out_volume + o) * CM];
            for (int64_t k = 0; k < CM; ++k) ys[k] = static_cast<T>(acc[static_cast<std::size_t>(k)]);
        });
    return out;
}

}  // namespace detail::conv

/// Conv{1,2,3}D: out[b, o, f] = bias[f] + sum over taps t and channels c of
/// x[b, o * s + t * d - pad, c] * kernel[t, c, f]. "causal" pads (k - 1) * d before.
template <class T>
expected<array<T>> conv_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    using namespace detail::conv;
    params p{n};
    const auto g = prepare(n, in[0], "kernel_size");
    const int64_t C = g.channels, F = g.out_channels, in_volume = g.w.in_volume(), out_volume = g.w.out_volume();
    const bool bias = p.flag("use_bias");
    if (auto ok = expect_weight(n, w, 0, g.w.taps() * C * F, "kernel"); !ok) return ok.error();
    if (bias)
        if (auto ok = expect_weight(n, w, 1, F, "bias"); !ok) return ok.error();
    array<T> out(g.out_dims);
    std::vector<A> acc(static_cast<std::size_t>(F));
    for (int64_t b = 0; b < g.batch; ++b)
        g.w.positions([&](int64_t o, const axes& at) {
            for (int64_t f = 0; f < F; ++f) acc[static_cast<std::size_t>(f)] = bias ? static_cast<A>(w[1][f]) : A(0);
            g.w.taps_of(at, [&](int64_t tap, int64_t pos) {
                const T* xs = &g.x[(b * in_volume + pos) * C];
                const T* ks = &w[0][tap * C * F];
                for (int64_t c = 0; c < C; ++c) {
                    const A v = static_cast<A>(xs[c]);
                    for (int64_t f = 0; f < F; ++f) acc[static_cast<std::size_t>(f)] += v * static_cast<A>(ks[c * F + f]);
                }
            });
            T* ys = &out[(b * out_volume + o) * F];
            for (int64_t f = 0; f < F; ++f) ys[f] = static_cast<T>(acc[static_cast<std::size_t>(f)]);
        });
    return finish(std::move(out), g, n);
}

/// DepthwiseConv{1,2}D: each input channel c convolved with its own dm filters; output channel c * dm + m.
template <class T>
expected<array<T>> depthwise_conv_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using namespace detail::conv;
    params p{n};
    const auto g = prepare(n, in[0], "kernel_size");
    const int64_t dm = p.integer("depth_multiplier");
    const bool bias = p.flag("use_bias");
    if (auto ok = expect_weight(n, w, 0, g.w.taps() * g.channels * dm, "depthwise_kernel"); !ok) return ok.error();
    if (bias)
        if (auto ok = expect_weight(n, w, 1, g.channels * dm, "bias"); !ok) return ok.error();
    return finish(depthwise(g, w[0], dm, bias ? &w[1] : nullptr), g, n);
}

/// SeparableConv{1,2}D: the depthwise stage (stride, padding, dilation; rounded to T, as TensorFlow
/// materialises it), then a pointwise (1x1) conv with the bias and activation.
template <class T>
expected<array<T>> separable_conv_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    using namespace detail::conv;
    params p{n};
    const auto g = prepare(n, in[0], "kernel_size");
    const int64_t dm = p.integer("depth_multiplier"), CM = g.channels * dm, F = g.out_channels;
    const bool bias = p.flag("use_bias");
    if (auto ok = expect_weight(n, w, 0, g.w.taps() * CM, "depthwise_kernel"); !ok) return ok.error();
    if (auto ok = expect_weight(n, w, 1, CM * F, "pointwise_kernel"); !ok) return ok.error();
    if (bias)
        if (auto ok = expect_weight(n, w, 2, F, "bias"); !ok) return ok.error();
    const array<T> mid = depthwise<T>(g, w[0], dm, nullptr);
    array<T> out(g.out_dims);
    const int64_t rows = mid.size() / std::max<int64_t>(1, CM);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t f = 0; f < F; ++f) {
            A s = bias ? static_cast<A>(w[2][f]) : A(0);
            for (int64_t k = 0; k < CM; ++k) s += static_cast<A>(mid[r * CM + k]) * static_cast<A>(w[1][k * F + f]);
            out[r * F + f] = static_cast<T>(s);
        }
    return finish(std::move(out), g, n);
}

/// Conv{2,3}DTranspose: the gradient of the forward conv (same kernel, strides, padding, dilation)
/// from this node's output size to its input size, i.e. out[b, i * s + t * d - pad, f] +=
/// x[b, i, c] * kernel[t, f, c]. The forward conv's padding is computed from the actual sizes, so
/// output_padding just lengthens the output (Keras' deconv_output_length).
template <class T>
expected<array<T>> conv_transpose_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    using namespace detail::conv;
    params p{n};
    const auto g = prepare(n, in[0], "kernel_size", true);
    const int64_t C = g.channels, F = g.out_channels, in_volume = g.w.out_volume(), out_volume = g.w.in_volume();
    const bool bias = p.flag("use_bias");
    if (auto ok = expect_weight(n, w, 0, g.w.taps() * F * C, "kernel"); !ok) return ok.error();
    if (bias)
        if (auto ok = expect_weight(n, w, 1, F, "bias"); !ok) return ok.error();
    std::vector<A> acc(static_cast<std::size_t>(g.batch * out_volume * F));
    for (std::size_t e = 0; e < acc.size(); ++e) acc[e] = bias ? static_cast<A>(w[1][static_cast<int64_t>(e) % F]) : A(0);
    for (int64_t b = 0; b < g.batch; ++b)
        g.w.positions([&](int64_t i, const axes& at) {  // the forward conv's outputs are this node's inputs
            const T* xs = &g.x[(b * in_volume + i) * C];
            g.w.taps_of(at, [&](int64_t tap, int64_t pos) {
                A* ys = &acc[static_cast<std::size_t>((b * out_volume + pos) * F)];
                const T* ks = &w[0][tap * F * C];
                for (int64_t f = 0; f < F; ++f)
                    for (int64_t c = 0; c < C; ++c) ys[f] += static_cast<A>(xs[c]) * static_cast<A>(ks[f * C + c]);
            });
        });
    array<T> out(g.out_dims);
    for (int64_t e = 0; e < out.size(); ++e) out[e] = static_cast<T>(acc[static_cast<std::size_t>(e)]);
    return finish(std::move(out), g, n);
}

/// LocallyConnected{1,2}D (Keras' implementation=1, backend.local_conv): a valid conv with a kernel
/// per output position o, kernel (positions, taps * channels, filters). The feature axis follows
/// the input's layout: tap-major for channels_last, channel-major for channels_first. The bias
/// (spatial..., filters) is reshaped, not transposed, to the output's layout (backend.bias_add),
/// so for channels_first its flat element e lands on the output's flat element e.
template <class T>
expected<array<T>> locally_connected_nd(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    using namespace detail::conv;
    params p{n};
    const auto g = prepare(n, in[0], "kernel_size");
    const int64_t C = g.channels, F = g.out_channels, V = g.w.taps(), P = g.w.out_volume(), in_volume = g.w.in_volume();
    const bool bias = p.flag("use_bias"), first = g.channels_first;
    if (auto ok = expect_weight(n, w, 0, P * V * C * F, "kernel"); !ok) return ok.error();
    if (bias)
        if (auto ok = expect_weight(n, w, 1, P * F, "bias"); !ok) return ok.error();
    array<T> out(g.out_dims);
    std::vector<A> acc(static_cast<std::size_t>(F));
    for (int64_t b = 0; b < g.batch; ++b)
        g.w.positions([&](int64_t o, const axes& at) {
            for (int64_t f = 0; f < F; ++f) acc[static_cast<std::size_t>(f)] = bias ? static_cast<A>(w[1][first ? f * P + o : o * F + f]) : A(0);
            const T* ks = &w[0][o * V * C * F];
            g.w.taps_of(at, [&](int64_t tap, int64_t pos) {
                const T* xs = &g.x[(b * in_volume + pos) * C];
                for (int64_t c = 0; c < C; ++c) {
                    const A v = static_cast<A>(xs[c]);
                    const T* kr = ks + (first ? c * V + tap : tap * C + c) * F;
                    for (int64_t f = 0; f < F; ++f) acc[static_cast<std::size_t>(f)] += v * static_cast<A>(kr[f]);
                }
            });
            T* ys = &out[(b * P + o) * F];
            for (int64_t f = 0; f < F; ++f) ys[f] = static_cast<T>(acc[static_cast<std::size_t>(f)]);
        });
    return finish(std::move(out), g, n);
}

/// The kernels of the conv family and LocallyConnected: one loop per kind, which reads the rank
/// from the node.
template <class T>
struct conv_kernels {
    using ins = std::span<const array<T>>;

    template <int N>
    static expected<array<T>> run(layers::conv<N>, const node& n, ins in, ins w) {
        return conv_nd<T>(n, in, w);
    }
    template <int N>
    static expected<array<T>> run(layers::depthwise_conv<N>, const node& n, ins in, ins w) {
        return depthwise_conv_nd<T>(n, in, w);
    }
    template <int N>
    static expected<array<T>> run(layers::separable_conv<N>, const node& n, ins in, ins w) {
        return separable_conv_nd<T>(n, in, w);
    }
    template <int N>
    static expected<array<T>> run(layers::conv_transpose<N>, const node& n, ins in, ins w) {
        return conv_transpose_nd<T>(n, in, w);
    }
    template <int N>
    static expected<array<T>> run(layers::locally_connected<N>, const node& n, ins in, ins w) {
        return locally_connected_nd<T>(n, in, w);
    }
};

}  // namespace memo::reference
