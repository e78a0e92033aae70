#pragma once
// LNorm: BatchNormalization and LayerNormalization (shape unchanged; the axis must exist).
#include <algorithm>
#include <cmath>

#include "common.hpp"

namespace memo::layers {

/// gamma (if scale), beta (if center), then BatchNormalization's moving_mean and moving_variance,
/// each of the normalised axis' size.
inline void normalization_weights(const node_view& n, weight_list& w, bool moving) {
    const int axis = normal_axis(n.integer("axis", -1), n.in[0].rank());
    const int64_t c = axis < 0 ? 1 : n.in[0][axis];
    if (n.flag("scale", true)) w.add("gamma", {c}, n.text("gamma_initializer", "Ones"));
    if (n.flag("center", true)) w.add("beta", {c}, n.text("beta_initializer", "Zeros"));
    if (!moving) return;
    w.add("moving_mean", {c}, n.text("moving_mean_initializer", "Zeros"));
    w.add("moving_variance", {c}, n.text("moving_variance_initializer", "Ones"));
}

/// axis, then BatchNormalization's momentum, then epsilon, center, scale and the initializers of
/// beta and gamma, then BatchNormalization's of the moving statistics, in Keras' order.
inline param_builder normalization_params(bool batch) {
    param_builder b;
    b.add("axis", axes(), role::mode, int64_t{-1});
    if (batch) b.add("momentum", real_in(0, 1), role::inert, 0.99);
    b.add("epsilon", real_in(0, 1), role::mode, 0.001).add("center", bools(), role::mode, true).add("scale", bools(), role::mode, true);
    b.add("beta_initializer", initializers(), role::init, "Zeros").add("gamma_initializer", initializers(), role::init, "Ones");
    if (batch) b.add("moving_mean_initializer", initializers(), role::init, "Zeros").add("moving_variance_initializer", initializers(), role::init, "Ones");
    return b.training_only({"beta", "gamma"}, false);
}

struct batch_normalization : layer_kind<family::norm, rank_set::between(3, 6)> {
    static constexpr std::string_view name = "BatchNormalization";
    static std::span<const param> params() {
        return built_once([] { return normalization_params(true); });
    }
    static expected<shape> infer(inputs in, args p) {
        if (normal_axis(as_int(p[0]), in[0].rank()) < 0) return fail("axis " + str_i(as_int(p[0])) + " is not an axis of " + in[0].str());
        return in[0];
    }
    /// (x - mean) / sqrt(var + epsilon), computed as x * rstd - mean * rstd, rounds at |x| * rstd,
    /// and rstd is at most 1 / sqrt(epsilon) (epsilon taken as at least 1e-6).
    static rounding_scale rounds_at(inputs, args p) { return {0.0, 1.0 / std::sqrt(std::max(as_real(p[2]), 1e-6))}; }
    static void weights(const node_view& n, weight_list& w) { normalization_weights(n, w, true); }
    static int64_t flops(const node_view& n) { return per_input_element(n); }
};

struct layer_normalization : layer_kind<family::norm, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "LayerNormalization";
    static std::span<const param> params() {
        return built_once([] { return normalization_params(false); });
    }
    static expected<shape> infer(inputs in, args p) { return batch_normalization::infer(in, p); }
    static rounding_scale rounds_at(inputs, args p) { return {0.0, 1.0 / std::sqrt(std::max(as_real(p[1]), 1e-6))}; }  // as BatchNormalization's
    static void weights(const node_view& n, weight_list& w) { normalization_weights(n, w, false); }
    static int64_t flops(const node_view& n) { return per_input_element(n); }
};

using norm_layers = layer_list<batch_normalization, layer_normalization>;

}  // namespace memo::layers
