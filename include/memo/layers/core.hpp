#pragma once
// Dense, Activation, CustomScaleLayer and Input: Keras layers outside MEMO's 67-class universe
// (Dense heads every generated model; the others appear in the Keras applications).
#include "common.hpp"

namespace memo::layers {

/// What the four share: the core group, outside the universe, rank 2 to 6.
using core_kind = layer_kind<family::core, rank_set::between(2, 6), counted::no>;

struct dense : core_kind {
    static constexpr std::string_view name = "Dense";
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("units", in_range(1, 4096, 128), role::shape, int64_t{100}).weighted({"kernel", "bias"}); });
    }
    static expected<shape> infer(inputs in, args p) {
        shape s = in[0];
        s[s.rank() - 1] = as_int(p[0]);
        return s;
    }
    /// kernel (in, units), bias (units)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t units = n.integer("units", 1);
        kernel_and_bias(n, w, {n.in[0].back(), units}, {units});
    }
    /// output elements * input features
    static int64_t flops(const node_view& n) { return n.out.elements() * n.in[0].back(); }
};

/// Keras' Activation layer (activation given by name); the Keras applications use it throughout.
struct activation : core_kind {
    static constexpr std::string_view name = "Activation";
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("activation", activations(), role::mode, "relu"); });
    }
    static expected<shape> infer(inputs in, args) { return in[0]; }
};

/// CustomScaleLayer: inputs[0] + inputs[1] * scale, InceptionResNetV2's residual scaling (the class
/// Keras gives the Lambda of its applications).
struct custom_scale : core_kind {
    static constexpr std::string_view name = "CustomScaleLayer";
    static constexpr arity_t arity{2, 2};
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("scale", real_in(-10, 10), role::mode, 1.0); });
    }
    static expected<shape> infer(inputs in, args) {
        if (!(in[0] == in[1])) return fail("inputs have different shapes " + in[0].str() + " and " + in[1].str());
        return in[0];
    }
    static int64_t flops(const node_view& n) { return per_input_element(n); }
};

/// A model input: its per-sample shape and dtype (the batch dimension is unknown).
struct input_layer : core_kind {  // the ranks of its output
    static constexpr std::string_view name = "InputLayer";
    static constexpr arity_t arity{0, 0};
    static constexpr std::string_view dtype_param = "dtype";
    enum : std::size_t { shape_param, dtype_index };
    static std::span<const param> params() {
        return built_once([] {
            return param_builder{}
                .add("shape", int_list{1, 1 << 20}, role::shape, ints{8, 8, 3})
                .add("dtype", element_of({"float32", "float16", "bfloat16", "float64"}), role::mode, "float32");
        });
    }
    static expected<shape> infer(inputs, args p) {
        const auto& dims = std::get<ints>(p[shape_param]);
        if (dims.n < 1 || dims.n > 5) return fail("an input needs 1 to 5 dimensions besides the batch, has " + str_i(dims.n));
        return shape::batched({dims.begin(), static_cast<std::size_t>(dims.n)});
    }
};

using core_layers = layer_list<dense, activation, custom_scale, input_layer>;

}  // namespace memo::layers
