#pragma once
// memo::torch: a backend that runs every layer of the default registry through libtorch's ATen
// operators on the CPU, node by node, in each node's dtype. Where ATen has a fused operator with
// Keras' semantics (convolutions, pools, LSTM/GRU/RNN, batch and layer norm, upsampling) it is
// used, so that a disagreement with the reference interpreter points at one of ATen's kernels.
//
// Layouts: Keras tensors are channels_last and its weights have Keras' layouts (see weights_of);
// the ops below permute them into ATen's channels-first tensors and (out, in, k...) kernels and
// back. TF's "same" padding may be asymmetric (the extra pad goes after), which ATen's symmetric
// padding arguments cannot say, so such inputs are padded explicitly first.
//
// Needs libtorch (link torch, torch_cpu, c10); neither memo.hpp nor all.hpp includes it.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/kernels.hpp"
#include "../../layers/all.hpp"
#include "../../layers/layouts.hpp"
#include "../../tensors/weights.hpp"
#include "../backend.hpp"
#include "../progress.hpp"

namespace memo::torch {

using ::at::Tensor;
using std::int64_t;
using dims_t = std::vector<int64_t>;

/// What an op sees: the node, its inputs and weights (already in the node's dtype, weights still
/// in Keras' layouts, by Keras name) and the concrete output dims it must produce.
/// Its parameters read as node_params reads them.
struct call : node_params {
    std::span<const Tensor> in;
    std::span<const std::pair<std::string, Tensor>> weights;
    dims_t out;

    /// The weight called `name`; an undefined tensor when the node has none (use_bias=False).
    Tensor weight(std::string_view name) const {
        for (const auto& [k, w] : weights)
            if (k == name) return w;
        return {};
    }
};

/// An op computes one node.
using op = std::function<Tensor(const call&)>;

namespace detail {

inline ::c10::ScalarType scalar_of(dtype t) {
    switch (t) {
        case dtype::float16: return ::at::kHalf;
        case dtype::bfloat16: return ::at::kBFloat16;
        case dtype::float32: return ::at::kFloat;
        case dtype::float64: return ::at::kDouble;
    }
    return ::at::kFloat;
}

/// A memo tensor as an ATen tensor of dtype t (values rounded to t).
inline Tensor to_aten(const tensor& x, dtype t) {
    auto& data = const_cast<std::vector<double>&>(x.data);  // from_blob wants a mutable pointer; the copy below never writes
    return ::at::from_blob(data.data(), x.dims, ::at::kDouble).to(scalar_of(t), /*non_blocking=*/false, /*copy=*/true);
}

inline tensor from_aten(const Tensor& y, dtype t) {
    // One pass: ATen converts and lays out straight into memo's float64 values.
    tensor out(dims_t(y.sizes().begin(), y.sizes().end()), t);
    if (out.size() > 0) ::at::from_blob(out.data.data(), y.sizes(), ::at::TensorOptions().dtype(::at::kDouble)).copy_(y);
    return out;
}

inline ::c10::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? ::c10::optional<Tensor>(t) : ::c10::nullopt; }

/// Keras' channels_last (B, s..., C) as ATen's (B, C, s...), and back (layers/layouts.hpp);
/// channels_first input stays.
inline Tensor to_cf(const Tensor& x, bool first) { return first ? x : x.permute(layers::to_channels_first(x.dim())); }
inline Tensor from_cf(const Tensor& x, bool first) { return first ? x : x.permute(layers::from_channels_first(x.dim())); }

/// Keras' activation `name` (None and linear: identity). Keras' softmax is over the last axis
/// of the tensor it sees; `softmax_dim` says where that axis is in x.
inline Tensor activate(const Tensor& x, std::string_view name, int64_t softmax_dim = -1) {
    if (name == "relu") return ::at::relu(x);
    if (name == "tanh") return ::at::tanh(x);
    if (name == "sigmoid") return ::at::sigmoid(x);
    if (name == "hard_sigmoid") return ::at::clamp(x * 0.2 + 0.5, 0.0, 1.0);  // Keras', not ATen's x/6 + 1/2
    if (name == "elu") return ::at::elu(x);
    if (name == "selu") return ::at::selu(x);
    // ATen's softplus returns x past `threshold` (20 by default: an absolute error of 2e-9, far
    // above float64's precision); TF switches at -log(eps) - 2, about 34 in float64.
    if (name == "softplus") return ::at::softplus(x, 1.0, x.scalar_type() == ::at::kDouble ? 40.0 : 20.0);
    if (name == "softsign") return x / (x.abs() + 1.0);
    if (name == "exponential") return ::at::exp(x);
    if (name == "softmax") return ::at::softmax(x, softmax_dim);
    return x;
}

/// A Keras weight in ATen's layout (layers/layouts.hpp).
inline Tensor relaid(const Tensor& w, const layers::layout_change& c) {
    const Tensor p = w.permute(c.perm);
    return (c.dims.empty() ? p : p.reshape(c.dims)).contiguous();
}
/// Keras' kernel (k..., a, b) as ATen's (b, a, k...): conv (k..., in, out) -> (out, in, k...),
/// conv_transpose (k..., out, in) -> (in, out, k...).
inline Tensor keras_kernel(const Tensor& w) { return relaid(w, layers::channels_first_kernel(w.sizes())); }
/// Keras' depthwise kernel (k..., in, dm) as ATen's grouped (in * dm, 1, k...).
inline Tensor depthwise_kernel(const Tensor& w) { return relaid(w, layers::channels_first_depthwise(w.sizes())); }

/// TF's padding per spatial axis (layers/common.hpp's window_padding).
struct padding {
    dims_t before, after;
    bool symmetric() const { return before == after; }
};
inline padding tf_padding(::at::IntArrayRef in, const dims_t& k, const dims_t& s, const dims_t& d, std::string_view mode) {
    padding p;
    for (std::size_t i = 0; i < k.size(); ++i) {
        const auto [before, after] = memo::layers::window_padding(mode, in[i], (k[i] - 1) * d[i] + 1, s[i]);
        p.before.push_back(before);
        p.after.push_back(after);
    }
    return p;
}
/// Pads the spatial axes (2...) of a channels-first tensor; negative amounts crop.
inline Tensor pad_spatial(const Tensor& x, const dims_t& before, const dims_t& after, double fill) {
    dims_t p;
    for (std::size_t i = before.size(); i-- > 0;) {
        p.push_back(before[i]);
        p.push_back(after[i]);
    }
    return ::at::constant_pad_nd(x, p, fill);
}

inline Tensor conv_nd(const Tensor& x, const Tensor& w, const Tensor& b, const dims_t& s, const dims_t& p, const dims_t& d, int64_t groups) {
    switch (x.dim()) {
        case 3: return ::at::conv1d(x, w, maybe(b), s, p, d, groups);
        case 4: return ::at::conv2d(x, w, maybe(b), s, p, d, groups);
        default: return ::at::conv3d(x, w, maybe(b), s, p, d, groups);
    }
}
inline Tensor conv_same_nd(const Tensor& x, const Tensor& w, const Tensor& b, const dims_t& s, const dims_t& d, int64_t groups) {
    const ::c10::string_view same = "same";
    switch (x.dim()) {
        case 3: return ::at::conv1d(x, w, maybe(b), s, same, d, groups);
        case 4: return ::at::conv2d(x, w, maybe(b), s, same, d, groups);
        default: return ::at::conv3d(x, w, maybe(b), s, same, d, groups);
    }
}

/// A Keras convolution on a channels-first tensor with an ATen kernel (out, in / groups, k...):
/// ATen's own "same" where it applies (stride 1, where it pads as TF does), its symmetric padding
/// argument where TF's padding is symmetric, explicit zero padding otherwise.
inline Tensor keras_conv(const Tensor& x, const Tensor& w, const Tensor& b, const dims_t& s, const dims_t& d, std::string_view mode, int64_t groups = 1) {
    const dims_t k(w.sizes().begin() + 2, w.sizes().end());
    if (mode == "same" && std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; })) return conv_same_nd(x, w, b, s, d, groups);
    const padding p = tf_padding(x.sizes().slice(2), k, s, d, mode);
    if (p.symmetric()) return conv_nd(x, w, b, s, p.before, d, groups);
    return conv_nd(pad_spatial(x, p.before, p.after, 0.0), w, b, s, dims_t(k.size(), 0), d, groups);
}

