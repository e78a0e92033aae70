#pragma once
// Lowerings: each layer of the default registry written as standard ONNX operators (opset 17),
// with Keras' semantics, as the torch backend computes them. Where ONNX has an operator with
// Keras' meaning (Conv with asymmetric pads, pools, LSTM/GRU/RNN, BatchNormalization,
// LayerNormalization, Resize) it is used, so that a disagreement points at one of ONNX Runtime's
// kernels; the rest is composed from element-wise operators.
//
// Layouts: Keras tensors are channels_last and its weights have Keras' layouts. Weights are
// rearranged here, in C++, into ONNX's layouts before they become initializers; activations are
// transposed to channels-first around the operators that need it, and back.
//
// Float attributes are float32 in ONNX: a float64 model gets its constants (ELU's alpha, SELU's
// scale, ...) as float64 tensors instead, so that the lowering stays exact in float64.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/kernels.hpp"
#include "../core/model.hpp"
#include "../layers/all.hpp"
#include "../layers/layouts.hpp"
#include "../tensors/weights.hpp"
#include "graph.hpp"

namespace memo::onnx {

/// What a lowering sees: the node, the graph, its input values (already in `type`, the dtype it
/// computes in), its inputs' concrete dims, its weights (Keras' layouts) and its output dims.
/// Its parameters read as node_params reads them.
struct call : node_params {
    graph& g;
    std::vector<std::string> in;
    std::vector<dims_t> in_dims;
    std::span<const memo::weight> weights;
    dims_t out;
    dtype type;

    /// The weight called `name`, or nullptr (use_bias=False).
    const tensor* weight(std::string_view name) const {  // NOLINT
        for (const auto& w : weights)
            if (w.name == name) return &w.value;
        return nullptr;
    }
    /// An initializer of weight `name` in the compute dtype, optionally rearranged first.
    std::string init(const tensor& t, std::string_view hint = "w") const { return g.initializer(t, type, hint); }
    std::string scalar(double v) const { return g.scalar(v, type); }
    int rank() const { return static_cast<int>(in_dims[0].size()); }
};

/// A lowering writes one node's computation and returns the name of its output value.
using lowering = std::function<std::string(call&)>;

namespace lower {

/// Channels-last (B, s..., C) to channels-first (B, C, s...), and back (layers/layouts.hpp);
/// `first` inputs stay.
inline std::string to_cf(graph& g, const std::string& x, int rank, bool first) {
    if (first || rank < 3) return x;
    return g.op("Transpose", {x}, {{"perm", layers::to_channels_first(rank)}});
}
inline std::string from_cf(graph& g, const std::string& x, int rank, bool first) {
    if (first || rank < 3) return x;
    return g.op("Transpose", {x}, {{"perm", layers::from_channels_first(rank)}});
}

/// Keras' activation `name` (None and linear: the identity); softmax over `softmax_axis`.
inline std::string activate(graph& g, const std::string& x, std::string_view name, dtype t, std::int64_t softmax_axis = -1) {
    const bool exact = t == dtype::float64;  // float attributes would round Keras' constants
    if (name == "relu") return g.op("Relu", {x});
    if (name == "tanh") return g.op("Tanh", {x});
    if (name == "sigmoid") return g.op("Sigmoid", {x});
    if (name == "hard_sigmoid") {
        if (!exact) return g.op("HardSigmoid", {x}, {{"alpha", 0.2}, {"beta", 0.5}});
        const auto y = g.op("Add", {g.op("Mul", {x, g.scalar(0.2, t)}), g.scalar(0.5, t)});
        return g.op("Clip", {y, g.scalar(0.0, t), g.scalar(1.0, t)});
    }
    if (name == "elu") return g.op("Elu", {x}, {{"alpha", 1.0}});
    if (name == "selu") {
        constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
        if (!exact) return g.op("Selu", {x}, {{"alpha", alpha}, {"gamma", scale}});
        const auto neg = g.op("Elu", {g.op("Min", {x, g.scalar(0.0, t)})}, {{"alpha", 1.0}});
        return g.op("Mul", {g.scalar(scale, t), g.op("Add", {g.op("Relu", {x}), g.op("Mul", {g.scalar(alpha, t), neg})})});
    }
    if (name == "softplus") return g.op("Softplus", {x});
    if (name == "softsign") return g.op("Softsign", {x});
    if (name == "exponential") return g.op("Exp", {x});
    if (name == "softmax") return g.op("Softmax", {x}, {{"axis", softmax_axis}});
    return x;
}

/// TF's padding per spatial axis (layers/common.hpp's window_padding) as ONNX's pads list: all the
/// befores, then all the afters.
inline dims_t tf_pads(const dims_t& in, const dims_t& k, const dims_t& s, const dims_t& d, std::string_view mode) {
    const std::size_t n = k.size();
    dims_t p(2 * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto [before, after] = memo::layers::window_padding(mode, in[i], (k[i] - 1) * d[i] + 1, s[i]);
        p[i] = before;
        p[n + i] = after;
    }
    return p;
}

/// The spatial dims of a Keras tensor of these dims.
inline dims_t spatial(const dims_t& dims, bool first) { return first ? dims_t(dims.begin() + 2, dims.end()) : dims_t(dims.begin() + 1, dims.end() - 1); }

/// A Keras weight in ONNX's layout (layers/layouts.hpp).
inline tensor relaid(const tensor& w, const layers::layout_change& c) {
    tensor p = permuted(w, c.perm);
    return c.dims.empty() ? p : reshaped(std::move(p), c.dims);
}
/// Keras' kernel (k..., a, b) as ONNX's (b, a, k...): conv (k..., in, out) -> (out, in, k...),
/// conv_transpose (k..., out, in) -> (in, out, k...).
inline tensor keras_kernel(const tensor& w) { return relaid(w, layers::channels_first_kernel(w.dims)); }
/// Keras' depthwise kernel (k..., in, dm) as ONNX's grouped (in * dm, 1, k...).
inline tensor depthwise_kernel(const tensor& w) { return relaid(w, layers::channels_first_depthwise(w.dims)); }

/// A convolution of the channels-first `x` with an ONNX kernel initializer.
inline std::string conv_cf(graph& g, const std::string& x, const std::string& w, const std::string& b, const dims_t& k, const dims_t& s, const dims_t& d,
                           const dims_t& pads, std::int64_t groups) {
    std::vector<std::string> in{x, w};
    if (!b.empty()) in.push_back(b);
    return g.op("Conv", in, {{"kernel_shape", k}, {"strides", s}, {"dilations", d}, {"pads", pads}, {"group", groups}});
}

template <int N>
std::string conv(call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    const auto x = to_cf(c.g, c.in[0], c.rank(), first);
    const auto* b = c.weight("bias");
    const auto y = conv_cf(c.g, x, c.init(keras_kernel(*c.weight("kernel")), "kernel"), b ? c.init(*b, "bias") : "", k, s, d,
                           tf_pads(spatial(c.in_dims[0], first), k, s, d, c.str("padding")), 1);
    return activate(c.g, from_cf(c.g, y, c.rank(), first), c.str("activation"), c.type);
}

/// SeparableConv: a grouped (depthwise) conv with the layer's strides, padding and dilation, then a
/// 1x1 conv with the bias.
template <int N>
std::string separable_conv(call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N), one(N, 1);
    const std::int64_t channels = first ? c.in_dims[0][1] : c.in_dims[0].back();
    const auto x = to_cf(c.g, c.in[0], c.rank(), first);
    const auto depth = conv_cf(c.g, x, c.init(depthwise_kernel(*c.weight("depthwise_kernel")), "depthwise"), "", k, s, d,
                               tf_pads(spatial(c.in_dims[0], first), k, s, d, c.str("padding")), channels);
    const auto* b = c.weight("bias");
    const auto y =
        conv_cf(c.g, depth, c.init(keras_kernel(*c.weight("pointwise_kernel")), "pointwise"), b ? c.init(*b, "bias") : "", one, one, one, dims_t(2 * N, 0), 1);
    return activate(c.g, from_cf(c.g, y, c.rank(), first), c.str("activation"), c.type);
}

template <int N>
std::string depthwise_conv(call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    const std::int64_t channels = first ? c.in_dims[0][1] : c.in_dims[0].back();
    const auto x = to_cf(c.g, c.in[0], c.rank(), first);
    const auto* b = c.weight("bias");
    const auto y = conv_cf(c.g, x, c.init(depthwise_kernel(*c.weight("depthwise_kernel")), "depthwise"), b ? c.init(*b, "bias") : "", k, s, d,
                           tf_pads(spatial(c.in_dims[0], first), k, s, d, c.str("padding")), channels);
    return activate(c.g, from_cf(c.g, y, c.rank(), first), c.str("activation"), c.type);
}

/// Conv{2,3}DTranspose. TF places input i, tap j at output i * s + j * d - pad_before, where
/// pad_before is what a forward "same" conv from the output size to the input size would pad.
/// ONNX's ConvTranspose says the same with pads (before, after) and output_padding, when the
/// extra length at the end is below max(stride, dilation); otherwise the transpose is zero-padded
/// to the output size and the bias added after.
template <int N>
std::string conv_transpose(call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N);
    const dims_t in = spatial(c.in_dims[0], first), out = spatial(c.out, first);
    const bool same = c.str("padding") == "same";
    dims_t pads(2 * N, 0), output_padding(N, 0), grow(2 * (N + 2), 0);
    bool direct = true, grows = false;
    for (int i = 0; i < N; ++i) {
        const auto u = static_cast<std::size_t>(i);
        const std::int64_t keff = (k[u] - 1) * d[u] + 1, full = (in[u] - 1) * s[u] + keff;
        const std::int64_t before = same ? std::max<std::int64_t>(0, full - out[u]) / 2 : 0, after = full - before - out[u];
        pads[u] = before;
        if (after >= 0) pads[u + N] = after;
        else if (-after < std::max(s[u], d[u])) output_padding[u] = -after;
        else direct = false, grow[static_cast<std::size_t>(N + 2 + 2 + i)] = -after, grows = true;
    }
    const auto x = to_cf(c.g, c.in[0], c.rank(), first);
    const auto w = c.init(keras_kernel(*c.weight("kernel")), "kernel");
    const auto* b = c.weight("bias");
    std::vector<std::string> args{x, w};
    if (b && direct) args.push_back(c.init(*b, "bias"));
    std::string y = c.g.op("ConvTranspose", args, {{"kernel_shape", k}, {"strides", s}, {"dilations", d}, {"pads", pads}, {"output_padding", output_padding}});
    if (grows) y = c.g.op("Pad", {y, c.g.ints(grow)}, {{"mode", "constant"}});
    if (b && !direct) {
        dims_t shape{1, b->dims[0]};
        shape.resize(N + 2, 1);
        y = c.g.op("Add", {y, c.init(reshaped(*b, shape), "bias")});
    }
    return activate(c.g, from_cf(c.g, y, c.rank(), first), c.str("activation"), c.type);
}

