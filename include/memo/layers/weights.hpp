#pragma once
// A layer's weights before any is drawn: their Keras names, dimensions in Keras' layouts and
// initializers (weight_specs), and how many a model has (count_weights, as Keras' count_params()
// reports them: BatchNormalization's moving mean and variance count). Backends draw them by these
// (exec/weights.hpp); the zoo, reduction and the memory budget count them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../core/model.hpp"
#include "common.hpp"

namespace memo {

/// What a weight is before it is drawn: its name, its dimensions in Keras' layout, its
/// initializer, and (an LSTM bias with unit_forget_bias) how many forget-gate units start at one.
struct weight_spec {
    std::string name;
    std::vector<std::int64_t> dims;
    std::string_view initializer;
    std::int64_t forget_bias_units = 0;
};

namespace detail::weight_slots {

struct maker {
    const model& m;
    int index;
    std::vector<weight_spec> out;

    const node& n() const { return m[index]; }
    std::string_view init(std::string_view param, std::string_view fallback) const {
        const int i = n().layer->param_index(param);
        return i < 0 ? fallback : as_str(n().params[static_cast<std::size_t>(i)]);
    }
    void add(std::string name, std::vector<std::int64_t> dims, std::string_view initializer) {
        out.push_back({std::move(name), std::move(dims), initializer, 0});
    }
    /// LSTM's bias with unit_forget_bias: the forget gate's quarter is ones.
    void forget_bias_ones(std::int64_t units) { out.back().forget_bias_units = units; }
};

inline bool flag(const node& n, std::string_view p, bool fallback) {
    const int i = n.layer->param_index(p);
    return i < 0 ? fallback : as_bool(n.params[static_cast<std::size_t>(i)]);
}
inline std::int64_t integer(const node& n, std::string_view p, std::int64_t fallback) {
    const int i = n.layer->param_index(p);
    return i < 0 ? fallback : as_int(n.params[static_cast<std::size_t>(i)]);
}
inline std::vector<std::int64_t> kernel(const node& n, int N) {
    const auto k = as_ints(n.params[static_cast<std::size_t>(n.layer->param_index("kernel_size"))], N);
    return std::vector<std::int64_t>(k.begin(), k.end());
}
inline std::vector<std::int64_t> cat(std::vector<std::int64_t> a, std::initializer_list<std::int64_t> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// A recurrent cell's kernel, recurrent kernel and bias, with `gates` gates.
inline void cell(maker& mk, std::string prefix, std::int64_t gates, std::int64_t in, std::int64_t units, bool bias, bool forget_bias, bool reset_after) {
    mk.add(prefix + "kernel", {in, gates * units}, mk.init("kernel_initializer", "glorot_uniform"));
    mk.add(prefix + "recurrent_kernel", {units, gates * units}, mk.init("recurrent_initializer", "Orthogonal"));
    if (!bias) return;
    if (reset_after) mk.add(prefix + "bias", {2, gates * units}, mk.init("bias_initializer", "Zeros"));
    else mk.add(prefix + "bias", {gates * units}, mk.init("bias_initializer", "Zeros"));
    if (forget_bias) mk.forget_bias_ones(units);
}

}  // namespace detail::weight_slots

/// The weights of node `index` of `m`, undrawn, in Keras' order and layouts; empty for weightless
/// layers. The node's input shapes must be inferred. Layouts, by class:
///   Conv{1,2,3}D         kernel (k..., in, filters), bias (filters)
///   Conv{2,3}DTranspose  kernel (k..., filters, in), bias (filters)
///   SeparableConv{1,2}D  depthwise_kernel (k..., in, dm), pointwise_kernel (1..., in*dm, filters), bias
///   DepthwiseConv{1,2}D  depthwise_kernel (k..., in, dm), bias (in*dm)
///   Dense                kernel (in, units), bias (units)
///   LocallyConnected1D   kernel (out_len, k*in, filters), bias (out_len, filters)
///   LocallyConnected2D   kernel (oh*ow, kh*kw*in, filters), bias (oh, ow, filters)
///   BatchNormalization   gamma, beta, moving_mean, moving_variance (c) (gamma/beta only if scale/center)
///   LayerNormalization   gamma, beta (c)
///   PReLU                alpha (input sample shape, shared axis set to 1)
///   SimpleRNN/GRU/LSTM   kernel (in, g*u), recurrent_kernel (u, g*u), bias (g*u) or (2, 3u) for GRU reset_after
///   Bidirectional        forward_ and backward_ LSTM weights (use_bias, unit_forget_bias, Keras' defaults)
///   ConvLSTM{1,2,3}D     kernel (k..., in, 4f), recurrent_kernel (k..., f, 4f), bias (4f)
inline std::vector<weight_spec> weight_specs(const model& m, int index) {
    using namespace detail::weight_slots;
    const node& n = m[index];
    if (n.inputs.empty()) return {};
    maker mk{m, index, {}};
    const shape& in = m[n.inputs[0]].out;
    const std::string_view cls = n.layer->name;
    const bool bias = flag(n, "use_bias", true);
    const bool first =
        n.layer->param_index("data_format") >= 0 && as_str(n.params[static_cast<std::size_t>(n.layer->param_index("data_format"))]) == "channels_first";
    const std::int64_t channels = in.rank() >= 2 ? (first ? in[1] : in.back()) : 0;
    const std::int64_t filters = integer(n, "filters", 0);
    const std::string_view kinit = mk.init("kernel_initializer", "glorot_uniform"), binit = mk.init("bias_initializer", "Zeros");

    if (cls == "Dense") {
        const std::int64_t units = integer(n, "units", 1);
        mk.add("kernel", {in.back(), units}, kinit);
        if (bias) mk.add("bias", {units}, binit);
    } else if (cls == "Conv1D" || cls == "Conv2D" || cls == "Conv3D") {
        mk.add("kernel", cat(kernel(n, in.rank() - 2), {channels, filters}), kinit);
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "Conv2DTranspose" || cls == "Conv3DTranspose") {
        mk.add("kernel", cat(kernel(n, in.rank() - 2), {filters, channels}), kinit);
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "SeparableConv1D" || cls == "SeparableConv2D") {
        const int N = in.rank() - 2;
        const std::int64_t dm = integer(n, "depth_multiplier", 1);
        mk.add("depthwise_kernel", cat(kernel(n, N), {channels, dm}), mk.init("depthwise_initializer", "glorot_uniform"));
        mk.add("pointwise_kernel", cat(std::vector<std::int64_t>(static_cast<std::size_t>(N), 1), {channels * dm, filters}),
               mk.init("pointwise_initializer", "glorot_uniform"));
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "DepthwiseConv1D" || cls == "DepthwiseConv2D") {
        const std::int64_t dm = integer(n, "depth_multiplier", 1);
        mk.add("depthwise_kernel", cat(kernel(n, in.rank() - 2), {channels, dm}), mk.init("depthwise_initializer", "glorot_uniform"));
        if (bias) mk.add("bias", {channels * dm}, binit);
    } else if (cls == "LocallyConnected1D" || cls == "LocallyConnected2D") {
        const int N = in.rank() - 2;
        const auto out = layers::spatial::of(n.out, first ? "channels_first" : "channels_last");
        std::int64_t positions = 1, volume = 1;
        for (int k = 0; k < N; ++k) positions *= out.sizes[k];
        for (auto k : kernel(n, N)) volume *= k;
        mk.add("kernel", {positions, volume * channels, filters}, kinit);
        if (bias) {
            std::vector<std::int64_t> b;
            for (int k = 0; k < N; ++k) b.push_back(out.sizes[k]);
            b.push_back(filters);
            mk.add("bias", b, binit);
        }
    } else if (cls == "BatchNormalization" || cls == "LayerNormalization") {
        const int axis = layers::normal_axis(integer(n, "axis", -1), in.rank());
        const std::int64_t c = axis < 0 ? 1 : in[axis];
        if (flag(n, "scale", true)) mk.add("gamma", {c}, mk.init("gamma_initializer", "Ones"));
        if (flag(n, "center", true)) mk.add("beta", {c}, mk.init("beta_initializer", "Zeros"));
        if (cls == "BatchNormalization") {
            mk.add("moving_mean", {c}, mk.init("moving_mean_initializer", "Zeros"));
            mk.add("moving_variance", {c}, mk.init("moving_variance_initializer", "Ones"));
        }
    } else if (cls == "PReLU") {
        auto dims = std::vector<std::int64_t>(in.sample().begin(), in.sample().end());
        const int i = n.layer->param_index("shared_axes");
        if (i >= 0 && !is_none(n.params[static_cast<std::size_t>(i)])) {
            // Keras: param_shape[axis - 1] = 1, so shared_axes=-1 is the second-to-last sample axis.
            const auto a = static_cast<std::int64_t>(dims.size()) + as_int(n.params[static_cast<std::size_t>(i)]) - 1;
            if (a >= 0 && a < static_cast<std::int64_t>(dims.size())) dims[static_cast<std::size_t>(a)] = 1;
        }
        mk.add("alpha", dims, mk.init("alpha_initializer", "Zeros"));
    } else if (cls == "SimpleRNN") {
        cell(mk, "", 1, in.back(), integer(n, "units", 1), bias, false, false);
    } else if (cls == "GRU") {
        cell(mk, "", 3, in.back(), integer(n, "units", 1), bias, false, flag(n, "reset_after", true));
    } else if (cls == "LSTM") {
        cell(mk, "", 4, in.back(), integer(n, "units", 1), bias, flag(n, "unit_forget_bias", true), false);
    } else if (cls == "Bidirectional") {
        const std::int64_t u = integer(n, "units", 1);
        cell(mk, "forward_", 4, in.back(), u, true, true, false);
        cell(mk, "backward_", 4, in.back(), u, true, true, false);
    } else if (cls.starts_with("ConvLSTM")) {
        const int N = in.rank() - 3;
        const std::int64_t c = first ? in[2] : in.back();
        mk.add("kernel", cat(kernel(n, N), {c, 4 * filters}), kinit);
        mk.add("recurrent_kernel", cat(kernel(n, N), {filters, 4 * filters}), mk.init("recurrent_initializer", "Orthogonal"));
        if (bias) {
            mk.add("bias", {4 * filters}, binit);
            if (flag(n, "unit_forget_bias", true)) mk.forget_bias_ones(filters);
        }
    }
    return std::move(mk.out);
}

/// The weights (trainable and not) of node `i` of `m`.
inline std::int64_t count_weights(const model& m, std::size_t i) {
    std::int64_t total = 0;
    for (const auto& w : weight_specs(m, static_cast<int>(i))) {
        std::int64_t n = 1;
        for (auto d : w.dims) n *= d;
        total += n;
    }
    return total;
}

/// The weights of `m`, as Keras' model.count_params() reports them.
inline std::int64_t count_weights(const model& m) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += count_weights(m, i);
    return total;
}

}  // namespace memo