template <int N>
Tensor conv(const call& c) {
    const bool first = c.channels_first();
    const Tensor y = keras_conv(to_cf(c.in[0], first), keras_kernel(c.weight("kernel")), c.weight("bias"), c.ints("strides", N), c.ints("dilation_rate", N),
                                c.str("padding"));
    return activate(from_cf(y, first), c.str("activation"));
}

/// SeparableConv: a grouped (depthwise) ATen conv with the layer's strides, padding and dilation,
/// then a 1x1 conv with the bias.
template <int N>
Tensor separable_conv(const call& c) {
    const bool first = c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const Tensor depth =
        keras_conv(x, depthwise_kernel(c.weight("depthwise_kernel")), Tensor(), c.ints("strides", N), c.ints("dilation_rate", N), c.str("padding"), x.size(1));
    const Tensor y = conv_nd(depth, keras_kernel(c.weight("pointwise_kernel")), c.weight("bias"), dims_t(N, 1), dims_t(N, 0), dims_t(N, 1), 1);
    return activate(from_cf(y, first), c.str("activation"));
}

template <int N>
Tensor depthwise_conv(const call& c) {
    const bool first = c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const Tensor y = keras_conv(x, depthwise_kernel(c.weight("depthwise_kernel")), c.weight("bias"), c.ints("strides", N), c.ints("dilation_rate", N),
                                c.str("padding"), x.size(1));
    return activate(from_cf(y, first), c.str("activation"));
}

