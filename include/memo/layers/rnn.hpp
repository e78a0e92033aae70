#pragma once
// LRnn: LSTM, GRU, SimpleRNN, Bidirectional(LSTM), TimeDistributed(ReLU), ConvLSTM1D/2D/3D.
//
// A node has one output tensor. With return_state the extra state tensors Keras returns are not
// exposed; with Bidirectional merge_mode=None the node's output is the forward direction.
#include "conv.hpp"

namespace memo::layers {

enum class cell { lstm, gru, simple };
inline constexpr std::string_view cell_names[] = {"LSTM", "GRU", "SimpleRNN"};

/// The recurrent flags every RNN layer ends with.
inline param_builder& recurrent_tail(param_builder& b, bool unroll) {
    b.add("dropout", real_in(0, 1), role::inert, 0.0);
    b.add("recurrent_dropout", real_in(0, 1), role::inert, 0.0);
    b.add("return_sequences", bools(), role::shape, false);
    b.add("return_state", bools(), role::mode, false);
    b.add("go_backwards", bools(), role::mode, false);
    b.add("stateful", bools(), role::mode, false);
    if (unroll) b.add("unroll", bools(), role::mode, false);
    return b;
}

/// A recurrence over the time axis (axis 1) rounds its state once a step, T steps: oracle/
/// rounding.hpp allows 2 units of roundoff of its output's scale a step (its 8 units of T / 4).
inline rounding_scale recurrence_rounding(inputs in) {
    return {0.0, 0.0, in.empty() || in[0].rank() < 2 ? 0.0 : static_cast<double>(std::max<int64_t>(in[0][1], 1)) / 4.0};
}

/// A recurrent cell's kernel (in, gates * units), recurrent kernel (units, gates * units) and bias
/// (gates * units, or (2, gates * units) for GRU's reset_after), names starting with `prefix`.
inline void cell_weights(const node_view& n, weight_list& w, std::string prefix, int64_t gates, int64_t units, bool bias, bool forget_bias, bool reset_after) {
    const int64_t in = n.in[0].back();
    w.add(prefix + "kernel", {in, gates * units}, n.text("kernel_initializer", "glorot_uniform"));
    w.add(prefix + "recurrent_kernel", {units, gates * units}, n.text("recurrent_initializer", "Orthogonal"));
    if (!bias) return;
    if (reset_after) w.add(prefix + "bias", {2, gates * units}, n.text("bias_initializer", "Zeros"));
    else w.add(prefix + "bias", {gates * units}, n.text("bias_initializer", "Zeros"));
    if (forget_bias) w.forget_bias_ones(units);
}

/// steps * gates * units * (features + units), `directions` times.
inline int64_t recurrence_flops(const node_view& n, int64_t gates, int64_t directions = 1) {
    const shape& in = n.in[0];
    const int64_t u = n.integer("units", 1), steps = in.rank() >= 3 ? in[1] : 1;
    return directions * steps * gates * u * (in.back() + u);
}

template <cell C>
struct recurrent : layer_kind<family::rnn, rank_set::of(3)> {
    static constexpr std::string_view name = cell_names[static_cast<int>(C)];
    static std::span<const param> params() {
        return built_once([] {
            param_builder b;
            b.add("units", in_range(1, 4096, 32), role::shape, int64_t{8});
            b.add("activation", activations(C == cell::lstm), role::mode, "tanh");
            if (C != cell::simple) b.add("recurrent_activation", activations(C == cell::lstm), role::mode, "sigmoid");
            b.add("use_bias", bools(), role::mode, true);
            b.add("kernel_initializer", initializers(), role::init, "glorot_uniform");
            b.add("recurrent_initializer", initializers(), role::init, "Orthogonal");
            b.add("bias_initializer", initializers(), role::init, "Zeros");
            if (C == cell::lstm) b.add("unit_forget_bias", bools(), role::init, true);
            b.training_only({"kernel", "recurrent", "bias"});
            recurrent_tail(b, true);
            if (C == cell::gru) b.add("reset_after", bools(), role::mode, true);
            return b;
        });
    }
    static rounding_scale rounds_at(inputs in, args) { return recurrence_rounding(in); }
    static expected<shape> infer(inputs in, args p) {
        const int64_t units = as_int(value_of(params(), p, "units"));
        if (as_bool(value_of(params(), p, "return_sequences"))) return shape{in[0][0], in[0][1], units};
        return shape{in[0][0], units};
    }
    static constexpr int64_t gates = C == cell::lstm ? 4 : C == cell::gru ? 3 : 1;
    static void weights(const node_view& n, weight_list& w) {
        cell_weights(n, w, "", gates, n.integer("units", 1), n.flag("use_bias", true), C == cell::lstm && n.flag("unit_forget_bias", true),
                     C == cell::gru && n.flag("reset_after", true));
    }
    static int64_t flops(const node_view& n) { return recurrence_flops(n, gates); }
};

using lstm = recurrent<cell::lstm>;
using gru = recurrent<cell::gru>;
using simple_rnn = recurrent<cell::simple>;

/// Bidirectional(LSTM): the wrapper's merge_mode and the shape-deciding settings of its LSTM.
struct bidirectional : layer_kind<family::rnn, rank_set::of(3)> {
    static constexpr std::string_view name = "Bidirectional";
    enum : std::size_t { merge_mode, units, return_sequences };
    static std::span<const param> params() {
        return built_once([] {
            return param_builder{}
                .add("merge_mode", element_of({"sum", "mul", "concat", "ave", none}), role::shape, "concat")
                .add("units", in_range(1, 4096, 32), role::shape, int64_t{8})
                .add("return_sequences", bools(), role::shape, false);
        });
    }
    static rounding_scale rounds_at(inputs in, args) { return recurrence_rounding(in); }
    static expected<shape> infer(inputs in, args p) {
        const int64_t u = as_int(p[units]) * (as_str(p[merge_mode]) == "concat" ? 2 : 1);
        if (as_bool(p[return_sequences])) return shape{in[0][0], in[0][1], u};
        return shape{in[0][0], u};
    }
    /// forward_ and backward_ LSTM weights, with Keras' defaults (use_bias, unit_forget_bias)
    static void weights(const node_view& n, weight_list& w) {
        cell_weights(n, w, "forward_", 4, n.integer("units", 1), true, true, false);
        cell_weights(n, w, "backward_", 4, n.integer("units", 1), true, true, false);
    }
    static int64_t flops(const node_view& n) { return recurrence_flops(n, 4, 2); }
};

/// TimeDistributed(ReLU): ReLU applied to every time step; the shape is unchanged.
struct time_distributed : layer_kind<family::rnn, rank_set::between(3, 6)> {
    static constexpr std::string_view name = "TimeDistributed";
    static std::span<const param> params() { return {}; }
    static expected<shape> infer(inputs in, args) { return in[0]; }
};

inline constexpr std::string_view conv_lstm_names[] = {"", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"};

/// ConvLSTM1D/2D/3D: input (batch, time, spatial..., channels), or channels before spatial.
template <int N>
struct conv_lstm : layer_kind<family::rnn, rank_set::of(N + 3)> {
    static constexpr std::string_view name = conv_lstm_names[N];
    static std::span<const param> params() {
        return built_once([] {
            // A convolution's settings (a ConvLSTM's window is one), then the recurrence's.
            param_builder b = conv_head(N, conv_kind::plain, false);
            b.add("activation", activations(), role::mode, "tanh");
            b.add("recurrent_activation", activations(), role::mode, "hard_sigmoid");
            b.add("use_bias", bools(), role::mode, true);
            b.add("kernel_initializer", initializers(), role::init, "glorot_uniform");
            b.add("recurrent_initializer", initializers(), role::init, "Orthogonal");
            b.add("bias_initializer", initializers(), role::init, "Zeros");
            b.add("unit_forget_bias", bools(), role::init, true);
            b.training_only({"kernel", "recurrent", "bias"});
            return recurrent_tail(b, false);
        });
    }
    static rounding_scale rounds_at(inputs in, args) { return recurrence_rounding(in); }
    static expected<shape> infer(inputs in, args p) {
        // Drop the time axis, then it is a convolution over the remaining frame.
        shape frame;
        frame.push(in[0][0]);
        for (int i = 2; i < in[0].rank(); ++i) frame.push(in[0][i]);
        auto conv = conv_infer<N, conv_kind::plain>(std::span(&frame, 1), p, params());
        if (!conv) return conv;
        const shape& f = *conv;
        if (!as_bool(value_of(params(), p, "return_sequences"))) return f;
        shape out;
        out.push(f[0]);
        out.push(in[0][1]);
        for (int i = 1; i < f.rank(); ++i) out.push(f[i]);
        return out;
    }
    /// The input channels of one frame: axis 2 channels_first, the last axis otherwise.
    static int64_t frame_channels(const node_view& n) { return n.channels_first() ? n.in[0][2] : n.in[0].back(); }
    /// kernel (k..., in, 4 filters), recurrent_kernel (k..., filters, 4 filters), bias (4 filters)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t f = n.integer("filters", 0);
        const auto k = n.sizes("kernel_size", N);
        w.add("kernel", cat(k, {frame_channels(n), 4 * f}), n.text("kernel_initializer", "glorot_uniform"));
        w.add("recurrent_kernel", cat(k, {f, 4 * f}), n.text("recurrent_initializer", "Orthogonal"));
        if (!n.flag("use_bias", true)) return;
        w.add("bias", {4 * f}, n.text("bias_initializer", "Zeros"));
        if (n.flag("unit_forget_bias", true)) w.forget_bias_ones(f);
    }
    /// steps * output positions * 4 * k * (c_in + filters) * filters
    static int64_t flops(const node_view& n) {
        const int64_t f = n.integer("filters", 1);
        return n.in[0][1] * positions(n, n.out, n.flag("return_sequences", false) ? 1 : 0) * 4 * n.volume("kernel_size", N) * (frame_channels(n) + f) * f;
    }
};

using rnn_layers = layer_list<lstm, gru, simple_rnn, bidirectional, time_distributed, conv_lstm<1>, conv_lstm<2>, conv_lstm<3>>;

}  // namespace memo::layers