/// Max and average pooling; Keras' "same" average divides by the count of non-padded elements,
/// as ONNX's count_include_pad=0 does.
template <int N, bool Max>
std::string pool(call& c) {
    const bool first = c.channels_first();
    const dims_t k = c.ints("pool_size", N), s = c.none("strides") ? k : c.ints("strides", N);
    const dims_t pads = tf_pads(spatial(c.in_dims[0], first), k, s, dims_t(N, 1), c.str("padding"));
    const auto x = to_cf(c.g, c.in[0], c.rank(), first);
    std::string y = Max ? c.g.op("MaxPool", {x}, {{"kernel_shape", k}, {"strides", s}, {"pads", pads}})
                        : c.g.op("AveragePool", {x}, {{"kernel_shape", k}, {"strides", s}, {"pads", pads}, {"count_include_pad", 0}});
    return from_cf(c.g, y, c.rank(), first);
}

template <int N, bool Max>
std::string global_pool(call& c) {
    const bool first = c.channels_first();
    const auto y = c.g.op(Max ? "GlobalMaxPool" : "GlobalAveragePool", {to_cf(c.g, c.in[0], c.rank(), first)});
    if (c.flag("keepdims")) return from_cf(c.g, y, c.rank(), first);
    return c.g.op("Reshape", {y, c.g.ints(c.out)});
}

/// Slices [start, start + length) of axis `axis`.
inline std::string slice(graph& g, const std::string& x, std::int64_t axis, std::int64_t start, std::int64_t length) {
    return g.op("Slice", {x, g.ints({start}), g.ints({start + length}), g.ints({axis})});
}
/// Reverses axis `axis`.
inline std::string reverse(graph& g, const std::string& x, std::int64_t axis) {
    return g.op("Slice", {x, g.ints({-1}), g.ints({std::numeric_limits<std::int64_t>::min()}), g.ints({axis}), g.ints({-1})});
}