/// Conv{2,3}DTranspose. TF places input i, tap j at output i * s + j * d - pad_before, where
/// pad_before is what a forward "same" conv from the output size to the input size would pad.
/// ATen says the same with padding = pad_before and output_padding = the rest at the end, when
/// that is in ATen's range [0, max(stride, dilation)); otherwise the full transpose is cropped
/// or zero-extended to the output size and the bias added after.
template <int N>
Tensor conv_transpose(const call& c) {
    const bool first = c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const Tensor w = keras_kernel(c.weight("kernel")), bias = c.weight("bias");
    const dims_t s = c.ints("strides", N), d = c.ints("dilation_rate", N), k = c.ints("kernel_size", N);
    const bool same = c.str("padding") == "same";
    dims_t pad(N), extra(N), full(N), out(N);
    bool direct = true;
    for (int i = 0; i < N; ++i) {
        const int64_t in = x.size(2 + i), keff = (k[i] - 1) * d[i] + 1;
        out[i] = c.out[static_cast<std::size_t>(first ? 2 + i : 1 + i)];
        full[i] = (in - 1) * s[i] + keff;
        pad[i] = same ? std::max<int64_t>(0, full[i] - out[i]) / 2 : 0;
        extra[i] = out[i] - (full[i] - 2 * pad[i]);
        if (extra[i] < 0 || extra[i] >= std::max(s[i], d[i])) direct = false;
    }
    auto transpose = [&](const Tensor& b, const dims_t& p, const dims_t& op) {
        return N == 2 ? ::at::conv_transpose2d(x, w, maybe(b), s, p, op, 1, d) : ::at::conv_transpose3d(x, w, maybe(b), s, p, op, 1, d);
    };
    Tensor y;
    if (direct) {
        y = transpose(bias, pad, extra);
    } else {
        dims_t after(N), before(N);
        for (int i = 0; i < N; ++i) before[i] = -pad[i], after[i] = out[i] - full[i] + pad[i];
        y = pad_spatial(transpose(Tensor(), dims_t(N, 0), dims_t(N, 0)), before, after, 0.0);
        if (bias.defined()) {
            dims_t shape{1, bias.size(0)};
            shape.resize(N + 2, 1);
            y = y + bias.reshape(shape);
        }
    }
    return activate(from_cf(y, first), c.str("activation"));
}

inline Tensor max_pool_nd(const Tensor& x, const dims_t& k, const dims_t& s, const dims_t& p) {
    const dims_t one(k.size(), 1);
    switch (x.dim()) {
        case 3: return ::at::max_pool1d(x, k, s, p, one, false);
        case 4: return ::at::max_pool2d(x, k, s, p, one, false);
        default: return ::at::max_pool3d(x, k, s, p, one, false);
    }
}
inline Tensor avg_pool_nd(const Tensor& x, const dims_t& k, const dims_t& s, const dims_t& p, bool count_pad) {
    switch (x.dim()) {
        case 3: return ::at::avg_pool1d(x, k, s, p, false, count_pad);
        case 4: return ::at::avg_pool2d(x, k, s, p, false, count_pad);
        default: return ::at::avg_pool3d(x, k, s, p, false, count_pad);
    }
}

/// Max and average pooling. Keras' "same" average divides by the count of non-padded elements:
/// ATen's count_include_pad=false where the padding is symmetric; otherwise the pooled sum over
/// the zero-padded input divided by the pooled count of real elements.
template <int N, bool Max>
Tensor pool(const call& c) {
    const bool first = c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const dims_t k = c.ints("pool_size", N), s = c.none("strides") ? k : c.ints("strides", N), zero(N, 0);
    const padding p = tf_padding(x.sizes().slice(2), k, s, dims_t(N, 1), c.str("padding"));
    // ATen's avg_pool3d (not 1d or 2d) rejects an input smaller than the window even when the
    // padding covers it: pad explicitly then.
    bool fits = true;
    for (int i = 0; i < N; ++i) fits = fits && x.size(2 + i) >= k[i];
    Tensor y;
    if (p.symmetric() && (Max || N < 3 || fits)) y = Max ? max_pool_nd(x, k, s, p.before) : avg_pool_nd(x, k, s, p.before, false);
    else if (Max) y = max_pool_nd(pad_spatial(x, p.before, p.after, -std::numeric_limits<double>::infinity()), k, s, zero);
    else
        y = avg_pool_nd(pad_spatial(x, p.before, p.after, 0.0), k, s, zero, true) /
            avg_pool_nd(pad_spatial(::at::ones_like(x), p.before, p.after, 0.0), k, s, zero, true);
    return from_cf(y, first);
}

/// Global pooling through ATen's adaptive pools to one cell.
template <int N, bool Max>
Tensor global_pool(const call& c) {
    const bool first = c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const dims_t one(N, 1);
    Tensor y;
    if constexpr (Max) {
        if constexpr (N == 1) y = std::get<0>(::at::adaptive_max_pool1d(x, one));
        else if constexpr (N == 2) y = std::get<0>(::at::adaptive_max_pool2d(x, one));
        else y = std::get<0>(::at::adaptive_max_pool3d(x, one));
    } else {
        if constexpr (N == 1) y = ::at::adaptive_avg_pool1d(x, one);
        else if constexpr (N == 2) y = ::at::adaptive_avg_pool2d(x, one);
        else y = ::at::adaptive_avg_pool3d(x, one);
    }
    return c.flag("keepdims") ? from_cf(y, first) : y.reshape({x.size(0), x.size(1)});
}

/// Keras' GRU gates z, r, h along the last axis, in ATen's order r, z, n.
inline Tensor gru_gates(const Tensor& w) {
    const auto g = w.chunk(3, -1);
    return ::at::cat({g[1], g[0], g[2]}, -1);
}

