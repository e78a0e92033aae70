#pragma once
// LAct: ReLU, Softmax, LeakyReLU, PReLU, ELU, ThresholdedReLU (shape unchanged).
#include "common.hpp"

namespace memo::layers {

/// What the six share: the act group, ranks 2 to 6, the shape unchanged once the input passes the
/// layer's `check` and has its `axis_param`'s axis; each layer's struct builds its parameters.
template <class Layer>
struct activation_layer : built_by<Layer>, layer_kind<family::act, rank_set::between(2, 6)> {
    static expected<shape> infer(inputs in, args p) {
        if constexpr (requires { Layer::check(in[0], p); }) {
            if (auto ok = Layer::check(in[0], p); !ok) return ok.error();
        }
        if constexpr (requires { Layer::axis_param; }) {
            const value& a = p[Layer::axis_param];
            if (!is_none(a) && normal_axis(as_int(a), in[0].rank()) < 0) return fail("axis " + str_i(as_int(a)) + " is not an axis of " + in[0].str());
        }
        return in[0];
    }
};

struct relu : activation_layer<relu> {
    static constexpr std::string_view name = "ReLU";
    static param_builder build() {
        return param_builder{}
            .add("max_value", optional(real_in(0, 10)), role::mode, none)
            .add("negative_slope", real_in(0, 1), role::mode, 0.0)
            .add("threshold", real_in(0, 1), role::mode, 0.0);
    }
};
struct softmax : activation_layer<softmax> {
    static constexpr std::string_view name = "Softmax";
    static constexpr std::size_t axis_param = 0;
    static param_builder build() { return param_builder{}.add("axis", axes(), role::mode, int64_t{-1}); }
    static rounding_scale rounds_at(inputs, args) { return {1.0, 0.0}; }  // exp(x - max) rounds at 1, the largest term
};
struct leaky_relu : activation_layer<leaky_relu> {
    static constexpr std::string_view name = "LeakyReLU";
    static param_builder build() { return param_builder{}.add("alpha", real_in(0, 1), role::mode, 0.3); }
};
struct prelu : activation_layer<prelu> {
    static constexpr std::string_view name = "PReLU";
    // Keras sets alpha's shape to input_shape[1:] with entry [axis - 1] made 1 for a shared axis,
    // so shared_axes=-1 shares the second-to-last dimension and needs rank >= 3, -2 needs rank >= 4.
    static expected<void> check(const shape& s, args p) {
        if (is_none(p[0])) return {};
        const int64_t a = as_int(p[0]);
        if (a < 0 && s.rank() < 2 - a) return fail("shared_axes " + str_i(a) + " needs rank " + str_i(2 - a) + ", input is " + s.str());
        return {};
    }
    /// alpha (the input's sample shape, the shared axis set to 1)
    static void weights(const node_view& n, weight_list& w) {
        auto dims = std::vector<int64_t>(n.in[0].sample().begin(), n.in[0].sample().end());
        if (const value* shared = n.find("shared_axes"); shared && !is_none(*shared)) {
            // Keras: param_shape[axis - 1] = 1, so shared_axes=-1 is the second-to-last sample axis.
            const auto a = static_cast<int64_t>(dims.size()) + as_int(*shared) - 1;
            if (a >= 0 && a < static_cast<int64_t>(dims.size())) dims[static_cast<std::size_t>(a)] = 1;
        }
        w.add("alpha", dims, n.text("alpha_initializer", "Zeros"));
    }
    static param_builder build() {
        return param_builder{}
            .add("shared_axes", element_of({none, -1, -2}), role::mode, none)
            .add("alpha_initializer", initializers(), role::init, "Zeros")
            .add("alpha_regularizer", regularizers(), role::inert, none)
            .add("alpha_constraint", constraints(), role::inert, none);
    }
};
struct elu : activation_layer<elu> {
    static constexpr std::string_view name = "ELU";
    static param_builder build() { return param_builder{}.add("alpha", real_in(0, 2), role::mode, 1.0); }
    static rounding_scale rounds_at(inputs, args p) { return {std::abs(as_real(p[0])), 0.0}; }  // alpha * (exp(x) - 1)
};
struct thresholded_relu : activation_layer<thresholded_relu> {
    static constexpr std::string_view name = "ThresholdedReLU";
    static param_builder build() { return param_builder{}.add("theta", real_in(0, 2), role::mode, 1.0); }
};

using act_layers = layer_list<relu, softmax, leaky_relu, prelu, elu, thresholded_relu>;

}  // namespace memo::layers