/// The columns of a Keras recurrent weight (..., gates * units) in another gate order.
inline tensor reorder_gates(const tensor& w, std::int64_t units, const std::vector<int>& order) {
    tensor y = w;
    const std::int64_t cols = w.dims.back(), rows = w.size() / cols;
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::size_t gi = 0; gi < order.size(); ++gi)
            for (std::int64_t u = 0; u < units; ++u) y[r * cols + static_cast<std::int64_t>(gi) * units + u] = w[r * cols + order[gi] * units + u];
    return y;
}
/// (in, g*u) as ONNX's (1, g*u, in).
inline tensor onnx_matrix(const tensor& w) { return reshaped(permuted(w, {1, 0}), {1, w.dims[1], w.dims[0]}); }

/// ONNX's name of a Keras activation that its RNN operators take without parameters, or "".
inline std::string rnn_activation(std::string_view keras) {
    if (keras == "sigmoid") return "Sigmoid";
    if (keras == "tanh") return "Tanh";
    if (keras == "relu") return "Relu";
    if (keras == "softsign") return "Softsign";
    if (keras == "softplus") return "Softplus";
    return "";
}

/// A Scan over axis 1 of `x` (time) whose body computes one step: `step(body, state, x_t)` returns
/// the new state and the value to stack into the output sequence. The graph stays the same size
/// however long the sequence. Returns the final state and the sequence (stacked on axis 1).
struct scan_state {
    std::string name;
    dtype type;
    dims_t dims;
    std::string initial;  // the outer value it starts from
};
template <class Step>
std::pair<std::vector<std::string>, std::string> scan(graph& g, const std::string& x, dtype type, const dims_t& step_dims,
                                                      const std::vector<scan_state>& states, Step step) {
    auto body_proto = std::make_shared<pb::GraphProto>();
    graph b(*body_proto, g.fresh("scan") + "/");
    b.set_scope(g.scope());
    body_proto->set_name(b.fresh("body"));
    std::vector<std::string> in;
    for (const auto& st : states) {
        in.push_back(b.fresh(st.name));
        graph::declare(*body_proto->add_input(), in.back(), st.type, st.dims);
    }
    const std::string xt = b.fresh("x");
    graph::declare(*body_proto->add_input(), xt, type, step_dims);
    auto [next, emit] = step(b, in, xt);
    for (std::size_t i = 0; i < states.size(); ++i) {
        // Every output of a graph is a value of its own.
        const auto out = b.op("Identity", {next[i]});
        auto* v = body_proto->add_output();
        v->set_name(out);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type(states[i].type));
    }
    const auto emitted = b.op("Identity", {emit});
    body_proto->add_output()->set_name(emitted);
    body_proto->mutable_output()->rbegin()->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type(type));
    std::vector<std::string> args;
    for (const auto& st : states) args.push_back(st.initial);
    args.push_back(x);
    auto outs = g.node("Scan", args, {{"body", subgraph{body_proto}}, {"num_scan_inputs", 1}, {"scan_input_axes", dims_t{1}}, {"scan_output_axes", dims_t{1}}},
                       static_cast<int>(states.size()) + 1);
    const std::string seq = outs.back();
    outs.pop_back();
    return {outs, seq};
}

/// Keras' cell step by step, as a Scan: LSTM (4 gates), GRU (3), SimpleRNN (1), for activations
/// ONNX's recurrent operators do not take.
inline std::string unrolled(call& c, const std::string& x, int gates) {
    graph& g = c.g;
    const std::int64_t units = c.integer("units"), batch = c.in_dims[0][0];
    const std::string_view act = c.str("activation"), rec = gates == 1 ? std::string_view() : c.str("recurrent_activation");
    const bool seq = c.flag("return_sequences"), reset_after = gates == 3 && c.flag("reset_after");
    const tensor* b = c.weight("bias");
    std::string input_bias, recurrent_bias;
    if (b) {
        if (reset_after) {
            const auto both = c.init(reshaped(tensor(*b), {2, 3 * units}), "bias");
            recurrent_bias = g.op("Gather", {both, g.int_scalar(1)}, {{"axis", 0}});
            input_bias = g.op("Gather", {both, g.int_scalar(0)}, {{"axis", 0}});
        } else {
            input_bias = c.init(*b, "bias");
        }
    }
    const auto U = c.init(*c.weight("recurrent_kernel"), "recurrent_kernel");
    std::string xw = g.op("MatMul", {x, c.init(*c.weight("kernel"), "kernel")});
    if (!input_bias.empty()) xw = g.op("Add", {xw, input_bias});
    const auto zeros = c.init(tensor({batch, units}, c.type), "h0");
    std::vector<scan_state> states{{"h", c.type, {batch, units}, zeros}};
    if (gates == 4) states.push_back({"c", c.type, {batch, units}, zeros});
    const dtype t = c.type;
    auto step = [&](graph& s, const std::vector<std::string>& state, const std::string& xt) {
        auto part = [&](const std::string& v, int k) { return slice(s, v, -1, k * units, units); };
        auto fn = [&](const std::string& v, std::string_view a) { return activate(s, v, a, t); };
        const std::string& h = state[0];
        if (gates == 4) {
            const auto z = s.op("Add", {xt, s.op("MatMul", {h, U})});
            const auto i = fn(part(z, 0), rec), f = fn(part(z, 1), rec), o = fn(part(z, 3), rec);
            const auto cell = s.op("Add", {s.op("Mul", {f, state[1]}), s.op("Mul", {i, fn(part(z, 2), act)})});
            const auto hn = s.op("Mul", {o, fn(cell, act)});
            return std::pair{std::vector<std::string>{hn, cell}, hn};
        }
        std::string hn;
        if (gates == 3) {
            std::string z, r, hh;
            if (reset_after) {
                std::string hu = s.op("MatMul", {h, U});
                if (!recurrent_bias.empty()) hu = s.op("Add", {hu, recurrent_bias});
                z = fn(s.op("Add", {part(xt, 0), part(hu, 0)}), rec);
                r = fn(s.op("Add", {part(xt, 1), part(hu, 1)}), rec);
                hh = fn(s.op("Add", {part(xt, 2), s.op("Mul", {r, part(hu, 2)})}), act);
            } else {
                z = fn(s.op("Add", {part(xt, 0), s.op("MatMul", {h, part(U, 0)})}), rec);
                r = fn(s.op("Add", {part(xt, 1), s.op("MatMul", {h, part(U, 1)})}), rec);
                hh = fn(s.op("Add", {part(xt, 2), s.op("MatMul", {s.op("Mul", {r, h}), part(U, 2)})}), act);
            }
            hn = s.op("Add", {s.op("Mul", {z, h}), s.op("Mul", {s.op("Sub", {s.scalar(1.0, t), z}), hh})});
        } else {
            hn = fn(s.op("Add", {xt, s.op("MatMul", {h, U})}), act);
        }
        return std::pair{std::vector<std::string>{hn}, hn};
    };
    auto [final_states, sequence] = scan(g, xw, c.type, {batch, gates * units}, states, step);
    return seq ? sequence : final_states[0];
}