/// LSTM (4 gates), GRU (3) and SimpleRNN (1). ATen's fused at::lstm, at::gru and
/// at::rnn_tanh/rnn_relu where Keras' activations are theirs (GRU: reset_after only); a loop of
/// Keras' cell in ATen ops otherwise. go_backwards reverses the input, and the output sequence
/// stays in processing order, as Keras leaves it.
inline Tensor recurrent(const call& c, int gates) {
    Tensor x = c.in[0];
    if (c.flag("go_backwards")) x = x.flip({1});
    const int64_t units = c.integer("units"), batch = x.size(0), steps = x.size(1);
    const std::string_view act = c.str("activation"), rec = gates == 1 ? std::string_view() : c.str("recurrent_activation");
    const Tensor W = c.weight("kernel"), U = c.weight("recurrent_kernel"), b = c.weight("bias");
    const bool seq = c.flag("return_sequences"), reset_after = gates == 3 && c.flag("reset_after");
    const Tensor h0 = ::at::zeros({1, batch, units}, x.options());
    auto finish = [&](const Tensor& y) { return seq ? y : y.select(1, steps - 1); };

    if (gates == 4 && act == "tanh" && rec == "sigmoid") {  // Keras' gates i, f, c, o are ATen's i, f, g, o
        std::vector<Tensor> ps{W.t(), U.t()};
        if (b.defined()) ps.insert(ps.end(), {b, ::at::zeros_like(b)});
        return finish(std::get<0>(::at::lstm(x, {h0, h0}, ps, b.defined(), 1, 0.0, false, false, true)));
    }
    if (gates == 3 && act == "tanh" && rec == "sigmoid" && reset_after) {
        std::vector<Tensor> ps{gru_gates(W).t(), gru_gates(U).t()};
        if (b.defined()) ps.insert(ps.end(), {gru_gates(b[0]), gru_gates(b[1])});
        return finish(std::get<0>(::at::gru(x, h0, ps, b.defined(), 1, 0.0, false, false, true)));
    }
    if (gates == 1 && (act == "tanh" || act == "relu")) {
        std::vector<Tensor> ps{W.t(), U.t()};
        if (b.defined()) ps.insert(ps.end(), {b, ::at::zeros_like(b)});
        auto r = act == "tanh" ? ::at::rnn_tanh(x, h0, ps, b.defined(), 1, 0.0, false, false, true)
                               : ::at::rnn_relu(x, h0, ps, b.defined(), 1, 0.0, false, false, true);
        return finish(std::get<0>(r));
    }

    Tensor input_bias, recurrent_bias;
    if (b.defined()) {
        input_bias = reset_after ? b[0] : b;
        if (reset_after) recurrent_bias = b[1];
    }
    Tensor xw = ::at::matmul(x, W);
    if (input_bias.defined()) xw = xw + input_bias;
    Tensor h = ::at::zeros({batch, units}, x.options()), cell = h;
    std::vector<Tensor> hs;
    for (int64_t t = 0; t < steps; ++t) {
        const Tensor xt = xw.select(1, t);
        if (gates == 4) {
            const auto z = (xt + ::at::matmul(h, U)).chunk(4, -1);
            const Tensor i = activate(z[0], rec), f = activate(z[1], rec), o = activate(z[3], rec);
            cell = f * cell + i * activate(z[2], act);
            h = o * activate(cell, act);
        } else if (gates == 3) {
            const auto xz = xt.chunk(3, -1);
            Tensor z, r, hh;
            if (reset_after) {
                Tensor hu = ::at::matmul(h, U);
                if (recurrent_bias.defined()) hu = hu + recurrent_bias;
                const auto hz = hu.chunk(3, -1);
                z = activate(xz[0] + hz[0], rec);
                r = activate(xz[1] + hz[1], rec);
                hh = activate(xz[2] + r * hz[2], act);
            } else {
                const auto u = U.chunk(3, -1);
                z = activate(xz[0] + ::at::matmul(h, u[0]), rec);
                r = activate(xz[1] + ::at::matmul(h, u[1]), rec);
                hh = activate(xz[2] + ::at::matmul(r * h, u[2]), act);
            }
            h = z * h + (1.0 - z) * hh;
        } else {
            h = activate(xt + ::at::matmul(h, U), act);
        }
        if (seq) hs.push_back(h);
    }
    return seq ? ::at::stack(hs, 1) : h;
}

/// Bidirectional(LSTM) with Keras' LSTM defaults: one bidirectional at::lstm. ATen re-aligns the
/// backward sequence with the input, as Keras does; the last outputs are the final states.
inline Tensor bidirectional(const call& c) {
    const Tensor& x = c.in[0];
    const int64_t units = c.integer("units");
    std::vector<Tensor> ps;
    for (const char* dir : {"forward_", "backward_"}) {
        const std::string d = dir;
        const Tensor b = c.weight(d + "bias");
        ps.insert(ps.end(), {c.weight(d + "kernel").t(), c.weight(d + "recurrent_kernel").t(), b, ::at::zeros_like(b)});
    }
    const Tensor h0 = ::at::zeros({2, x.size(0), units}, x.options());
    const auto [y, hn, cn] = ::at::lstm(x, {h0, h0}, ps, true, 1, 0.0, false, true, true);
    Tensor f, b;
    if (c.flag("return_sequences")) f = y.narrow(-1, 0, units), b = y.narrow(-1, units, units);
    else f = hn[0], b = hn[1];
    const std::string_view mode = c.none("merge_mode") ? std::string_view() : c.str("merge_mode");
    if (mode == "concat") return ::at::cat({f, b}, -1);
    if (mode == "sum") return f + b;
    if (mode == "mul") return f * b;
    if (mode == "ave") return (f + b) / 2.0;
    return f;  // merge_mode=None: the node's one output is the forward direction
}

