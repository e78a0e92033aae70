#pragma once
// The number of weights of a model as Keras' count_params() reports it: trainable and
// non-trainable alike (BatchNormalization's moving mean and variance count), per layer from the
// node's parameters and its input and output shapes.
#include <cstdint>
#include <string_view>

#include "../core/model.hpp"
#include "../layers/common.hpp"

namespace memo::zoo {

namespace detail::weights {

inline const value* param_of(const node& n, std::string_view name) {
    const int i = n.layer->param_index(name);
    return i < 0 ? nullptr : &n.params[static_cast<std::size_t>(i)];
}
inline std::int64_t int_param(const node& n, std::string_view name, std::int64_t fallback = 0) {
    const value* v = param_of(n, name);
    return v ? as_int(*v) : fallback;
}
inline bool bool_param(const node& n, std::string_view name, bool fallback) {
    const value* v = param_of(n, name);
    return v ? as_bool(*v) : fallback;
}
inline std::string_view str_param(const node& n, std::string_view name, std::string_view fallback) {
    const value* v = param_of(n, name);
    return v ? as_str(*v) : fallback;
}
/// The product of the `count` kernel sizes.
inline std::int64_t kernel_volume(const node& n, int count) {
    const value* v = param_of(n, "kernel_size");
    if (!v) return 1;
    std::int64_t p = 1;
    for (auto k : as_ints(*v, count)) p *= k;
    return p;
}
/// Channels of a channels_last / channels_first input.
inline std::int64_t channels(const node& n, const shape& in) {
    return layers::spatial::of(in, str_param(n, "data_format", "channels_last")).channels;
}
/// Weights of a recurrent cell with `gates` gates from `in` features to `units` units.
inline std::int64_t rnn_cell(std::int64_t gates, std::int64_t in, std::int64_t units, bool bias, std::int64_t bias_rows = 1) {
    return gates * (units * (in + units) + (bias ? bias_rows * units : 0));
}

}  // namespace detail::weights

/// The weights (trainable and not) of node `i` of `m`.
inline std::int64_t count_weights(const model& m, std::size_t i) {
    using namespace detail::weights;
    const node& n = m.nodes[i];
    if (n.inputs.empty()) return 0;
    const shape& in = m.nodes[static_cast<std::size_t>(n.inputs[0])].out;
    const std::string_view cls = n.layer->name;
    const bool bias = bool_param(n, "use_bias", true);

    if (cls == "Dense") {
        const std::int64_t units = int_param(n, "units");
        return in.back() * units + (bias ? units : 0);
    }
    if (cls == "Conv1D" || cls == "Conv2D" || cls == "Conv3D" || cls == "Conv2DTranspose" || cls == "Conv3DTranspose") {
        const int N = in.rank() - 2;
        const std::int64_t filters = int_param(n, "filters");
        return kernel_volume(n, N) * channels(n, in) * filters + (bias ? filters : 0);
    }
    if (cls == "SeparableConv1D" || cls == "SeparableConv2D") {
        const int N = in.rank() - 2;
        const std::int64_t c = channels(n, in), dm = int_param(n, "depth_multiplier", 1), filters = int_param(n, "filters");
        return kernel_volume(n, N) * c * dm + c * dm * filters + (bias ? filters : 0);
    }
    if (cls == "DepthwiseConv1D" || cls == "DepthwiseConv2D") {
        const int N = in.rank() - 2;
        const std::int64_t c = channels(n, in), dm = int_param(n, "depth_multiplier", 1);
        return kernel_volume(n, N) * c * dm + (bias ? c * dm : 0);
    }
    if (cls == "LocallyConnected1D" || cls == "LocallyConnected2D") {
        const int N = in.rank() - 2;
        const std::int64_t filters = int_param(n, "filters");
        const auto out = layers::spatial::of(n.out, str_param(n, "data_format", "channels_last"));
        std::int64_t positions = 1;
        for (int k = 0; k < out.n; ++k) positions *= out.sizes[k];
        return positions * kernel_volume(n, N) * channels(n, in) * filters + (bias ? positions * filters : 0);
    }
    if (cls == "BatchNormalization" || cls == "LayerNormalization") {
        const int axis = layers::normal_axis(int_param(n, "axis", -1), in.rank());
        const std::int64_t c = axis < 0 ? 0 : in[axis];
        const std::int64_t affine = (bool_param(n, "center", true) ? 1 : 0) + (bool_param(n, "scale", true) ? 1 : 0);
        return c * (affine + (cls == "BatchNormalization" ? 2 : 0));
    }
    if (cls == "LSTM") return rnn_cell(4, in.back(), int_param(n, "units"), bias);
    if (cls == "GRU") return rnn_cell(3, in.back(), int_param(n, "units"), bias, bool_param(n, "reset_after", true) ? 2 : 1);
    if (cls == "SimpleRNN") return rnn_cell(1, in.back(), int_param(n, "units"), bias);
    if (cls == "Bidirectional") return 2 * rnn_cell(4, in.back(), int_param(n, "units"), true);
    if (cls.starts_with("ConvLSTM")) {
        const int N = in.rank() - 3;
        const std::int64_t filters = int_param(n, "filters");
        const std::int64_t c = str_param(n, "data_format", "channels_last") == "channels_first" ? in[2] : in.back();
        const std::int64_t k = kernel_volume(n, N);
        return 4 * (k * c * filters + k * filters * filters + (bias ? filters : 0));
    }
    if (cls == "PReLU") {
        // alpha has the input's per-sample shape, with the shared axis (param_shape[axis - 1]) set to 1.
        auto dims = in.sample();
        std::int64_t p = 1;
        const value* shared = param_of(n, "shared_axes");
        const std::int64_t skip = shared && !is_none(*shared) ? static_cast<std::int64_t>(dims.size()) + as_int(*shared) - 1 : -1;
        for (std::size_t d = 0; d < dims.size(); ++d)
            if (static_cast<std::int64_t>(d) != skip) p *= dims[d];
        return p;
    }
    return 0;
}

/// The weights of `m`, as Keras' model.count_params() reports them.
inline std::int64_t count_weights(const model& m) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += count_weights(m, i);
    return total;
}

}  // namespace memo::zoo