/// LSTM (4 gates), GRU (3) and SimpleRNN (1): ONNX's LSTM, GRU and RNN
/// where Keras' activations are ones they take, the unrolled cell otherwise. go_backwards reverses
/// the input, and the output sequence stays in processing order, as Keras leaves it.
inline std::string recurrent(call& c, int gates) {
    graph& g = c.g;
    std::string x = c.in[0];
    if (c.flag("go_backwards")) x = reverse(g, x, 1);
    const std::int64_t units = c.integer("units");
    const std::string act = rnn_activation(c.str("activation")), rec = gates == 1 ? act : rnn_activation(c.str("recurrent_activation"));
    if (act.empty() || rec.empty()) return unrolled(c, x, gates);
    const bool seq = c.flag("return_sequences"), reset_after = gates == 3 && c.flag("reset_after");
    // Keras' gate order to ONNX's: LSTM i,f,c,o -> i,o,f,c; GRU z,r,h is ONNX's z,r,h.
    const std::vector<int> order = gates == 4 ? std::vector<int>{0, 3, 1, 2} : gates == 3 ? std::vector<int>{0, 1, 2} : std::vector<int>{0};
    const tensor W = onnx_matrix(reorder_gates(*c.weight("kernel"), units, order));
    const tensor R = onnx_matrix(reorder_gates(*c.weight("recurrent_kernel"), units, order));
    std::vector<std::string> in{x, c.init(W, "W"), c.init(R, "R")};
    if (const tensor* b = c.weight("bias")) {
        tensor B({1, 2 * gates * units}, c.type);
        if (reset_after) {
            B.data = b->data;  // Keras' (2, 3u): input bias then recurrent bias, ONNX's Wb then Rb
        } else {
            const tensor r = reorder_gates(reshaped(*b, {1, gates * units}), units, order);
            std::copy(r.data.begin(), r.data.end(), B.data.begin());
        }
        in.push_back(c.init(B, "B"));
    }
    // Layout 0 (time first): ONNX Runtime's CPU kernels take no other.
    in[0] = g.op("Transpose", {x}, {{"perm", dims_t{1, 0, 2}}});
    std::vector<attr> attrs{{"hidden_size", units}};
    if (gates == 4) attrs.push_back({"activations", std::vector<std::string>{rec, act, act}});
    else if (gates == 3) attrs.push_back({"activations", std::vector<std::string>{rec, act}});
    else attrs.push_back({"activations", std::vector<std::string>{act}});
    if (gates == 3) attrs.push_back({"linear_before_reset", reset_after ? 1 : 0});
    const auto outs = g.node(gates == 4 ? "LSTM" : gates == 3 ? "GRU" : "RNN", in, attrs, 2);
    if (seq) return g.op("Transpose", {g.op("Squeeze", {outs[0], g.ints({1})})}, {{"perm", dims_t{1, 0, 2}}});  // Y: (T, 1, B, U)
    return g.op("Squeeze", {outs[1], g.ints({0})});                                                             // Y_h: (1, B, U)
}

/// Bidirectional(LSTM) with Keras' LSTM defaults: one bidirectional ONNX LSTM. The backward
/// direction's outputs come aligned with the input, as Keras re-aligns them; the last outputs are
/// the final states.
inline std::string bidirectional(call& c) {
    graph& g = c.g;
    const std::int64_t units = c.integer("units"), in_size = c.in_dims[0][2];
    const std::vector<int> order{0, 3, 1, 2};
    tensor W({2, 4 * units, in_size}, c.type), R({2, 4 * units, units}, c.type), B({2, 8 * units}, c.type);
    int dir = 0;
    for (const char* prefix : {"forward_", "backward_"}) {
        const std::string p = prefix;
        const tensor w = onnx_matrix(reorder_gates(*c.weight(p + "kernel"), units, order));
        const tensor r = onnx_matrix(reorder_gates(*c.weight(p + "recurrent_kernel"), units, order));
        const tensor b = reorder_gates(reshaped(*c.weight(p + "bias"), {1, 4 * units}), units, order);
        std::copy(w.data.begin(), w.data.end(), W.data.begin() + dir * w.size());
        std::copy(r.data.begin(), r.data.end(), R.data.begin() + dir * r.size());
        std::copy(b.data.begin(), b.data.end(), B.data.begin() + dir * 8 * units);
        ++dir;
    }
    const auto x = g.op("Transpose", {c.in[0]}, {{"perm", dims_t{1, 0, 2}}});  // time first
    const auto outs = g.node("LSTM", {x, c.init(W, "W"), c.init(R, "R"), c.init(B, "B")}, {{"hidden_size", units}, {"direction", "bidirectional"}}, 2);
    std::string f, b;
    if (c.flag("return_sequences")) {                                                 // Y: (T, 2, B, U)
        const auto y = g.op("Transpose", {outs[0]}, {{"perm", dims_t{1, 2, 0, 3}}});  // (2, B, T, U)
        f = g.op("Gather", {y, g.int_scalar(0)}, {{"axis", 0}});
        b = g.op("Gather", {y, g.int_scalar(1)}, {{"axis", 0}});
    } else {  // Y_h: (2, B, U)
        f = g.op("Gather", {outs[1], g.int_scalar(0)}, {{"axis", 0}});
        b = g.op("Gather", {outs[1], g.int_scalar(1)}, {{"axis", 0}});
    }
    const std::string_view mode = c.none("merge_mode") ? std::string_view() : c.str("merge_mode");
    if (mode == "concat") return g.op("Concat", {f, b}, {{"axis", -1}});
    if (mode == "sum") return g.op("Add", {f, b});
    if (mode == "mul") return g.op("Mul", {f, b});
    if (mode == "ave") return g.op("Div", {g.op("Add", {f, b}), c.scalar(2.0)});
    return f;  // merge_mode=None: the node's one output is the forward direction
}