/// ConvLSTM: Keras' cell over time with ATen convolutions; the input conv has the layer's
/// strides, padding and dilation, the recurrent conv "same" with stride 1 and no dilation.
template <int N>
Tensor conv_lstm(const call& c) {
    const bool first = c.channels_first();
    Tensor x = c.in[0];
    if (c.flag("go_backwards")) x = x.flip({1});
    const dims_t s = c.ints("strides", N), d = c.ints("dilation_rate", N), one(N, 1);
    const std::string_view act = c.str("activation"), rec = c.str("recurrent_activation"), mode = c.str("padding");
    const Tensor W = keras_kernel(c.weight("kernel")), U = keras_kernel(c.weight("recurrent_kernel")), b = c.weight("bias");
    const bool seq = c.flag("return_sequences");
    const int64_t softmax_dim = first ? -1 : 1;  // Keras' last axis, seen channels-first
    Tensor h, cell;
    std::vector<Tensor> hs;
    for (int64_t t = 0; t < x.size(1); ++t) {
        const Tensor z = keras_conv(to_cf(x.select(1, t), first), W, b, s, d, mode);
        if (!h.defined()) h = cell = ::at::zeros_like(z.narrow(1, 0, z.size(1) / 4));
        const auto g = (z + keras_conv(h, U, Tensor(), one, one, "same")).chunk(4, 1);
        const Tensor i = activate(g[0], rec, softmax_dim), f = activate(g[1], rec, softmax_dim), o = activate(g[3], rec, softmax_dim);
        cell = f * cell + i * activate(g[2], act, softmax_dim);
        h = o * activate(cell, act, softmax_dim);
        if (seq) hs.push_back(from_cf(h, first));
    }
    return seq ? ::at::stack(hs, 1) : from_cf(h, first);
}

inline Tensor batch_norm(const call& c) {
    const int64_t axis = layers::normal_axis(c.integer("axis"), static_cast<int>(c.in[0].dim()));
    const Tensor y = ::at::batch_norm(c.in[0].movedim(axis, 1), maybe(c.weight("gamma")), maybe(c.weight("beta")), maybe(c.weight("moving_mean")),
                                      maybe(c.weight("moving_variance")), false, 0.0, c.real("epsilon"), false);
    return y.movedim(1, axis);
}

inline Tensor layer_norm(const call& c) {
    const int64_t axis = layers::normal_axis(c.integer("axis"), static_cast<int>(c.in[0].dim()));
    const Tensor x = c.in[0].movedim(axis, -1);
    return ::at::layer_norm(x, {x.size(-1)}, maybe(c.weight("gamma")), maybe(c.weight("beta")), c.real("epsilon"), false).movedim(-1, axis);
}

/// Keras 3's ReLU(max_value, negative_slope, threshold): where(x > threshold, x, 0) (NaN and -inf
/// give 0), clipped to [0, max_value], minus negative_slope * relu(threshold - x).
inline Tensor relu(const call& c) {
    const Tensor& x = c.in[0];
    const double slope = c.real("negative_slope"), threshold = c.real("threshold");
    const bool clip = !c.none("max_value");
    if (!clip && threshold == 0.0) return slope == 0.0 ? ::at::relu(x) : ::at::leaky_relu(x, slope);
    Tensor y = threshold == 0.0 ? ::at::relu(x) : ::at::where(x > threshold, x, ::at::zeros({}, x.options()));
    if (clip) y = ::at::clamp(y, 0.0, c.real("max_value"));
    if (slope != 0.0) y = y - slope * ::at::relu(threshold - x);
    return y;
}

/// PReLU: relu(x) - alpha * relu(-x), alpha over the sample axes (shared axes of size 1). ATen's
/// at::prelu takes only one alpha per channel, so this is the formula.
inline Tensor prelu(const call& c) {
    const Tensor& x = c.in[0];
    return ::at::relu(x) - c.weight("alpha").unsqueeze(0) * ::at::relu(-x);
}

/// Keras' Flatten: a channels_first input is moved to channels_last before flattening.
inline Tensor flatten(const call& c) {
    const Tensor& x = c.in[0];
    const Tensor y = c.channels_first() && x.dim() > 2 ? from_cf(x, false) : x;
    return y.reshape({x.size(0), -1});
}

/// Cropping and ZeroPadding: (before, after) per spatial axis, through constant_pad_nd
/// (negative amounts crop).
template <int N>
Tensor border(const call& c, int sign) {
    const bool first = N > 1 && c.channels_first();
    const dims_t amounts = c.ints(sign > 0 ? "padding" : "cropping", 2 * N);
    dims_t before(N), after(N);
    for (int i = 0; i < N; ++i) before[i] = sign * amounts[2 * i], after[i] = sign * amounts[2 * i + 1];
    return from_cf(pad_spatial(to_cf(c.in[0], first), before, after, 0.0), first);
}

/// UpSampling: ATen's half-pixel nearest (upsample_nearest_exact, which for an integer factor
/// repeats each element, as Keras does) and UpSampling2D's bilinear, TF's half-pixel centres.
template <int N>
Tensor upsampling(const call& c) {
    const bool first = N > 1 && c.channels_first();
    const Tensor x = to_cf(c.in[0], first);
    const dims_t size = c.ints("size", N);
    dims_t out(N);
    for (int i = 0; i < N; ++i) out[i] = x.size(2 + i) * size[i];
    Tensor y;
    if constexpr (N == 1) y = ::at::_upsample_nearest_exact1d(x, ::at::IntArrayRef(out));
    else if constexpr (N == 2)
        y = c.str("interpolation") == "bilinear" ? ::at::upsample_bilinear2d(x, ::at::IntArrayRef(out), false)
                                                 : ::at::_upsample_nearest_exact2d(x, ::at::IntArrayRef(out));
    else y = ::at::_upsample_nearest_exact3d(x, ::at::IntArrayRef(out));
    return from_cf(y, first);
}

