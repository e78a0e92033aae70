#pragma once
// What a model costs: its weights (Keras' count_params) and its multiply-adds per sample.
//
//   std::int64_t w = memo::count_weights(m);   // trainable and non-trainable, as Keras counts
//   std::int64_t f = memo::count_flops(m);     // multiply-adds for one sample
//
// Weights are counted per layer as Keras builds them, BatchNormalization's moving mean and variance
// included (layers/weights.hpp).
//
// Multiply-adds per sample, per layer, where k is the product of the kernel sizes, c_in the input
// channels, dm the depth multiplier and P the output positions (spatial elements of the output):
//   Conv1D/2D/3D, LocallyConnected1D/2D  P * k * c_in * filters
//   SeparableConv1D/2D                   P * (k * c_in * dm + c_in * dm * filters)
//   DepthwiseConv1D/2D                   P * k * c_in * dm
//   Conv2D/3DTranspose                   input positions * k * c_in * filters
//   LSTM, GRU, SimpleRNN                 steps * gates * units * (features + units); gates 4, 3, 1
//   Bidirectional(LSTM)                  twice the LSTM
//   ConvLSTM1D/2D/3D                     steps * P * 4 * k * (c_in + filters) * filters
//   Dense                                output elements * input features
//   BatchNormalization, LayerNormalization, CustomScaleLayer   one per element
//   Abs, Square, StopGradient, ScaleShift                      one per element
//   pooling                              window size per output element (global: per input element)
//   Add, Average, Maximum, Minimum, Multiply, Subtract          one per element per extra input
//   Dot                                  its products
// Activations, dropout and noise, reshaping, padding, cropping, Concatenate, InputLayer and the
// adapters count nothing.
#include <cstdint>
#include <string_view>

#include "../core/model.hpp"
#include "weights.hpp"

namespace memo {

namespace detail::cost {

inline const value* param_of(const node& n, std::string_view name) {
    const int i = n.layer->param_index(name);
    return i < 0 ? nullptr : &n.params[static_cast<std::size_t>(i)];
}
inline std::int64_t int_param(const node& n, std::string_view name, std::int64_t fallback) {
    const value* v = param_of(n, name);
    return v && !is_none(*v) ? as_int(*v) : fallback;
}
inline bool bool_param(const node& n, std::string_view name, bool fallback) {
    const value* v = param_of(n, name);
    return v ? as_bool(*v) : fallback;
}
inline bool channels_first(const node& n) {
    const value* v = param_of(n, "data_format");
    return v && as_str(*v) == "channels_first";
}
/// The product of the `count` entries of a size parameter (kernel_size, pool_size).
inline std::int64_t volume(const node& n, std::string_view name, int count) {
    const value* v = param_of(n, name);
    if (!v || is_none(*v)) return 1;
    std::int64_t p = 1;
    for (auto k : as_ints(*v, count)) p *= k;
    return p;
}
inline std::int64_t channels(const node& n, const shape& s) {
    if (s.rank() < 2) return 1;
    return channels_first(n) ? s[1] : s.back();
}
/// Spatial positions of a shape: its elements over its channels, `skip` axes after the batch
/// left out (the time axis of ConvLSTM).
inline std::int64_t positions(const node& n, const shape& s, int skip = 0) {
    std::int64_t p = 1;
    const bool first = channels_first(n);
    for (int i = 1 + skip + (first ? 1 : 0); i < s.rank() - (first ? 0 : 1); ++i) p *= s[i];
    return p;
}

}  // namespace detail::cost

/// Multiply-adds of node i for one sample.
inline std::int64_t node_flops(const model& m, std::size_t i) {
    using namespace detail::cost;
    const node& n = m.nodes[i];
    if (n.inputs.empty()) return 0;
    const shape& in = m.nodes[static_cast<std::size_t>(n.inputs[0])].out;
    const std::string_view c = n.layer->name;
    const int rank = in.rank();
    const std::int64_t cin = channels(n, in);
    const std::int64_t filters = int_param(n, "filters", 1);

    if (c == "Conv1D" || c == "Conv2D" || c == "Conv3D" || c == "LocallyConnected1D" || c == "LocallyConnected2D")
        return positions(n, n.out) * volume(n, "kernel_size", rank - 2) * cin * filters;
    if (c == "SeparableConv1D" || c == "SeparableConv2D") {
        const std::int64_t dm = int_param(n, "depth_multiplier", 1);
        return positions(n, n.out) * (volume(n, "kernel_size", rank - 2) * cin * dm + cin * dm * filters);
    }
    if (c == "DepthwiseConv1D" || c == "DepthwiseConv2D")
        return positions(n, n.out) * volume(n, "kernel_size", rank - 2) * cin * int_param(n, "depth_multiplier", 1);
    if (c == "Conv2DTranspose" || c == "Conv3DTranspose") return positions(n, in) * volume(n, "kernel_size", rank - 2) * cin * filters;
    if (c == "LSTM" || c == "GRU" || c == "SimpleRNN" || c == "Bidirectional") {
        const std::int64_t u = int_param(n, "units", 1), steps = rank >= 3 ? in[1] : 1;
        const std::int64_t gates = c == "GRU" ? 3 : c == "SimpleRNN" ? 1 : 4;
        return (c == "Bidirectional" ? 2 : 1) * steps * gates * u * (in.back() + u);
    }
    if (c.substr(0, 8) == "ConvLSTM") {
        const std::int64_t k = volume(n, "kernel_size", rank - 3);
        const std::int64_t c_in = channels_first(n) ? in[2] : in.back();
        const bool seq = bool_param(n, "return_sequences", false);
        return in[1] * positions(n, n.out, seq ? 1 : 0) * 4 * k * (c_in + filters) * filters;
    }
    if (c == "Dense") return n.out.elements() * in.back();
    if (c == "BatchNormalization" || c == "LayerNormalization" || c == "CustomScaleLayer" || c == "Abs" || c == "Square" || c == "StopGradient" ||
        c == "ScaleShift")
        return in.elements();
    if (n.layer->fam == family::pool) {
        if (c.substr(0, 6) == "Global") return in.elements();
        return n.out.elements() * volume(n, "pool_size", rank - 2);
    }
    if (c == "Dot") return in.back() * n.out.elements();
    if (n.layer->is_merge() && c != "Concatenate") return static_cast<std::int64_t>(n.inputs.size() - 1) * n.out.elements();
    return 0;
}

/// Multiply-adds for one sample (see the top of this file for what each layer counts).
inline std::int64_t count_flops(const model& m) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += node_flops(m, i);
    return total;
}

/// What running node i costs, per sample, in multiply-add equivalents: its multiply-adds, every
/// element it writes (at 32: moving, indexing and converting an element costs tens of times a
/// multiply-add), and a fixed price per recurrent step (a library runs steps one after the other,
/// so a long sequence is slow however small its units).
inline std::int64_t node_cost(const model& m, std::size_t i) {
    constexpr std::int64_t per_element = 32, per_step = 2000;
    const node& n = m.nodes[i];
    std::int64_t c = node_flops(m, i) + per_element * n.out.elements();
    if (n.layer->fam == family::rnn && !n.inputs.empty() && m.nodes[static_cast<std::size_t>(n.inputs[0])].out.rank() >= 3 &&
        n.layer->name != "TimeDistributed")
        c += per_step * m.nodes[static_cast<std::size_t>(n.inputs[0])].out[1];
    return c;
}

/// What running a model costs, per sample: the sum of its nodes'. Campaigns skip models above a budget.
inline std::int64_t execution_cost(const model& m) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += node_cost(m, i);
    return total;
}

}  // namespace memo