/// ConvLSTM: Keras' cell over time, as a Scan of ONNX convolutions; the input conv has the layer's
/// strides, padding and dilation, the recurrent conv "same" with stride 1 and no dilation.
template <int N>
std::string conv_lstm(call& c) {
    graph& g = c.g;
    const bool first = c.channels_first();
    std::string x = c.in[0];
    if (c.flag("go_backwards")) x = reverse(g, x, 1);
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N), d = c.ints("dilation_rate", N), one(N, 1);
    const std::string_view act = c.str("activation"), rec = c.str("recurrent_activation");
    const bool seq = c.flag("return_sequences");
    const std::int64_t filters = c.integer("filters"), softmax_axis = first ? -1 : 1;
    dims_t step_dims{c.in_dims[0][0]};  // one step's Keras dims: the input without its time axis
    step_dims.insert(step_dims.end(), c.in_dims[0].begin() + 2, c.in_dims[0].end());
    const auto W = c.init(keras_kernel(*c.weight("kernel")), "kernel"), U = c.init(keras_kernel(*c.weight("recurrent_kernel")), "recurrent_kernel");
    const tensor* b = c.weight("bias");
    const auto bias = b ? c.init(*b, "bias") : std::string();
    const dims_t pads = tf_pads(spatial(step_dims, first), k, s, d, c.str("padding"));
    dims_t out_step{c.out[0]};
    out_step.insert(out_step.end(), c.out.begin() + (seq ? 2 : 1), c.out.end());
    const dims_t grid = spatial(out_step, first);
    const dims_t rpads = tf_pads(grid, k, one, one, "same");
    dims_t state_dims{c.out[0], filters};
    state_dims.insert(state_dims.end(), grid.begin(), grid.end());
    const auto zeros = c.init(tensor(state_dims, c.type), "h0");
    const dtype t = c.type;
    auto step = [&](graph& sg, const std::vector<std::string>& state, const std::string& x_t) {
        auto fn = [&](const std::string& v, std::string_view a) { return activate(sg, v, a, t, softmax_axis); };
        const auto xt = to_cf(sg, x_t, N + 2, first);
        const auto z = sg.op("Add", {conv_cf(sg, xt, W, bias, k, s, d, pads, 1), conv_cf(sg, state[0], U, "", k, one, one, rpads, 1)});
        auto gate = [&](int q) { return slice(sg, z, 1, q * filters, filters); };
        const auto i = fn(gate(0), rec), f = fn(gate(1), rec), o = fn(gate(3), rec);
        const auto cell = sg.op("Add", {sg.op("Mul", {f, state[1]}), sg.op("Mul", {i, fn(gate(2), act)})});
        const auto h = sg.op("Mul", {o, fn(cell, act)});
        return std::pair{std::vector<std::string>{h, cell}, from_cf(sg, h, N + 2, first)};
    };
    auto [final_states, sequence] = scan(g, x, c.type, step_dims, {{"h", t, state_dims, zeros}, {"c", t, state_dims, zeros}}, step);
    return seq ? sequence : from_cf(g, final_states[0], N + 2, first);
}

/// The permutation that moves `axis` to position `to`, and its inverse.
inline dims_t move_axis(int rank, int axis, int to) {
    dims_t p;
    for (int i = 0; i < rank; ++i)
        if (i != axis) p.push_back(i);
    p.insert(p.begin() + (to < 0 ? rank + to : to), axis);
    return p;
}
inline dims_t inverse(const dims_t& p) {
    dims_t q(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) q[static_cast<std::size_t>(p[i])] = static_cast<std::int64_t>(i);
    return q;
}
inline std::string transpose(graph& g, const std::string& x, const dims_t& p) {
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<std::int64_t>(i)) return g.op("Transpose", {x}, {{"perm", p}});
    return x;
}

inline std::string batch_norm(call& c) {
    const int axis = layers::normal_axis(c.integer("axis"), c.rank());
    const dims_t p = move_axis(c.rank(), axis, 1);
    const std::int64_t channels = c.in_dims[0][static_cast<std::size_t>(axis)];
    tensor ones({channels}, c.type), zeros({channels}, c.type);
    std::fill(ones.data.begin(), ones.data.end(), 1.0);
    const tensor* gamma = c.weight("gamma");
    const tensor* beta = c.weight("beta");
    // ONNX's epsilon is a float32 attribute: what rounding it loses goes into the variance, so that
    // variance + epsilon is Keras' in float64 too.
    const double eps = c.real("epsilon"), eps32 = static_cast<float>(eps);
    tensor variance = *c.weight("moving_variance");
    if (c.type == dtype::float64)
        for (auto& v : variance.data) v += eps - eps32;
    const auto y = c.g.op("BatchNormalization",
                          {transpose(c.g, c.in[0], p), c.init(gamma ? *gamma : ones, "gamma"), c.init(beta ? *beta : zeros, "beta"),
                           c.init(*c.weight("moving_mean"), "mean"), c.init(variance, "variance")},
                          {{"epsilon", eps}});
    return transpose(c.g, y, inverse(p));
}

/// Keras' LayerNormalization over one axis: ONNX's normalises from its axis to the last, so the
/// axis is moved last first.
inline std::string layer_norm(call& c) {
    const int axis = layers::normal_axis(c.integer("axis"), c.rank());
    const dims_t p = move_axis(c.rank(), axis, -1);
    const std::int64_t channels = c.in_dims[0][static_cast<std::size_t>(axis)];
    tensor ones({channels}, c.type);
    std::fill(ones.data.begin(), ones.data.end(), 1.0);
    const auto x = transpose(c.g, c.in[0], p);
    const auto gamma = c.init(c.weight("gamma") ? *c.weight("gamma") : ones, "gamma");
    const tensor* beta = c.weight("beta");
    std::string y;
    if (c.type != dtype::float64) {
        std::vector<std::string> in{x, gamma};
        if (beta) in.push_back(c.init(*beta, "beta"));
        y = c.g.op("LayerNormalization", in, {{"axis", -1}, {"epsilon", c.real("epsilon")}});
    } else {  // epsilon is a float32 attribute: in float64, the formula with a float64 epsilon
        const auto mean = c.g.op("ReduceMean", {x}, {{"axes", dims_t{-1}}, {"keepdims", 1}});
        const auto d = c.g.op("Sub", {x, mean});
        const auto var = c.g.op("ReduceMean", {c.g.op("Mul", {d, d})}, {{"axes", dims_t{-1}}, {"keepdims", 1}});
        y = c.g.op("Mul", {c.g.op("Div", {d, c.g.op("Sqrt", {c.g.op("Add", {var, c.scalar(c.real("epsilon"))})})}), gamma});
        if (beta) y = c.g.op("Add", {y, c.init(*beta, "beta")});
    }
    return transpose(c.g, y, inverse(p));
}

