#pragma once
// A memo model lowered to the CUDA backend's steps (steps.hpp), on the host. Keras' tensors are
// channels_last and its kernels have Keras' layouts; cuDNN is given channels-first tensors and
// (out, in, k...) kernels, so a spatial layer is a layout change, cuDNN's operation and the way
// back. The layouts (layers/layouts.hpp) and TF's padding rule (layers/common.hpp's
// window_padding) are memo's shared descriptions, the ones libtorch's and ONNX's backends use.
//
// A layer the backend has no lowering for, or a case of one it does not cover (a recurrent cell
// whose activations cuDNN lacks, say), is declined with the reason: the model is then
// `unsupported`, never a verdict.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/kernels.hpp"
#include "../../core/model.hpp"
#include "../../engine/error.hpp"
#include "../../layers/all.hpp"
#include "../../layers/layouts.hpp"
#include "../../tensors/tensor.hpp"
#include "../../tensors/weights.hpp"
#include "steps.hpp"

namespace memo::cuda {

using dims_t = std::vector<index_t>;

namespace detail {

inline kernels::shape shape_of(const dims_t& d) {
    kernels::shape s;
    s.rank = static_cast<int>(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) s.dims[i] = d[i];
    return s;
}

/// The identity map from `in` to `out` of the same rank, to be edited.
inline kernels::gather_map identity_map(const dims_t& in, const dims_t& out) {
    kernels::gather_map g;
    g.in = shape_of(in);
    g.out = shape_of(out);
    for (int j = 0; j < g.out.rank; ++j) g.from[j] = j < g.in.rank ? j : -1, g.repeat[j] = 1;
    return g;
}

/// The map that lays a tensor of dims `in` out by a permutation: output axis j is axis perm[j].
inline kernels::gather_map permutation_map(const dims_t& in, const std::vector<std::int64_t>& perm) {
    dims_t out;
    for (auto a : perm) out.push_back(in[static_cast<std::size_t>(a)]);
    auto g = identity_map(in, out);
    for (std::size_t j = 0; j < perm.size(); ++j) g.from[j] = static_cast<int>(perm[j]);
    return g;
}
inline dims_t dims_of(const kernels::shape& s) { return dims_t(s.dims, s.dims + s.rank); }

/// Values laid out by a permutation (a layout_change's), on the host: a weight in cuDNN's layout.
inline std::vector<double> permuted(const tensor& w, const std::vector<std::int64_t>& perm) {
    const auto g = permutation_map(w.dims, perm);
    std::vector<double> r(static_cast<std::size_t>(g.out.count()));
    kernels::gather<double> f{w.data.data(), r.data(), g, 0.0};
    for (index_t i = 0; i < static_cast<index_t>(r.size()); ++i) f(i);
    return r;
}

inline std::optional<kernels::unary_fn> activation_fn(std::string_view name) {
    using kernels::unary_fn;
    static const std::map<std::string_view, unary_fn> fns{{"linear", unary_fn::identity},
                                                          {"relu", unary_fn::relu},
                                                          {"tanh", unary_fn::tanh},
                                                          {"sigmoid", unary_fn::sigmoid},
                                                          {"hard_sigmoid", unary_fn::hard_sigmoid},
                                                          {"elu", unary_fn::elu},
                                                          {"selu", unary_fn::selu},
                                                          {"softplus", unary_fn::softplus},
                                                          {"softsign", unary_fn::softsign},
                                                          {"exponential", unary_fn::exponential}};
    if (name.empty()) return unary_fn::identity;
    const auto f = fns.find(name);
    if (f == fns.end()) return std::nullopt;
    return f->second;
}

}  // namespace detail

/// A slot while planning: its number and dims.
struct tval {
    int slot = -1;
    dims_t dims;
};

/// What a lowering sees: the node (its parameters read as node_params reads them), its inputs,
/// its weights and the plan it appends to.
class lowering_context : public node_params {
public:
    lowering_context(plan& p, std::vector<dims_t>& slot_dims, const node& n, std::vector<tval> in, std::vector<memo::weight> weights, dims_t out)
        : node_params{n}, p_(p), slot_dims_(slot_dims), in_(std::move(in)), weights_(std::move(weights)), out_(std::move(out)) {}

    const tval& in(std::size_t k) const { return in_[k]; }
    std::size_t inputs() const { return in_.size(); }
    const dims_t& out() const { return out_; }

    /// The weight called `name`, or null (use_bias=False).
    const tensor* weight(std::string_view name) const {
        for (const auto& w : weights_)
            if (w.name == name) return &w.value;
        return nullptr;
    }

    tval add(dims_t dims) {
        p_.slots.push_back(slot{tensor::count(dims), {}, false});
        slot_dims_.push_back(dims);
        return {static_cast<int>(p_.slots.size()) - 1, std::move(dims)};
    }
    tval constant(dims_t dims, std::vector<double> values) {
        auto t = add(std::move(dims));
        p_.slots.back().constant = std::move(values);
        p_.slots.back().is_constant = true;
        return t;
    }
    /// A weight as a constant slot, as it is (-1 when absent).
    int constant_weight(std::string_view name) {
        const tensor* w = weight(name);
        return w ? constant(w->dims, w->data).slot : -1;
    }
    /// A weight as a constant slot in a layout (layers/layouts.hpp).
    tval constant_weight(const tensor& w, const layers::layout_change& c) {
        return constant(c.dims.empty() ? detail::dims_of(detail::permutation_map(w.dims, c.perm).out) : c.dims, detail::permuted(w, c.perm));
    }
    void push(step s) { p_.steps.push_back(std::move(s)); }

    /// x with its axes permuted: output axis j is x's axis perm[j].
    tval permute(const tval& x, const std::vector<std::int64_t>& perm) {
        const auto g = detail::permutation_map(x.dims, perm);
        const auto y = add(detail::dims_of(g.out));
        push(gather_step{x.slot, y.slot, g, 0.0});
        return y;
    }
    tval to_cf(const tval& x, bool first) { return first ? x : permute(x, layers::to_channels_first(static_cast<std::int64_t>(x.dims.size()))); }
    tval from_cf(const tval& x, bool first) { return first ? x : permute(x, layers::from_channels_first(static_cast<std::int64_t>(x.dims.size()))); }