/// LocallyConnected: patches by unfold, in Keras' flatten order ((k..., C) channels_last,
/// (C, k...) channels_first), times each position's kernel by bmm. Keras adds the bias
/// (out..., F) with backend.bias_add, which for channels_first reshapes it (no transpose) to
/// (F, out...).
template <int N>
Tensor local(const call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N);
    Tensor p = c.in[0];
    const int64_t batch = p.size(0), filters = c.integer("filters"), axis0 = first ? 2 : 1;
    for (int i = 0; i < N; ++i) p = p.unfold(axis0 + i, k[i], s[i]);  // (B, [C,] out..., [C,] k...)
    dims_t perm{0}, out;
    for (int i = 0; i < N; ++i) perm.push_back(axis0 + i), out.push_back(p.size(axis0 + i));
    const int64_t channel = first ? 1 : N + 1;
    if (first) perm.push_back(channel);
    for (int i = 0; i < N; ++i) perm.push_back(N + 2 + i);
    if (!first) perm.push_back(channel);
    int64_t positions = 1;
    for (auto o : out) positions *= o;
    p = p.permute(perm).reshape({batch, positions, -1});
    Tensor y = ::at::bmm(p.transpose(0, 1), c.weight("kernel")).transpose(0, 1);  // (B, P, F)
    dims_t shape{batch};
    shape.insert(shape.end(), out.begin(), out.end());
    shape.push_back(filters);
    y = y.reshape(shape);
    if (first) y = to_cf(y, false);
    if (const Tensor b = c.weight("bias"); b.defined()) {
        dims_t bs{1};
        if (first) bs.push_back(filters);
        bs.insert(bs.end(), out.begin(), out.end());
        if (!first) bs.push_back(filters);
        y = y + b.reshape(bs);
    }
    return activate(y, c.str("activation"));
}

/// Keras' Dot over the last axes of two rank-2 or rank-3 tensors, with optional L2 normalisation
/// (tf.math.l2_normalize: x * rsqrt(max(sum(x^2), 1e-12))).
inline Tensor dot(const call& c) {
    Tensor a = c.in[0], b = c.in[1];
    if (c.flag("normalize")) {
        auto unit = [](const Tensor& x) { return x * ::at::rsqrt(::at::clamp_min((x * x).sum(-1, true), 1e-12)); };
        a = unit(a), b = unit(b);
    }
    if (a.dim() == 2) return ::at::bmm(a.unsqueeze(1), b.unsqueeze(2)).reshape({a.size(0), 1});
    return ::at::bmm(a, b.transpose(1, 2));
}

/// Pads (+1) or crops (-1) every non-batch axis by the adapters' flat (before, after) list.
inline Tensor adapter_border(const call& c, int sign) {
    const auto& amounts = std::get<ints>(c.param(sign > 0 ? "padding" : "cropping"));
    dims_t p;
    for (int d = static_cast<int>(c.in[0].dim()) - 1; d >= 1; --d) {
        p.push_back(sign * amounts[2 * (d - 1)]);
        p.push_back(sign * amounts[2 * (d - 1) + 1]);
    }
    return ::at::constant_pad_nd(c.in[0], p, sign > 0 ? c.real("constant_values") : 0.0);
}

template <class F>
Tensor fold(const call& c, F f) {
    Tensor y = c.in[0];
    for (std::size_t i = 1; i < c.in.size(); ++i) y = f(y, c.in[i]);
    return y;
}