/// Keras 3's ReLU(max_value, negative_slope, threshold): relu(x), or Where(x > threshold, x, 0)
/// for a threshold (NaN and -inf give 0, as in Keras 3), clipped to [0, max_value], minus
/// negative_slope * relu(threshold - x).
inline std::string relu(call& c) {
    graph& g = c.g;
    const auto& x = c.in[0];
    const double slope = c.real("negative_slope"), threshold = c.real("threshold");
    const bool clip = !c.none("max_value");
    if (!clip && threshold == 0.0) {
        if (slope == 0.0) return g.op("Relu", {x});
        return c.type == dtype::float64 ? g.op("PRelu", {x, c.scalar(slope)}) : g.op("LeakyRelu", {x}, {{"alpha", slope}});
    }
    std::string y = threshold == 0.0 ? g.op("Relu", {x}) : g.op("Where", {g.op("Greater", {x, c.scalar(threshold)}), x, c.scalar(0.0)});
    if (clip) y = g.op("Clip", {y, c.scalar(0.0), c.scalar(c.real("max_value"))});
    if (slope != 0.0) y = g.op("Sub", {y, g.op("Mul", {c.scalar(slope), g.op("Relu", {g.op("Sub", {c.scalar(threshold), x})})})});
    return y;
}

/// Keras' Flatten: a channels_first input is moved to channels_last before flattening.
inline std::string flatten(call& c) {
    const std::string x = c.channels_first() && c.rank() > 2 ? from_cf(c.g, c.in[0], c.rank(), false) : c.in[0];
    return c.g.op("Reshape", {x, c.g.ints(c.out)});
}

/// Pads (+1) or crops (-1) the given axes by (before, after) amounts.
inline std::string border(graph& g, const std::string& x, int rank, const dims_t& axes, const dims_t& before, const dims_t& after, int sign,
                          const std::string& fill = "") {
    if (sign > 0) {
        dims_t pads(2 * static_cast<std::size_t>(rank), 0);
        for (std::size_t i = 0; i < axes.size(); ++i) {
            pads[static_cast<std::size_t>(axes[i])] = before[i];
            pads[static_cast<std::size_t>(rank + axes[i])] = after[i];
        }
        std::vector<std::string> in{x, g.ints(pads)};
        if (!fill.empty()) in.push_back(fill);
        return g.op("Pad", in, {{"mode", "constant"}});
    }
    dims_t ends;
    for (auto a : after) ends.push_back(a == 0 ? std::numeric_limits<std::int64_t>::max() : -a);
    return g.op("Slice", {x, g.ints(before), g.ints(ends), g.ints(axes)});
}

/// Cropping and ZeroPadding: (before, after) per spatial axis.
template <int N>
std::string keras_border(call& c, int sign) {
    const bool first = N > 1 && c.channels_first();
    const dims_t amounts = c.ints(sign > 0 ? "padding" : "cropping", 2 * N);
    dims_t axes, before, after;
    for (int i = 0; i < N; ++i) {
        axes.push_back(first ? 2 + i : 1 + i);
        before.push_back(amounts[static_cast<std::size_t>(2 * i)]);
        after.push_back(amounts[static_cast<std::size_t>(2 * i + 1)]);
    }
    return border(c.g, c.in[0], c.rank(), axes, before, after, sign);
}

/// The adapters' pad and crop: (before, after) for every non-batch axis.
inline std::string adapter_border(call& c, int sign) {
    const auto& amounts = std::get<ints>(c.param(sign > 0 ? "padding" : "cropping"));
    dims_t axes, before, after;
    for (int d = 1; d < c.rank(); ++d) {
        axes.push_back(d);
        before.push_back(amounts[2 * (d - 1)]);
        after.push_back(amounts[2 * (d - 1) + 1]);
    }
    return border(c.g, c.in[0], c.rank(), axes, before, after, sign, sign > 0 ? c.scalar(c.real("constant_values")) : "");
}

/// UpSampling through Resize: nearest with asymmetric coordinates and floor (which repeats each
/// element, as Keras does for an integer factor), and UpSampling2D's bilinear with TF's half-pixel
/// centres.
template <int N>
std::string upsampling(call& c) {
    const bool first = N > 1 && c.channels_first();
    const dims_t size = c.ints("size", N);
    std::vector<double> scales{1.0, 1.0};
    for (auto s : size) scales.push_back(static_cast<double>(s));
    const bool linear = N == 2 && c.str("interpolation") == "bilinear";
    const std::vector<attr> attrs = linear
                                        ? std::vector<attr>{{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}}
                                        : std::vector<attr>{{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}};
    const auto y = c.g.op("Resize", {to_cf(c.g, c.in[0], N + 2, first), "", c.g.floats(scales)}, attrs);
    return from_cf(c.g, y, N + 2, first);
}

