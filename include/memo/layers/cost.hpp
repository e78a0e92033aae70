#pragma once
// What a model costs: its weights (Keras' count_params) and its multiply-adds per sample.
//
//   std::int64_t w = memo::count_weights(m);   // trainable and non-trainable, as Keras counts
//   std::int64_t f = memo::count_flops(m);     // multiply-adds for one sample
//
// Weights are counted per layer as Keras builds them, BatchNormalization's moving mean and variance
// included (layers/weights.hpp).
//
// Multiply-adds per sample, as each layer declares them (its `flops` member), where k is the
// product of the kernel sizes, c_in the input channels, dm the depth multiplier and P the output
// positions (spatial elements of the output):
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

#include "../core/model.hpp"
#include "weights.hpp"

namespace memo {

/// Multiply-adds of node i for one sample, as its layer declares them (its `flops` member).
inline std::int64_t node_flops(const model& m, std::size_t i) {
    const node& n = m.nodes[i];
    if (n.inputs.empty() || !n.layer->flops) return 0;
    return detail::with_node_view(m, i, [&](const node_view& v) { return n.layer->flops(v); });
}

/// Multiply-adds for one sample (see the top of this file for what each layer counts).
inline std::int64_t count_flops(const model& m) { return detail::sum_over_nodes(m, node_flops); }

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
inline std::int64_t execution_cost(const model& m) { return detail::sum_over_nodes(m, node_cost); }

}  // namespace memo