/// libtorch's kernel for each layer type of the default list (core/kernels.hpp finds them by type).
struct kernels {
    // Core and adapters.
    static Tensor run(layers::dense, const call& c) {
        return activate(::at::linear(c.in[0], c.weight("kernel").t(), maybe(c.weight("bias"))), c.str("activation"));
    }
    static Tensor run(layers::activation, const call& c) { return activate(c.in[0], c.str("activation")); }
    static Tensor run(layers::custom_scale, const call& c) { return ::at::add(c.in[0], c.in[1], c.real("scale")); }
    static Tensor run(layers::reshape, const call& c) { return c.in[0].reshape(c.out); }
    static Tensor run(layers::expand_dims, const call& c) { return c.in[0].unsqueeze(c.integer("axis")); }
    static Tensor run(layers::drop_dim, const call& c) { return c.in[0].select(c.integer("axis"), 0); }
    static Tensor run(layers::pad, const call& c) { return adapter_border(c, +1); }
    static Tensor run(layers::crop, const call& c) { return adapter_border(c, -1); }
    static Tensor run(layers::cast, const call& c) { return c.in[0]; }  // the input arrives in the target dtype
    static Tensor run(layers::inject, const call& c) {
        const auto v = c.str("value");
        const double fill = v == "nan" ? std::numeric_limits<double>::quiet_NaN() : (v == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
        Tensor y = c.in[0].clone(::at::MemoryFormat::Contiguous);
        Tensor flat = y.view({-1});
        flat.slice(0, 0, flat.numel(), std::max<int64_t>(1, c.integer("stride"))).fill_(fill);
        return y;
    }
    // Element-wise: ScaleShift's product is rounded to the dtype before the shift is added.
    static Tensor run(layers::absolute, const call& c) { return ::at::abs(c.in[0]); }
    static Tensor run(layers::square, const call& c) { return ::at::mul(c.in[0], c.in[0]); }
    static Tensor run(layers::stop_gradient, const call& c) { return c.in[0].detach().clone(); }
    static Tensor run(layers::scale_shift, const call& c) { return ::at::add(::at::mul(c.in[0], c.real("scale")), c.real("shift")); }
    // Regularisation: the identity at inference.
    template <class Tag>
    static Tensor run(layers::regularization<Tag>, const call& c) {
        return c.in[0];
    }
    // Convolutions and pools.
    template <int N>
    static Tensor run(layers::conv<N>, const call& c) {
        return conv<N>(c);
    }
    template <int N>
    static Tensor run(layers::separable_conv<N>, const call& c) {
        return separable_conv<N>(c);
    }
    template <int N>
    static Tensor run(layers::depthwise_conv<N>, const call& c) {
        return depthwise_conv<N>(c);
    }
    template <int N>
    static Tensor run(layers::conv_transpose<N>, const call& c) {
        return conv_transpose<N>(c);
    }
    template <int N, layers::pool_kind K>
    static Tensor run(layers::pooling<N, K>, const call& c) {
        return pool<N, K == layers::pool_kind::max>(c);
    }
    template <int N, layers::pool_kind K>
    static Tensor run(layers::global_pooling<N, K>, const call& c) {
        return global_pool<N, K == layers::pool_kind::max>(c);
    }
    // Recurrent.
    template <layers::cell C>
    static Tensor run(layers::recurrent<C>, const call& c) {
        return recurrent(c, layers::recurrent<C>::gates);
    }
    static Tensor run(layers::bidirectional, const call& c) { return bidirectional(c); }
    static Tensor run(layers::time_distributed, const call& c) { return ::at::relu(c.in[0]); }
    template <int N>
    static Tensor run(layers::conv_lstm<N>, const call& c) {
        return conv_lstm<N>(c);
    }
    // Normalisation.
    static Tensor run(layers::batch_normalization, const call& c) { return batch_norm(c); }
    static Tensor run(layers::layer_normalization, const call& c) { return layer_norm(c); }
    // Activations.
    static Tensor run(layers::relu, const call& c) { return relu(c); }
    static Tensor run(layers::softmax, const call& c) {
        return ::at::softmax(c.in[0], layers::normal_axis(c.integer("axis"), static_cast<int>(c.in[0].dim())));
    }
    static Tensor run(layers::leaky_relu, const call& c) { return ::at::leaky_relu(c.in[0], c.real("alpha")); }
    static Tensor run(layers::prelu, const call& c) { return prelu(c); }
    static Tensor run(layers::elu, const call& c) { return ::at::elu(c.in[0], c.real("alpha")); }
    // Keras: x * cast(x > theta), so -inf gives NaN (-inf * 0), where at::threshold gives 0.
    static Tensor run(layers::thresholded_relu, const call& c) { return c.in[0] * ::at::gt(c.in[0], c.real("theta")).to(c.in[0].scalar_type()); }
    // Reshaping.
    static Tensor run(layers::flatten, const call& c) { return flatten(c); }
    static Tensor run(layers::repeat_vector, const call& c) { return c.in[0].unsqueeze(1).repeat({1, c.integer("n"), 1}); }
    static Tensor run(layers::permute, const call& c) {
        const auto& d = std::get<ints>(c.param("dims"));
        return c.in[0].permute({0, d[0], d[1]});
    }
    template <int N, int Sign, const std::string_view* Names, const char* Param>
    static Tensor run(layers::border<N, Sign, Names, Param>, const call& c) {
        return border<N>(c, Sign);
    }
    template <int N>
    static Tensor run(layers::upsampling<N>, const call& c) {
        return upsampling<N>(c);
    }
    // Merges (Keras folds left to right).
    static Tensor run(layers::concatenate, const call& c) {
        return ::at::cat(std::vector<Tensor>(c.in.begin(), c.in.end()), layers::normal_axis(c.integer("axis"), static_cast<int>(c.in[0].dim())));
    }
    static Tensor run(layers::add, const call& c) {
        return fold(c, [](const Tensor& a, const Tensor& b) { return a + b; });
    }
    static Tensor run(layers::subtract, const call& c) { return c.in[0] - c.in[1]; }
    static Tensor run(layers::multiply, const call& c) {
        return fold(c, [](const Tensor& a, const Tensor& b) { return a * b; });
    }
    static Tensor run(layers::average, const call& c) {
        return fold(c, [](const Tensor& a, const Tensor& b) { return a + b; }) / static_cast<double>(c.in.size());
    }
    static Tensor run(layers::maximum, const call& c) {
        return fold(c, [](const Tensor& a, const Tensor& b) { return ::at::maximum(a, b); });
    }
    static Tensor run(layers::minimum, const call& c) {
        return fold(c, [](const Tensor& a, const Tensor& b) { return ::at::minimum(a, b); });
    }
    static Tensor run(layers::dot, const call& c) { return dot(c); }
    // Locally connected.
    template <int N>
    static Tensor run(layers::locally_connected<N>, const call& c) {
        return local<N>(c);
    }
};

/// The ops of the default registry, by layer class name.
inline std::map<std::string, op, std::less<>> builtin_ops() { return kernel_table<kernels, op>(default_layers{}); }

/// A run failure from an exception's text: ATen's "not implemented for 'Half'" (or BFloat16)
/// means the CPU kernel is missing for that dtype, which is unsupported, not an error.
inline run_result failed(const std::string& where, std::string_view what) {
    const std::string_view line = what.substr(0, what.find('\n'));
    const bool missing =
        line.find("not implemented for 'Half'") != std::string_view::npos || line.find("not implemented for 'BFloat16'") != std::string_view::npos;
    return run_result::failed(missing ? run_status::unsupported : run_status::error, where + std::string(line));
}

}  // namespace detail