/// LocallyConnected: the patches by one strided Slice per window offset, stacked in Keras' flatten
/// order ((k..., C) channels_last, (C, k...) channels_first), then each position's kernel by a
/// batched MatMul over positions. Keras adds the bias (out..., F) with backend.bias_add, which for
/// channels_first reshapes it (no transpose) to (F, out...).
template <int N>
std::string local(call& c) {
    graph& g = c.g;
    const bool first = c.channels_first();
    const dims_t k = c.ints("kernel_size", N), s = c.ints("strides", N);
    const std::int64_t channels = first ? c.in_dims[0][1] : c.in_dims[0].back(), filters = c.integer("filters"), batch = c.in_dims[0][0];
    std::int64_t window = 1;
    for (auto v : k) window *= v;
    const dims_t grid = spatial(c.out, first);
    const auto x = to_cf(g, c.in[0], N + 2, first);  // (B, C, s...)
    dims_t axes, steps;
    for (int i = 0; i < N; ++i) axes.push_back(2 + i), steps.push_back(s[static_cast<std::size_t>(i)]);
    std::vector<std::string> taps;
    for (std::int64_t j = 0; j < window; ++j) {  // offsets in row-major order of the window
        dims_t starts(N), ends(N);
        std::int64_t rest = j;
        for (int i = N - 1; i >= 0; --i) {
            const auto u = static_cast<std::size_t>(i);
            starts[u] = rest % k[u];
            rest /= k[u];
            ends[u] = starts[u] + (grid[u] - 1) * s[u] + 1;
        }
        const auto tap = g.op("Slice", {x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)});  // (B, C, out...)
        taps.push_back(g.op("Unsqueeze", {tap, g.ints({first ? 2 : 1})}));
    }
    // (B, C, K, out...) for channels_first, (B, K, C, out...) for channels_last: Keras' order.
    const auto patches = taps.size() == 1 ? taps[0] : g.op("Concat", taps, {{"axis", first ? 2 : 1}});
    const dims_t& out = grid;
    std::int64_t positions = 1;
    for (auto o : out) positions *= o;
    auto p = g.op("Transpose", {g.op("Reshape", {patches, g.ints({batch, channels * window, positions})})}, {{"perm", dims_t{2, 0, 1}}});
    auto y = g.op("Transpose", {g.op("MatMul", {p, c.init(*c.weight("kernel"), "kernel")})}, {{"perm", dims_t{1, 0, 2}}});  // (B, P, F)
    dims_t shape{batch};
    shape.insert(shape.end(), out.begin(), out.end());
    shape.push_back(filters);
    y = g.op("Reshape", {y, g.ints(shape)});
    if (first) y = to_cf(g, y, N + 2, false);
    if (const tensor* b = c.weight("bias")) {
        dims_t bs{1};
        if (first) bs.push_back(filters);
        bs.insert(bs.end(), out.begin(), out.end());
        if (!first) bs.push_back(filters);
        y = g.op("Add", {y, c.init(reshaped(*b, bs), "bias")});
    }
    return activate(g, y, c.str("activation"), c.type);
}

/// Keras' Dot over the last axes of two rank-2 or rank-3 tensors, with optional L2 normalisation
/// (tf.math.l2_normalize: x / sqrt(max(sum(x^2), 1e-12))).
inline std::string dot(call& c) {
    graph& g = c.g;
    std::string a = c.in[0], b = c.in[1];
    if (c.flag("normalize")) {
        auto unit = [&](const std::string& x) {
            const auto ss = g.op("ReduceSumSquare", {x}, {{"axes", dims_t{-1}}, {"keepdims", 1}});
            return g.op("Div", {x, g.op("Sqrt", {g.op("Max", {ss, c.scalar(1e-12)})})});
        };
        a = unit(a), b = unit(b);
    }
    if (c.rank() == 2) return g.op("ReduceSum", {g.op("Mul", {a, b}), g.ints({1})}, {{"keepdims", 1}});
    return g.op("MatMul", {a, g.op("Transpose", {b}, {{"perm", dims_t{0, 2, 1}}})});
}

/// Keras folds its merges left to right.
inline std::string fold(call& c, std::string_view op) {
    std::string y = c.in[0];
    for (std::size_t i = 1; i < c.in.size(); ++i) y = c.g.op(op, {y, c.in[i]});
    return y;
}

/// CustomInjectLayer: every stride-th element (flat order) set to NaN or +-Inf.
inline std::string inject(call& c) {
    const auto v = c.str("value");
    const double fill = v == "nan" ? std::numeric_limits<double>::quiet_NaN() : (v == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
    const std::int64_t stride = std::max<std::int64_t>(1, c.integer("stride"));
    std::vector<bool> mask(static_cast<std::size_t>(tensor::count(c.out)), false);
    for (std::size_t i = 0; i < mask.size(); i += static_cast<std::size_t>(stride)) mask[i] = true;
    return c.g.op("Where", {c.g.bools(c.out, mask), c.scalar(fill), c.in[0]});
}

}  // namespace lower