    /// x padded (or cropped, for negative amounts) on the axes from `first_axis` on, with `fill`.
    tval border(const tval& x, int first_axis, const dims_t& before, const dims_t& after, double fill) {
        dims_t out = x.dims;
        for (std::size_t i = 0; i < before.size(); ++i) out[static_cast<std::size_t>(first_axis) + i] += before[i] + after[i];
        auto g = detail::identity_map(x.dims, out);
        for (std::size_t i = 0; i < before.size(); ++i) g.offset[static_cast<std::size_t>(first_axis) + i] = before[i];
        const auto y = add(out);
        push(gather_step{x.slot, y.slot, g, fill});
        return y;
    }

    /// Keras' activation `name` on x, after adding `bias` along an axis (bias_inner elements
    /// apart); softmax over the last axis is applied by `finish` once x is back in Keras' layout.
    expected<tval> activate(const tval& x, std::string_view name, int bias = -1, index_t bias_len = 1, index_t bias_inner = 1) {
        const bool softmax = name == "softmax";
        const auto f = softmax ? std::optional(kernels::unary_fn::identity) : detail::activation_fn(name);
        if (!f) return fail("no kernel for the activation " + std::string(name));
        if (*f == kernels::unary_fn::identity && bias < 0) return x;
        const auto y = add(x.dims);
        push(unary_step{x.slot, y.slot, *f, *f == kernels::unary_fn::elu ? 1.0 : 0.0, 0, 0, bias, bias_len, bias_inner});
        return y;
    }
    /// The softmax of an activation, over the last axis.
    tval finish(const tval& x, std::string_view activation) {
        if (activation != "softmax") return x;
        return softmax(x, static_cast<int>(x.dims.size()) - 1);
    }
    tval softmax(const tval& x, int axis) {
        const auto y = add(x.dims);
        const index_t len = x.dims[static_cast<std::size_t>(axis)], total = tensor::count(x.dims);
        index_t inner = 1;
        for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
        push(softmax_step{x.slot, y.slot, {len, inner}, len ? total / len : 0});
        return y;
    }

private:
    plan& p_;
    std::vector<dims_t>& slot_dims_;
    std::vector<tval> in_;
    std::vector<memo::weight> weights_;
    dims_t out_;
};

/// A lowering appends a node's steps and returns the slot of its output (dims: the node's).
using lowering = std::function<expected<tval>(lowering_context&)>;

namespace detail {

inline index_t product(const dims_t& d, std::size_t from = 0, std::size_t to = std::string::npos) {
    index_t r = 1;
    for (std::size_t i = from; i < std::min(to, d.size()); ++i) r *= d[i];
    return r;
}

/// The output as the node's dims (a reshape keeps the slot).
inline tval as_out(tval x, const lowering_context& c) {
    x.dims = c.out();
    return x;
}

inline expected<tval> unary_of(lowering_context& c, kernels::unary_fn f, double p0 = 0, double p1 = 0, double p2 = 0) {
    const auto y = c.add(c.out());
    c.push(unary_step{c.in(0).slot, y.slot, f, p0, p1, p2});
    return y;
}

/// A forward convolution's window over the spatial axes of a channels-first tensor of dims `x`
/// (kernel sizes k, strides s, dilations d, Keras' padding `mode`), with TF's padding. Symmetric
/// padding stays in the window (cuDNN pads); uneven padding is `before` and `after`, for a border
/// step first, and the window then reads the padded input.
struct conv_window {
    kernels::window w;
    dims_t before, after;
    bool symmetric = true;
};
inline conv_window forward_window(const dims_t& x, const dims_t& k, const dims_t& s, const dims_t& d, std::string_view mode) {
    conv_window r;
    r.w.n = static_cast<int>(k.size());
    for (std::size_t u = 0; u < k.size(); ++u) {
        const auto p = layers::window_padding(mode, x[2 + u], (k[u] - 1) * d[u] + 1, s[u]);
        r.before.push_back(p.before), r.after.push_back(p.after);
        r.symmetric = r.symmetric && p.before == p.after;
    }
    for (std::size_t u = 0; u < k.size(); ++u) {
        kernels::window& w = r.w;
        w.k[u] = k[u];
        w.stride[u] = s[u];
        w.dilation[u] = d[u];
        w.in[u] = x[2 + u] + (r.symmetric ? 0 : r.before[u] + r.after[u]);
        w.pad[u] = r.symmetric ? r.before[u] : 0;
        w.out[u] = (w.in[u] + 2 * w.pad[u] - ((k[u] - 1) * d[u] + 1)) / s[u] + 1;
    }
    return r;
}

/// Convolutions: plain (groups 1), depthwise (groups = channels) and separable (depthwise then
/// a 1x1 convolution), N spatial axes.
inline expected<tval> conv(lowering_context& c, int N, std::string_view kind) {
    const bool first = c.channels_first();
    tval x = c.to_cf(c.in(0), first);
    const index_t batch = x.dims[0], channels = x.dims[1];
    const dims_t s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    const auto mode = c.str("padding");
    const bool depthwise = kind != "conv";
    const tensor* kw = c.weight(depthwise ? "depthwise_kernel" : "kernel");
    if (!kw) return fail("no kernel weight");
    const tval kernel = c.constant_weight(*kw, depthwise ? layers::channels_first_depthwise(kw->dims) : layers::channels_first_kernel(kw->dims));
    const index_t filters = kernel.dims[0];
    const auto cw = forward_window(x.dims, dims_t(kernel.dims.begin() + 2, kernel.dims.end()), s, d, mode);
    const kernels::window& w = cw.w;
    if (!cw.symmetric) x = c.border(x, 2, cw.before, cw.after, 0.0);
    const dims_t out_cf = [&] {
        dims_t o = c.out();
        if (!first) o = {o[0], o.back()}, o.insert(o.end(), c.out().begin() + 1, c.out().end() - 1);
        return o;
    }();
    for (int i = 0; i < N; ++i)
        if (w.out[i] != out_cf[2 + static_cast<std::size_t>(i)])
            return fail("the convolution's output length " + std::to_string(w.out[i]) + " differs from the model's");
    dims_t y_dims{batch, filters};
    for (int i = 0; i < N; ++i) y_dims.push_back(w.out[i]);
    tval y = c.add(y_dims);
    c.push(conv_step{x.slot, kernel.slot, y.slot, w, batch, channels, filters, depthwise ? channels : 1});
    if (kind == "separable") {
        const tensor* pw = c.weight("pointwise_kernel");
        if (!pw) return fail("no pointwise kernel");
        const tval pk = c.constant_weight(*pw, layers::channels_first_kernel(pw->dims));
        kernels::window one;
        one.n = N;
        for (int i = 0; i < N; ++i) one.in[i] = one.out[i] = w.out[i];
        dims_t z_dims = y_dims;
        z_dims[1] = pk.dims[0];
        const tval z = c.add(z_dims);
        c.push(conv_step{y.slot, pk.slot, z.slot, one, batch, filters, pk.dims[0], 1});
        y = z;
    }
    const int bias = c.constant_weight("bias");
    const auto act = c.str("activation");
    auto a = c.activate(y, act, bias, y.dims[1], product(y.dims, 2));
    if (!a) return a;
    return c.finish(c.from_cf(*a, first), act);
}

/// cuDNN's cell for a Keras LSTM, GRU or SimpleRNN node, or why it has none.
inline expected<rnn_cell> cudnn_cell(const node& n) {
    const std::string_view cls = n.layer->name;
    const int gates = cls == "LSTM" ? 4 : cls == "GRU" ? 3 : 1;
    const auto act = as_str(n.param("activation"));
    const auto rec = gates > 1 && !is_none(n.param("recurrent_activation")) ? as_str(n.param("recurrent_activation")) : std::string_view();
    if (gates == 4 && act == "tanh" && rec == "sigmoid") return rnn_cell::lstm;
    if (gates == 3 && act == "tanh" && rec == "sigmoid" && as_bool(n.param("reset_after"))) return rnn_cell::gru;
    if (gates == 1 && (act == "tanh" || act == "relu")) return act == "tanh" ? rnn_cell::rnn_tanh : rnn_cell::rnn_relu;
    return fail("cuDNN has no " + std::string(cls) + " cell with activation " + std::string(act) +
                (gates > 1 ? ", recurrent_activation " + std::string(rec.empty() ? "None" : rec) : std::string()) +
                (gates == 3 && !as_bool(n.param("reset_after")) ? ", reset_after=False" : ""));
}

/// A node's activation parameter `p`, None read as linear (Keras' recurrent layers accept None).
inline std::string_view activation_of(const node& n, std::string_view p) { return is_none(n.param(p)) ? std::string_view("linear") : as_str(n.param(p)); }

/// Why a node's parameters take it out of what the backend runs, known before any run (so that
/// a campaign does not learn its whole class as declined from one such node), or nothing.
inline expected<void> runs_node(const node& n) {
    const std::string_view cls = n.layer->name;
    if (cls == "LSTM" || cls == "GRU" || cls == "SimpleRNN") {
        if (auto c = cudnn_cell(n); !c) return fail(c.reason());
    }
    if (cls.starts_with("ConvLSTM"))
        for (std::string_view p : {"activation", "recurrent_activation"})
            if (!activation_fn(activation_of(n, p)))
                return fail("cuda's " + std::string(cls) + " has no " + std::string(p) + " " + std::string(activation_of(n, p)));
    return {};
}

/// Conv{2,3}DTranspose: cuDNN's full transposed convolution, then Keras' output cut out of it.
/// TF places input i, tap j at output i * s + j * d - pad, pad being what a forward "same"
/// convolution from the output size to the input size pads before (the rule libtorch's backend
/// follows too); the rest of the output (output_padding) is zeros plus the bias.
inline expected<tval> conv_transpose(lowering_context& c, int N) {
    const bool first = c.channels_first();
    const tval x = c.to_cf(c.in(0), first);
    const dims_t s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    const tensor* kw = c.weight("kernel");
    if (!kw) return fail("no kernel weight");
    const tval kernel = c.constant_weight(*kw, layers::channels_first_kernel(kw->dims));  // (in, out, k...)
    if (kernel.dims[0] != x.dims[1]) return fail("the kernel's input channels differ from the input's");
    const index_t batch = x.dims[0], filters = kernel.dims[1];
    const bool same = c.str("padding") == "same";
    dims_t out_cf = c.out();
    if (!first) out_cf = {out_cf[0], out_cf.back()}, out_cf.insert(out_cf.end(), c.out().begin() + 1, c.out().end() - 1);
    kernels::window w;
    w.n = N;
    dims_t full{batch, filters}, before, after;
    bool cut = false;
    for (int i = 0; i < N; ++i) {
        const auto u = static_cast<std::size_t>(i);
        w.in[i] = x.dims[2 + u];
        w.k[i] = kernel.dims[2 + u];
        w.stride[i] = s[u];
        w.dilation[i] = d[u];
        w.out[i] = (w.in[i] - 1) * s[u] + (w.k[i] - 1) * d[u] + 1;
        full.push_back(w.out[i]);
        const index_t pad = same ? std::max<index_t>(0, w.out[i] - out_cf[2 + u]) / 2 : 0;
        before.push_back(-pad);
        after.push_back(out_cf[2 + u] - w.out[i] + pad);
        cut = cut || before.back() != 0 || after.back() != 0;
    }
    tval y = c.add(full);
    c.push(conv_transpose_step{x.slot, kernel.slot, y.slot, w, batch, x.dims[1], filters});
    if (cut) y = c.border(y, 2, before, after, 0.0);
    const auto act = c.str("activation");
    auto a = c.activate(y, act, c.constant_weight("bias"), filters, product(y.dims, 2));
    if (!a) return a;
    return c.finish(c.from_cf(*a, first), act);
}

/// Keras' kernel, recurrent kernel and bias of one direction, regrouped per gate in cuDNN's order
/// (steps.hpp) and appended to the step's weights `w` and biases `b`.
inline void cudnn_weights(rnn_cell cell, const tensor& k, const tensor& rk, const tensor* bias, index_t F, index_t u, std::vector<double>& w,
                          std::vector<double>& b) {
    const index_t G = rnn_gates(cell);
    auto keras_gate = [&](index_t id) { return cell == rnn_cell::gru ? index_t{id == 0 ? 1 : id == 1 ? 0 : 2} : id; };  // Keras' GRU: z, r, h
    const auto w0 = static_cast<index_t>(w.size()), b0 = static_cast<index_t>(b.size());
    w.resize(w.size() + static_cast<std::size_t>(G * u * (F + u)));
    b.resize(b.size() + static_cast<std::size_t>(2 * G * u));
    for (index_t id = 0; id < G; ++id) {
        const index_t kg = keras_gate(id);
        for (index_t r = 0; r < u; ++r) {
            for (index_t col = 0; col < F; ++col)
                w[static_cast<std::size_t>(w0 + (id * u + r) * F + col)] = k.data[static_cast<std::size_t>(col * G * u + kg * u + r)];
            for (index_t col = 0; col < u; ++col)
                w[static_cast<std::size_t>(w0 + G * u * F + (id * u + r) * u + col)] = rk.data[static_cast<std::size_t>(col * G * u + kg * u + r)];
            if (!bias) continue;
            const bool two = bias->dims.size() == 2;  // GRU's reset_after: (input bias, recurrent bias)
            b[static_cast<std::size_t>(b0 + id * u + r)] = bias->data[static_cast<std::size_t>(kg * u + r)];
            if (two) b[static_cast<std::size_t>(b0 + (G + id) * u + r)] = bias->data[static_cast<std::size_t>(G * u + kg * u + r)];
        }
    }
}

/// The constant slots of a recurrent step's weights and biases.
inline std::pair<tval, tval> weight_slots(lowering_context& c, std::vector<double> w, std::vector<double> b) {
    const dims_t wd{static_cast<index_t>(w.size())}, bd{static_cast<index_t>(b.size())};
    return {c.constant(wd, std::move(w)), c.constant(bd, std::move(b))};
}

/// LSTM, GRU and SimpleRNN through cuDNN's cells: Keras' weights regrouped per gate in cuDNN's
/// order (steps.hpp). Only Keras' activations that are cuDNN's: LSTM and GRU with tanh and
/// sigmoid (GRU with reset_after), SimpleRNN with tanh or relu. go_backwards reverses the input
/// and leaves the output sequence in processing order, as Keras does.
inline expected<tval> recurrent(lowering_context& c) {
    const auto found = cudnn_cell(c.n);
    if (!found) return fail(found.reason());
    tval x = c.in(0);
    if (x.dims.size() != 3) return fail("a recurrent input of rank " + std::to_string(x.dims.size()));
    if (c.flag("go_backwards")) {
        auto g = identity_map(x.dims, x.dims);
        g.reverse[1] = true;
        const tval r = c.add(x.dims);
        c.push(gather_step{x.slot, r.slot, g, 0.0});
        x = r;
    }
    const tensor* k = c.weight("kernel");
    const tensor* rk = c.weight("recurrent_kernel");
    if (!k || !rk) return fail("no kernel or recurrent kernel");
    const index_t B = x.dims[0], T = x.dims[1], F = x.dims[2], u = c.integer("units");
    std::vector<double> w, b;
    cudnn_weights(*found, *k, *rk, c.weight("bias"), F, u, w, b);
    const auto [wt, bt] = weight_slots(c, std::move(w), std::move(b));
    const tval y = c.add(c.out());
    c.push(rnn_step{x.slot, wt.slot, bt.slot, y.slot, *found, B, T, F, u, c.out().size() == 3});
    return y;
}

/// Bidirectional(LSTM) (Keras' LSTM defaults: tanh, sigmoid, a bias): cuDNN's bidirectional LSTM,
/// whose sequence holds each step's forward and backward states side by side, as Keras' concat
/// with return_sequences does. Without return_sequences Keras takes the forward state after the
/// last step and the backward one after the first; the other merge modes combine the two halves.
/// merge_mode None: the forward direction alone.
inline expected<tval> bidirectional(lowering_context& c) {
    const tval& x = c.in(0);
    if (x.dims.size() != 3) return fail("a recurrent input of rank " + std::to_string(x.dims.size()));
    const tensor *fk = c.weight("forward_kernel"), *frk = c.weight("forward_recurrent_kernel");
    const tensor *bk = c.weight("backward_kernel"), *brk = c.weight("backward_recurrent_kernel");
    if (!fk || !frk || !bk || !brk) return fail("no forward or backward kernels");
    const index_t B = x.dims[0], T = x.dims[1], F = x.dims[2], u = c.integer("units");
    const bool sequences = c.flag("return_sequences"), both = !c.none("merge_mode");
    std::vector<double> w, b;
    cudnn_weights(rnn_cell::lstm, *fk, *frk, c.weight("forward_bias"), F, u, w, b);
    if (both) cudnn_weights(rnn_cell::lstm, *bk, *brk, c.weight("backward_bias"), F, u, w, b);
    const auto [wt, bt] = weight_slots(c, std::move(w), std::move(b));
    if (!both) {
        const tval y = c.add(c.out());
        c.push(rnn_step{x.slot, wt.slot, bt.slot, y.slot, rnn_cell::lstm, B, T, F, u, sequences});
        return y;
    }
    const tval seq = c.add({B, T, 2 * u});
    c.push(rnn_step{x.slot, wt.slot, bt.slot, seq.slot, rnn_cell::lstm, B, T, F, u, true, true});
    const auto mode = c.str("merge_mode");
    if (mode == "concat" && sequences) return as_out(seq, c);
    // Each direction's half: (B, T, u), or without sequences (B, 1, u) at its last step.
    auto half = [&](int dir) {
        const dims_t d{B, sequences ? T : 1, u};
        auto g = identity_map(seq.dims, d);
        g.offset[2] = -dir * u;
        g.reverse[1] = !sequences && dir == 0;  // the forward state after the last step
        const tval h = c.add(d);
        c.push(gather_step{seq.slot, h.slot, g, 0.0});
        return h;
    };
    const tval f = half(0), r = half(1);
    const tval y = c.add(c.out());
    if (mode == "concat") {
        const dims_t d{B, 1, 2 * u};
        c.push(place_step{f.slot, y.slot, shape_of(f.dims), shape_of(d), 2, 0});
        c.push(place_step{r.slot, y.slot, shape_of(r.dims), shape_of(d), 2, u});
        return y;
    }
    c.push(binary_step{f.slot, r.slot, y.slot, mode == "mul" ? kernels::binary_fn::multiply : kernels::binary_fn::add});
    if (mode != "ave") return y;
    const tval z = c.add(c.out());
    c.push(unary_step{y.slot, z.slot, kernels::unary_fn::scale, 0.5});
    return z;
}

/// ConvLSTM{1,2,3}D (Keras' ConvLSTMCell), step by step: each frame's convolution (the layer's
/// strides, padding and dilation) and the state's (stride 1, "same") through cuDNN, and the cell's
/// gates through a kernel of its own (kernels::conv_lstm_cell), all channels-first. Gates whose
/// activation is softmax are declined (runs_node). go_backwards reads the frames from the last and
/// leaves the sequence in processing order, as Keras does.
inline expected<tval> conv_lstm(lowering_context& c, int N) {
    if (auto ok = runs_node(c.n); !ok) return ok.error();
    const bool first = c.channels_first(), sequences = c.flag("return_sequences"), backwards = c.flag("go_backwards");
    const tval& x = c.in(0);
    const auto rank = static_cast<int>(x.dims.size());
    if (rank != N + 3) return fail("a ConvLSTM input of rank " + std::to_string(rank));
    const index_t B = x.dims[0], T = x.dims[1], C = first ? x.dims[2] : x.dims.back(), F = c.integer("filters");
    const tensor* kx = c.weight("kernel");
    const tensor* kh = c.weight("recurrent_kernel");
    if (!kx || !kh) return fail("no kernel or recurrent kernel");
    const tval kxt = c.constant_weight(*kx, layers::channels_first_kernel(kx->dims));  // (4F, C, k...)
    const tval kht = c.constant_weight(*kh, layers::channels_first_kernel(kh->dims));  // (4F, F, k...)
    const int bias = c.constant_weight("bias");
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    // The frame's window (the layer's strides, dilation and padding), and the state's (stride 1,
    // "same"), channels-first.
    dims_t frame{B, C};
    for (int i = 0; i < N; ++i) frame.push_back(x.dims[static_cast<std::size_t>((first ? 3 : 2) + i)]);
    const auto fw = forward_window(frame, k, s, d, c.str("padding"));
    dims_t state{B, F};
    for (int i = 0; i < N; ++i) state.push_back(fw.w.out[i]);
    const dims_t ones(static_cast<std::size_t>(N), 1);
    const auto rw = forward_window(state, k, ones, ones, "same");
    dims_t expected_state = c.out();  // the model's, channels-first and without the time axis
    if (sequences) expected_state.erase(expected_state.begin() + 1);
    if (!first) expected_state = detail::dims_of(detail::permutation_map(expected_state, layers::to_channels_first(N + 2)).out);
    if (expected_state != state) return fail("the ConvLSTM's state dims differ from the model's");
    const index_t P = product(state, 2);
    dims_t gates = state;
    gates[1] = 4 * F;
    const kernels::unary_fn act = *activation_fn(activation_of(c.n, "activation")), ract = *activation_fn(activation_of(c.n, "recurrent_activation"));
    dims_t seq_dims = state;
    seq_dims.insert(seq_dims.begin() + 1, T);
    const tval seq = sequences ? c.add(seq_dims) : tval{};
    dims_t one = state;
    one.insert(one.begin() + 1, 1);
    tval h, cell;
    for (index_t step = 0; step < T; ++step) {
        const index_t t = backwards ? T - 1 - step : step;
        // Frame t, channels-first: (B, 1, C, s...) from x at time t.
        dims_t picked = frame;
        picked.insert(picked.begin() + 1, 1);
        auto g = identity_map(x.dims, picked);
        g.offset[1] = -t;
        g.from[2] = first ? 2 : rank - 1;
        for (int j = 3; j < rank; ++j) g.from[j] = first ? j : j - 1;
        tval f = c.add(picked);
        c.push(gather_step{x.slot, f.slot, g, 0.0});
        f.dims = frame;
        if (!fw.symmetric) f = c.border(f, 2, fw.before, fw.after, 0.0);
        const tval zx = c.add(gates);
        c.push(conv_step{f.slot, kxt.slot, zx.slot, fw.w, B, C, 4 * F, 1});
        int zh = -1;
        if (step > 0) {
            const tval hp = rw.symmetric ? h : c.border(h, 2, rw.before, rw.after, 0.0);
            zh = c.add(gates).slot;
            c.push(conv_step{hp.slot, kht.slot, zh, rw.w, B, F, 4 * F, 1});
        }
        const tval h_next = c.add(state), c_next = c.add(state);
        c.push(conv_lstm_step{zx.slot, zh, bias, step > 0 ? cell.slot : -1, h_next.slot, c_next.slot, B, F, P, act, ract,
                              act == kernels::unary_fn::elu ? 1.0 : 0.0, ract == kernels::unary_fn::elu ? 1.0 : 0.0});
        h = h_next, cell = c_next;
        if (sequences) c.push(place_step{h.slot, seq.slot, shape_of(one), shape_of(seq_dims), 1, step});
    }
    if (!sequences) return c.from_cf(h, first);
    if (first) return seq;
    std::vector<std::int64_t> perm{0, 1};
    for (int i = 0; i < N; ++i) perm.push_back(3 + i);
    perm.push_back(2);
    return c.permute(seq, perm);
}

/// Max and average pooling through the pooling kernel (TF's padding, its average over the
/// elements inside the input).
inline expected<tval> pool(lowering_context& c, int N, bool max) {
    const bool first = c.channels_first();
    const tval x = c.to_cf(c.in(0), first);
    const dims_t k = c.ints("pool_size", N), s = c.none("strides") ? k : c.ints("strides", N);
    const dims_t out = c.out();
    kernels::window w;
    w.n = N;
    dims_t y_dims{x.dims[0], x.dims[1]};
    for (int i = 0; i < N; ++i) {
        const auto u = static_cast<std::size_t>(i);
        w.in[i] = x.dims[2 + u];
        w.k[i] = k[u];
        w.stride[i] = s[u];
        w.pad[i] = layers::window_padding(c.str("padding"), w.in[i], k[u], s[u]).before;
        w.out[i] = out[first ? 2 + u : 1 + u];
        y_dims.push_back(w.out[i]);
    }
    const tval y = c.add(y_dims);
    c.push(pool_step{x.slot, y.slot, w, x.dims[0] * x.dims[1], max});
    return c.from_cf(y, first);
}

inline expected<tval> global_pool(lowering_context& c, bool max) {
    const bool first = c.channels_first();
    const tval x = c.to_cf(c.in(0), first);
    const tval y = c.add(c.out());
    c.push(reduce_step{x.slot, y.slot, x.dims[0] * x.dims[1], product(x.dims, 2), max});
    return y;
}

/// ZeroPadding and Cropping (N spatial axes), and the adapters' pad and crop (every axis but the
/// batch's, amounts as a flat (before, after) list).
inline expected<tval> border(lowering_context& c, int N, int sign) {
    const bool first = N > 1 && c.channels_first();
    const bool adapter = N == 0;
    const tval& x = c.in(0);
    const int axes = adapter ? static_cast<int>(x.dims.size()) - 1 : N;
    const dims_t amounts = adapter ? [&] {
        const auto& v = std::get<ints>(c.param(sign > 0 ? "padding" : "cropping"));
        return dims_t(v.begin(), v.end());
    }()
                                   : c.ints(sign > 0 ? "padding" : "cropping", 2 * N);
    dims_t before, after;
    for (int i = 0; i < axes; ++i)
        before.push_back(sign * amounts[2 * static_cast<std::size_t>(i)]), after.push_back(sign * amounts[2 * static_cast<std::size_t>(i) + 1]);
    const double fill = adapter && sign > 0 ? c.real("constant_values") : 0.0;
    return c.border(x, adapter ? 1 : (first ? 2 : 1), before, after, fill);
}

inline expected<tval> upsampling(lowering_context& c, int N) {
    const bool first = N > 1 && c.channels_first();
    const tval& x = c.in(0);
    if (N == 2 && c.str("interpolation") == "bilinear") {
        const tval y = c.add(c.out());
        c.push(bilinear_step{x.slot, y.slot, shape_of(x.dims), shape_of(c.out()), first ? 2 : 1});
        return y;
    }
    const dims_t size = N == 1 ? dims_t{c.integer("size")} : c.ints("size", N);
    auto g = identity_map(x.dims, c.out());
    for (int i = 0; i < N; ++i) g.repeat[(first ? 2 : 1) + i] = size[static_cast<std::size_t>(i)];
    const tval y = c.add(c.out());
    c.push(gather_step{x.slot, y.slot, g, 0.0});
    return y;
}

inline expected<tval> fold(lowering_context& c, kernels::binary_fn f) {
    for (std::size_t k = 1; k < c.inputs(); ++k)
        if (c.in(k).dims != c.in(0).dims) return fail("merged inputs have different shapes");
    tval y = c.in(0);
    for (std::size_t k = 1; k < c.inputs(); ++k) {
        const tval z = c.add(c.out());
        c.push(binary_step{y.slot, c.in(k).slot, z.slot, f});
        y = z;
    }
    return y;
}

/// LocallyConnected{1,2}D (Keras' implementation 1) on the channels-last input; the bias, shaped
/// (out..., filters), is reshaped rather than transposed to the output's layout (Keras'
/// bias_add), so it is added element for element in that layout.
inline expected<tval> locally_connected(lowering_context& c, int N) {
    const bool first = c.channels_first();
    const tval x = c.from_cf(c.in(0), !first);  // channels-last
    const tensor* kw = c.weight("kernel");
    if (!kw) return fail("no kernel weight");
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N);
    const index_t batch = x.dims[0], channels = x.dims.back(), filters = c.integer("filters");
    kernels::window w;
    w.n = N;
    dims_t y_dims{batch};
    for (int i = 0; i < N; ++i) {
        const auto u = static_cast<std::size_t>(i);
        w.in[i] = x.dims[1 + u];
        w.k[i] = k[u];
        w.stride[i] = s[u];
        w.out[i] = (w.in[i] - w.k[i]) / w.stride[i] + 1;
        y_dims.push_back(w.out[i]);
    }
    y_dims.push_back(filters);
    if (kw->size() != w.out_count() * w.k[0] * w.k[1] * w.k[2] * channels * filters) return fail("the kernel's size differs from the window's");
    const tval y = c.add(y_dims);
    c.push(local_step{x.slot, c.constant(kw->dims, kw->data).slot, y.slot, w, batch, channels, filters, first});
    const tval out = c.to_cf(y, !first);
    const auto act = c.str("activation");
    auto a = c.activate(out, act, c.constant_weight("bias"), w.out_count() * filters, 1);
    if (!a) return a;
    return c.finish(*a, act);
}

/// Keras' Dot over the last axes: (B, K).(B, K) -> (B, 1) and (B, N, K).(B, M, K) -> (B, N, M), a
/// batched product with the second factor transposed; normalize divides each row by its L2 norm
/// first.
inline expected<tval> dot(lowering_context& c) {
    tval a = c.in(0), b = c.in(1);
    if (a.dims.size() != b.dims.size() || a.dims.size() < 2 || a.dims.size() > 3 || a.dims[0] != b.dims[0] || a.dims.back() != b.dims.back())
        return fail("Dot inputs differ in rank, batch or last axis");
    const index_t batch = a.dims[0], k = a.dims.back(), rows = a.dims.size() == 3 ? a.dims[1] : 1, cols = b.dims.size() == 3 ? b.dims[1] : 1;
    if (tensor::count(c.out()) != batch * rows * cols) return fail("Dot inputs do not match the inferred shape");
    if (c.flag("normalize"))
        for (tval* v : {&a, &b}) {
            const tval z = c.add(v->dims);
            c.push(l2_normalize_step{v->slot, z.slot, k, k ? tensor::count(v->dims) / k : 0});
            *v = z;
        }
    const tval y = c.add(c.out());
    c.push(matmul_step{a.slot, b.slot, y.slot, rows, k, cols, batch, true});
    return y;
}

inline expected<tval> norm(lowering_context& c, bool batch) {
    const tval& x = c.in(0);
    const int axis = layers::normal_axis(c.integer("axis"), static_cast<int>(x.dims.size()));
    const index_t len = x.dims[static_cast<std::size_t>(axis)], inner = product(x.dims, static_cast<std::size_t>(axis) + 1);
    const tval y = c.add(x.dims);
    const int gamma = c.constant_weight("gamma"), beta = c.constant_weight("beta");
    if (batch)
        c.push(batch_norm_step{x.slot, y.slot, gamma, beta, c.constant_weight("moving_mean"), c.constant_weight("moving_variance"), len, inner,
                               c.real("epsilon")});
    else c.push(layer_norm_step{x.slot, y.slot, gamma, beta, {len, inner}, len ? tensor::count(x.dims) / len : 0, c.real("epsilon")});
    return y;
}

/// The lowering of each layer type of the default list (core/kernels.hpp finds them by type).
struct lowering_kernels {
    using binary_fn = kernels::binary_fn;
    using unary_fn = kernels::unary_fn;
    static expected<tval> alias(lowering_context& c) { return as_out(c.in(0), c); }