/// The libtorch backend. Single-threaded (at::set_num_threads(1)) so timings and results do not
/// depend on the machine's load; runs under c10::InferenceMode.
class backend {
public:
    backend() { ::at::set_num_threads(1); }

    std::string_view name() const noexcept { return "torch"; }

    /// Adds or replaces the op of a layer class (users' own layers).
    void set(std::string name, op f) { ops_[std::move(name)] = std::move(f); }

    /// The classes of `reg` (those with inputs) it has no op for, in the registry's order.
    std::vector<std::string_view> lacks(const registry& reg) const {
        std::vector<std::string_view> out;
        for (const auto& L : reg)
            if (L.arity.max != 0 && ops_.find(L.name) == ops_.end()) out.push_back(L.name);
        return out;
    }

    expected<void> supports(const model& m) const {
        for (const auto& n : m.nodes)
            if (n.layer->arity.max != 0 && ops_.find(n.layer->name) == ops_.end()) return fail("torch has no op for " + std::string(n.layer->name));
        return {};
    }

    run_result run(const model& m, std::span<const tensor> inputs, const run_options& o = {}) {
        const auto start = std::chrono::steady_clock::now();
        run_result r;
        try {
            const ::c10::InferenceMode guard;
            r = evaluate(m, inputs, o);
        } catch (const ::c10::Error& e) {
            r = detail::failed("", e.what_without_backtrace());
        } catch (const std::exception& e) {
            r = detail::failed("", e.what());
        } catch (...) {
            r = run_result::failed(run_status::error, "unknown exception");
        }
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }

private:
    static run_result at_node(run_result r, std::size_t i) {
        r.node = static_cast<int>(i);
        return r;
    }

    run_result evaluate(const model& m, std::span<const tensor> inputs, const run_options& o) {
        const bool forced = !o.forced.empty();
        if (forced && o.forced.size() != m.size()) return run_result::failed(run_status::error, "forced run needs one tensor per node");
        std::vector<Tensor> values(m.size());
        std::vector<dtype> types(m.size());
        std::size_t next_input = 0;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const node& n = m.nodes[i];
            const dtype t = o.precision.value_or(n.type);
            types[i] = t;
            if (n.layer->arity.max == 0) {
                if (next_input >= inputs.size()) return run_result::failed(run_status::error, "missing input for node " + std::to_string(i));
                values[i] = detail::to_aten(inputs[next_input++], t);
                continue;
            }
            const std::string where = "node " + std::to_string(i) + " (" + std::string(n.layer->name) + "): ";
            const auto found = ops_.find(n.layer->name);
            if (found == ops_.end()) return at_node(run_result::failed(run_status::unsupported, where + "torch has no op for it"), i);
            try {
                std::vector<Tensor> in;
                for (int src : n.inputs) {
                    const auto s = static_cast<std::size_t>(src);
                    in.push_back(forced ? detail::to_aten(o.forced[s], t) : values[s].to(detail::scalar_of(t)));
                }
                std::vector<std::pair<std::string, Tensor>> ws;
                for (auto& w : weights_of(m, static_cast<int>(i), &drawn_weights())) ws.emplace_back(std::move(w.name), detail::to_aten(w.value, t));
                const call c{{n}, in, ws, concrete(n.out, in.empty() ? 1 : in[0].size(0))};
                progress::at_node(static_cast<int>(i));
                Tensor y = found->second(c);
                if (!y.sizes().equals(c.out))
                    return at_node(
                        run_result::failed(run_status::error, where + "output dims " + tensor(dims_t(y.sizes().begin(), y.sizes().end())).dims_str() +
                                                                  ", the model says " + tensor(c.out).dims_str()),
                        i);
                values[i] = y.to(detail::scalar_of(t)).contiguous();
            } catch (const ::c10::Error& e) {
                return at_node(detail::failed(where, e.what_without_backtrace()), i);
            } catch (const std::exception& e) {
                return at_node(detail::failed(where, e.what()), i);
            }
        }
        progress::at_node(-1);
        run_result r;
        auto out = [&](std::size_t i) { return detail::from_aten(values[i], types[i]); };
        if (forced || o.every_node)
            for (std::size_t i = 0; i < m.size(); ++i) r.outputs.push_back(out(i));
        else
            for (int k : m.outputs) r.outputs.push_back(out(static_cast<std::size_t>(k)));
        return r;
    }

    std::map<std::string, op, std::less<>> ops_ = detail::builtin_ops();
};

static_assert(memo::backend<backend>);

}  // namespace memo::torch