/// The ONNX lowering of each layer type of the default list (core/kernels.hpp finds them by type).
struct kernels {
    // Core and adapters.
    static std::string run(layers::dense, call& c) {
        std::string y = c.g.op("MatMul", {c.in[0], c.init(*c.weight("kernel"), "kernel")});
        if (const tensor* b = c.weight("bias")) y = c.g.op("Add", {y, c.init(*b, "bias")});
        return lower::activate(c.g, y, c.str("activation"), c.type);
    }
    static std::string run(layers::activation, call& c) { return lower::activate(c.g, c.in[0], c.str("activation"), c.type); }
    static std::string run(layers::custom_scale, call& c) { return c.g.op("Add", {c.in[0], c.g.op("Mul", {c.in[1], c.scalar(c.real("scale"))})}); }
    static std::string run(layers::reshape, call& c) { return c.g.op("Reshape", {c.in[0], c.g.ints(c.out)}); }
    static std::string run(layers::expand_dims, call& c) { return c.g.op("Unsqueeze", {c.in[0], c.g.ints({c.integer("axis")})}); }
    static std::string run(layers::drop_dim, call& c) { return c.g.op("Gather", {c.in[0], c.g.int_scalar(0)}, {{"axis", c.integer("axis")}}); }
    static std::string run(layers::pad, call& c) { return lower::adapter_border(c, +1); }
    static std::string run(layers::crop, call& c) { return lower::adapter_border(c, -1); }
    static std::string run(layers::cast, call& c) { return c.g.op("Identity", {c.in[0]}); }  // the exporter casts the input
    static std::string run(layers::inject, call& c) { return lower::inject(c); }
    // Element-wise: ScaleShift's product is rounded to the dtype before the shift is added.
    static std::string run(layers::absolute, call& c) { return c.g.op("Abs", {c.in[0]}); }
    static std::string run(layers::square, call& c) { return c.g.op("Mul", {c.in[0], c.in[0]}); }
    static std::string run(layers::stop_gradient, call& c) { return c.g.op("Identity", {c.in[0]}); }
    static std::string run(layers::scale_shift, call& c) {
        std::string y = c.g.op("Mul", {c.in[0], c.scalar(c.real("scale"))});
        if (c.type != c.n.type)  // a bfloat16 node computes in float32: round its product as a bfloat16 Mul would
            y = c.g.op("Cast", {c.g.op("Cast", {y}, {{"to", elem_type(c.n.type)}})}, {{"to", elem_type(c.type)}});
        return c.g.op("Add", {y, c.scalar(c.real("shift"))});
    }
    // Regularisation: the identity at inference.
    template <class Tag>
    static std::string run(layers::regularization<Tag>, call& c) {
        return c.g.op("Identity", {c.in[0]});
    }
    // Convolutions and pools.
    template <int N>
    static std::string run(layers::conv<N>, call& c) {
        return lower::conv<N>(c);
    }
    template <int N>
    static std::string run(layers::separable_conv<N>, call& c) {
        return lower::separable_conv<N>(c);
    }
    template <int N>
    static std::string run(layers::depthwise_conv<N>, call& c) {
        return lower::depthwise_conv<N>(c);
    }
    template <int N>
    static std::string run(layers::conv_transpose<N>, call& c) {
        return lower::conv_transpose<N>(c);
    }
    template <int N, layers::pool_kind K>
    static std::string run(layers::pooling<N, K>, call& c) {
        return lower::pool<N, K == layers::pool_kind::max>(c);
    }
    template <int N, layers::pool_kind K>
    static std::string run(layers::global_pooling<N, K>, call& c) {
        return lower::global_pool<N, K == layers::pool_kind::max>(c);
    }
    // Recurrent.
    template <layers::cell C>
    static std::string run(layers::recurrent<C>, call& c) {
        return lower::recurrent(c, layers::recurrent<C>::gates);
    }
    static std::string run(layers::bidirectional, call& c) { return lower::bidirectional(c); }
    static std::string run(layers::time_distributed, call& c) { return c.g.op("Relu", {c.in[0]}); }
    template <int N>
    static std::string run(layers::conv_lstm<N>, call& c) {
        return lower::conv_lstm<N>(c);
    }
    // Normalisation.
    static std::string run(layers::batch_normalization, call& c) { return lower::batch_norm(c); }
    static std::string run(layers::layer_normalization, call& c) { return lower::layer_norm(c); }
    // Activations.
    static std::string run(layers::relu, call& c) { return lower::relu(c); }
    static std::string run(layers::softmax, call& c) { return c.g.op("Softmax", {c.in[0]}, {{"axis", layers::normal_axis(c.integer("axis"), c.rank())}}); }
    static std::string run(layers::leaky_relu, call& c) {
        if (c.type == dtype::float64) return c.g.op("PRelu", {c.in[0], c.scalar(c.real("alpha"))});
        return c.g.op("LeakyRelu", {c.in[0]}, {{"alpha", c.real("alpha")}});
    }
    static std::string run(layers::prelu, call& c) { return c.g.op("PRelu", {c.in[0], c.init(*c.weight("alpha"), "alpha")}); }
    static std::string run(layers::elu, call& c) {
        const double alpha = c.real("alpha");
        if (c.type != dtype::float64 || alpha == 1.0) return c.g.op("Elu", {c.in[0]}, {{"alpha", alpha}});
        const auto neg = c.g.op("Elu", {c.g.op("Min", {c.in[0], c.scalar(0.0)})}, {{"alpha", 1.0}});
        return c.g.op("Add", {c.g.op("Relu", {c.in[0]}), c.g.op("Mul", {c.scalar(alpha), neg})});
    }
    // Keras: x * cast(x > theta), so a NaN stays NaN. ONNX's ThresholdedRelu (x or 0) makes it 0.
    static std::string run(layers::thresholded_relu, call& c) {
        const auto above = c.g.op("Greater", {c.in[0], c.scalar(c.real("theta"))});
        return c.g.op("Mul", {c.in[0], c.g.op("Cast", {above}, {{"to", elem_type(c.type)}})});
    }
    // Reshaping.
    static std::string run(layers::flatten, call& c) { return lower::flatten(c); }
    static std::string run(layers::repeat_vector, call& c) {
        return c.g.op("Tile", {c.g.op("Unsqueeze", {c.in[0], c.g.ints({1})}), c.g.ints({1, c.integer("n"), 1})});
    }
    static std::string run(layers::permute, call& c) {
        const auto& d = std::get<ints>(c.param("dims"));
        return c.g.op("Transpose", {c.in[0]}, {{"perm", dims_t{0, d[0], d[1]}}});
    }
    template <int N, int Sign, const std::string_view* Names, const char* Param>
    static std::string run(layers::border<N, Sign, Names, Param>, call& c) {
        return lower::keras_border<N>(c, Sign);
    }
    template <int N>
    static std::string run(layers::upsampling<N>, call& c) {
        return lower::upsampling<N>(c);
    }
    // Merges.
    static std::string run(layers::concatenate, call& c) { return c.g.op("Concat", c.in, {{"axis", layers::normal_axis(c.integer("axis"), c.rank())}}); }
    static std::string run(layers::add, call& c) { return lower::fold(c, "Add"); }
    static std::string run(layers::subtract, call& c) { return c.g.op("Sub", {c.in[0], c.in[1]}); }
    static std::string run(layers::multiply, call& c) { return lower::fold(c, "Mul"); }
    static std::string run(layers::average, call& c) { return c.g.op("Div", {lower::fold(c, "Add"), c.scalar(static_cast<double>(c.in.size()))}); }
    static std::string run(layers::maximum, call& c) { return lower::fold(c, "Max"); }
    static std::string run(layers::minimum, call& c) { return lower::fold(c, "Min"); }
    static std::string run(layers::dot, call& c) { return lower::dot(c); }
    // Locally connected.
    template <int N>
    static std::string run(layers::locally_connected<N>, call& c) {
        return lower::local<N>(c);
    }
};

/// The lowerings of the default registry, by layer class name.
inline std::map<std::string, lowering, std::less<>> builtin_lowerings() { return kernel_table<kernels, lowering>(default_layers{}); }

/// The classes of `reg` (those with inputs) that have no lowering to ONNX, in the registry's order.
inline std::vector<std::string_view> lacks(const registry& reg) {
    static const auto table = builtin_lowerings();
    std::vector<std::string_view> out;
    for (const auto& L : reg)
        if (L.arity.max != 0 && table.find(L.name) == table.end()) out.push_back(L.name);
    return out;
}

}  // namespace memo::onnx