    // Adapters and layers that keep their input as it is: a new name for the same slot.
    static expected<tval> run(layers::reshape, lowering_context& c) { return alias(c); }
    static expected<tval> run(layers::expand_dims, lowering_context& c) { return alias(c); }
    static expected<tval> run(layers::stop_gradient, lowering_context& c) { return alias(c); }
    template <class Tag>
    static expected<tval> run(layers::regularization<Tag>, lowering_context& c) {
        return alias(c);
    }
    static constexpr std::string_view unsupported(layers::cast) { return "it runs a model in one dtype"; }
    static expected<tval> run(layers::flatten, lowering_context& c) {
        const bool first = c.channels_first() && c.in(0).dims.size() > 2;
        return as_out(c.from_cf(c.in(0), !first), c);
    }
    static expected<tval> run(layers::drop_dim, lowering_context& c) {
        const auto axis = static_cast<int>(c.integer("axis"));
        auto g = identity_map(c.in(0).dims, c.out());
        for (int j = 0; j < g.out.rank; ++j) g.from[j] = j < axis ? j : j + 1;
        const tval y = c.add(c.out());
        c.push(gather_step{c.in(0).slot, y.slot, g, 0.0});
        return y;
    }
    static expected<tval> run(layers::inject, lowering_context& c) {
        const auto v = c.str("value");
        const double x = v == "nan" ? std::numeric_limits<double>::quiet_NaN() : (v == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
        const tval y = c.add(c.out());
        c.push(copy_step{c.in(0).slot, y.slot});
        c.push(inject_step{y.slot, std::max<index_t>(1, c.integer("stride")), x});
        return y;
    }
    static expected<tval> run(layers::pad, lowering_context& c) { return border(c, 0, +1); }
    static expected<tval> run(layers::crop, lowering_context& c) { return border(c, 0, -1); }
    static expected<tval> run(layers::dense, lowering_context& c) {
        const tval& x = c.in(0);
        const tensor* k = c.weight("kernel");
        if (!k) return fail("no kernel weight");
        const index_t kk = x.dims.back(), n = k->dims[1], m = kk ? tensor::count(x.dims) / kk : 0;
        const tval y = c.add(c.out());
        c.push(matmul_step{x.slot, c.constant(k->dims, k->data).slot, y.slot, m, kk, n});
        const auto act = c.str("activation");
        auto a = c.activate(y, act, c.constant_weight("bias"), n, 1);
        if (!a) return a;
        return c.finish(*a, act);
    }
    static expected<tval> run(layers::activation, lowering_context& c) {
        const auto act = c.str("activation");
        auto a = c.activate(c.in(0), act);
        if (!a) return a;
        const tval y = c.finish(*a, act);
        if (y.slot != c.in(0).slot) return y;
        const tval z = c.add(c.out());  // linear: a copy, so that the node has a slot of its own
        c.push(copy_step{y.slot, z.slot});
        return z;
    }
    // Element-wise.
    static expected<tval> run(layers::time_distributed, lowering_context& c) { return unary_of(c, unary_fn::relu); }
    static expected<tval> run(layers::absolute, lowering_context& c) { return unary_of(c, unary_fn::abs); }
    static expected<tval> run(layers::square, lowering_context& c) { return unary_of(c, unary_fn::square); }
    static expected<tval> run(layers::scale_shift, lowering_context& c) { return unary_of(c, unary_fn::scale_shift, c.real("scale"), c.real("shift")); }
    static expected<tval> run(layers::relu, lowering_context& c) {
        return unary_of(c, unary_fn::keras_relu, c.real("negative_slope"), c.real("threshold"),
                        c.none("max_value") ? std::numeric_limits<double>::quiet_NaN() : c.real("max_value"));
    }
    static expected<tval> run(layers::leaky_relu, lowering_context& c) { return unary_of(c, unary_fn::leaky_relu, c.real("alpha")); }
    static expected<tval> run(layers::elu, lowering_context& c) { return unary_of(c, unary_fn::elu, c.real("alpha")); }
    static expected<tval> run(layers::thresholded_relu, lowering_context& c) { return unary_of(c, unary_fn::thresholded_relu, c.real("theta")); }
    static expected<tval> run(layers::softmax, lowering_context& c) {
        return c.softmax(c.in(0), layers::normal_axis(c.integer("axis"), static_cast<int>(c.in(0).dims.size())));
    }
    static expected<tval> run(layers::prelu, lowering_context& c) {
        const tensor* alpha = c.weight("alpha");
        if (!alpha) return fail("no alpha weight");
        auto g = identity_map(alpha->dims, c.out());
        g.from[0] = -1;
        for (int j = 1; j < g.out.rank; ++j) g.from[j] = alpha->dims[static_cast<std::size_t>(j - 1)] == 1 ? -1 : j - 1;
        const tval y = c.add(c.out());
        c.push(prelu_step{c.in(0).slot, c.constant(alpha->dims, alpha->data).slot, y.slot, g});
        return y;
    }
    // Merges.
    static expected<tval> run(layers::custom_scale, lowering_context& c) {
        const tval y = c.add(c.out());
        c.push(binary_step{c.in(0).slot, c.in(1).slot, y.slot, binary_fn::add_scaled, c.real("scale")});
        return y;
    }
    static expected<tval> run(layers::add, lowering_context& c) { return fold(c, binary_fn::add); }
    static expected<tval> run(layers::subtract, lowering_context& c) { return fold(c, binary_fn::subtract); }
    static expected<tval> run(layers::multiply, lowering_context& c) { return fold(c, binary_fn::multiply); }
    static expected<tval> run(layers::maximum, lowering_context& c) { return fold(c, binary_fn::maximum); }
    static expected<tval> run(layers::minimum, lowering_context& c) { return fold(c, binary_fn::minimum); }
    static expected<tval> run(layers::average, lowering_context& c) {
        auto sum = fold(c, binary_fn::add);
        if (!sum) return sum;
        const tval y = c.add(c.out());
        c.push(unary_step{sum->slot, y.slot, unary_fn::scale, 1.0 / static_cast<double>(c.inputs())});
        return y;
    }
    static expected<tval> run(layers::concatenate, lowering_context& c) {
        const int axis = layers::normal_axis(c.integer("axis"), static_cast<int>(c.out().size()));
        const tval y = c.add(c.out());
        index_t at = 0;
        for (std::size_t k = 0; k < c.inputs(); ++k) {
            const tval& x = c.in(k);
            if (x.dims.size() != c.out().size()) return fail("Concatenate inputs differ in rank");
            c.push(place_step{x.slot, y.slot, shape_of(x.dims), shape_of(c.out()), axis, at});
            at += x.dims[static_cast<std::size_t>(axis)];
        }
        if (at != c.out()[static_cast<std::size_t>(axis)]) return fail("Concatenate inputs do not add up to the inferred shape");
        return y;
    }
    static expected<tval> run(layers::dot, lowering_context& c) { return dot(c); }
    // Reshaping.
    static expected<tval> run(layers::repeat_vector, lowering_context& c) {
        auto g = identity_map(c.in(0).dims, c.out());
        g.from[1] = -1, g.from[2] = 1;
        const tval y = c.add(c.out());
        c.push(gather_step{c.in(0).slot, y.slot, g, 0.0});
        return y;
    }
    static expected<tval> run(layers::permute, lowering_context& c) {
        const auto& d = std::get<ints>(c.param("dims"));
        return c.permute(c.in(0), {0, d[0], d[1]});
    }
    template <int N, int Sign, const std::string_view* Names, const char* Param>
    static expected<tval> run(layers::border<N, Sign, Names, Param>, lowering_context& c) {
        return border(c, N, Sign);
    }
    template <int N>
    static expected<tval> run(layers::upsampling<N>, lowering_context& c) {
        return upsampling(c, N);
    }
    // Recurrent and normalisation.
    template <layers::cell C>
    static expected<tval> run(layers::recurrent<C>, lowering_context& c) {
        return recurrent(c);
    }
    static expected<tval> run(layers::bidirectional, lowering_context& c) { return bidirectional(c); }
    template <int N>
    static expected<tval> run(layers::conv_lstm<N>, lowering_context& c) {
        return conv_lstm(c, N);
    }
    static expected<tval> run(layers::batch_normalization, lowering_context& c) { return norm(c, true); }
    static expected<tval> run(layers::layer_normalization, lowering_context& c) { return norm(c, false); }
    // Convolutions and pools.
    template <int N>
    static expected<tval> run(layers::conv<N>, lowering_context& c) {
        return conv(c, N, "conv");
    }
    template <int N>
    static expected<tval> run(layers::depthwise_conv<N>, lowering_context& c) {
        return conv(c, N, "depthwise");
    }
    template <int N>
    static expected<tval> run(layers::separable_conv<N>, lowering_context& c) {
        return conv(c, N, "separable");
    }
    template <int N>
    static expected<tval> run(layers::conv_transpose<N>, lowering_context& c) {
        return conv_transpose(c, N);
    }
    template <int N>
    static expected<tval> run(layers::locally_connected<N>, lowering_context& c) {
        return locally_connected(c, N);
    }
    template <int N, layers::pool_kind K>
    static expected<tval> run(layers::pooling<N, K>, lowering_context& c) {
        return pool(c, N, K == layers::pool_kind::max);
    }
    template <int N, layers::pool_kind K>
    static expected<tval> run(layers::global_pooling<N, K>, lowering_context& c) {
        return global_pool(c, K == layers::pool_kind::max);
    }
};

}  // namespace detail

/// The lowerings of the default registry's layers, by class name.
inline const std::map<std::string, lowering, std::less<>>& lowerings() {
    static const auto table = kernel_table<detail::lowering_kernels, lowering>(default_layers{});
    return table;
}

/// Why the backend cannot run `m` at all (a layer class it has no lowering for, a dtype), or
/// nothing.
inline expected<void> plannable(const model& m) {
    for (const auto& n : m.nodes) {
        if (n.layer->arity.max != 0 && !lowerings().contains(n.layer->name)) {
            static const auto why = unsupported_layers<detail::lowering_kernels>(default_layers{});
            const auto it = why.find(n.layer->name);
            return fail("cuda has no kernel for " + std::string(n.layer->name) + (it != why.end() ? ": " + it->second : ""));
        }
        if (n.type != m.nodes.front().type)
            return fail("cuda runs a model in one dtype (this one mixes " + std::string(name_of(m.nodes.front().type)) + " and " +
                        std::string(name_of(n.type)) + ")");
        if (n.layer->arity.max != 0)
            if (auto ok = detail::runs_node(n); !ok) return ok;
    }
    return {};
}

/// What planning ends in: the plan, or the node it could not lower and why.
struct planned {
    plan p;
    int failed_node = -1;
    std::string why;
};

/// Lowers `m` for a run on tensors of batch `batch`. `forced`: every node reads its inputs from
/// a tensor of its own per producer (teacher forcing), handed in node order.
inline planned make_plan(const model& m, index_t batch, bool forced, std::optional<dtype> precision, weight_cache* cache = nullptr) {
    planned r;
    plan& p = r.p;
    std::vector<dims_t> slot_dims;
    switch (precision.value_or(m.nodes.empty() ? dtype::float32 : m.nodes.front().type)) {
        case dtype::float16: p.type = element::float16; break;
        case dtype::bfloat16: p.type = element::bfloat16; break;
        case dtype::float32: p.type = element::float32; break;
        case dtype::float64: p.type = element::float64; break;
    }
    auto add = [&](dims_t d) {
        p.slots.push_back(slot{tensor::count(d), {}, false});
        slot_dims.push_back(std::move(d));
        return static_cast<int>(p.slots.size()) - 1;
    };
    std::vector<int> forced_slot(m.size(), -1);
    if (forced)
        for (std::size_t i = 0; i < m.size(); ++i) p.input_slots.push_back(forced_slot[i] = add(concrete(m.nodes[i].out, batch)));
    p.node_slots.assign(m.size(), -1);
    for (std::size_t i = 0; i < m.size(); ++i) {
        const node& n = m.nodes[i];
        p.node_names.push_back("node " + std::to_string(i) + " (" + std::string(n.layer->name) + ")");
        const dims_t out = concrete(n.out, batch);
        if (n.layer->arity.max == 0) {
            if (forced) p.node_slots[i] = forced_slot[i];
            else p.input_slots.push_back(p.node_slots[i] = add(out));
            p.node_end.push_back(p.steps.size());
            continue;
        }
        std::vector<tval> in;
        for (int src : n.inputs) {
            const auto s = static_cast<std::size_t>(src);
            const int at = forced ? forced_slot[s] : p.node_slots[s];
            in.push_back({at, concrete(m.nodes[s].out, batch)});  // a slot may hold its producer's output under other dims (a reshape)
        }
        lowering_context c(p, slot_dims, n, std::move(in), weights_of(m, static_cast<int>(i), cache), out);
        const auto found = lowerings().find(n.layer->name);
        auto y = found == lowerings().end() ? expected<tval>(fail("cuda has no kernel for it")) : found->second(c);
        if (y && tensor::count(y->dims) != tensor::count(out))
            y = fail("its steps make " + std::to_string(tensor::count(y->dims)) + " elements, the model says " + std::to_string(tensor::count(out)));
        if (!y) {
            r.failed_node = static_cast<int>(i);
            r.why = y.reason();
            return r;
        }
        p.node_slots[i] = y->slot;
        p.node_end.push_back(p.steps.size());
    }
    return r;
}

}  // namespace memo::cuda
