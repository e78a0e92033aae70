#pragma once
// The adapters mutation uses to repair ranks and shapes, named as MEMO's Keras classes so its
// seed files import and our models export to the same classes. Outside the coverage universe.
#include "common.hpp"

namespace memo::layers {

/// What the adapters share: the adapter group, outside the universe; each layer's struct builds its
/// parameters and says the ranks it takes.
template <class Layer, rank_set Ranks>
struct adapter : built_by<Layer>, layer_kind<family::adapter, Ranks, counted::no> {};

/// Reshape: to target_shape (per sample), same number of elements.
struct reshape : adapter<reshape, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "Reshape";
    static param_builder build() { return param_builder{}.add("target_shape", int_list{1, 1 << 20}, role::shape, ints{}); }
    static expected<shape> infer(inputs in, args p) {
        const shape& s = in[0];
        const auto& t = std::get<ints>(p[0]);
        if (t.n < 1 || t.n > 5) return fail("target_shape needs 1 to 5 dimensions");
        int64_t prod = 1;
        for (auto d : t) prod *= d;
        if (prod != s.elements()) return fail("target_shape has " + str_i(prod) + " elements, input " + str_i(s.elements()));
        return shape::batched({t.begin(), static_cast<std::size_t>(t.n)});
    }
};
/// CustomExpandLayer: insert a dimension of size 1 at axis (tf.expand_dims).
struct expand_dims : adapter<expand_dims, rank_set::between(2, 5)> {
    static constexpr std::string_view name = "CustomExpandLayer";
    static param_builder build() { return param_builder{}.add("axis", in_range(1, 6), role::shape, int64_t{1}); }
    static expected<shape> infer(inputs in, args p) {
        const shape& s = in[0];
        const auto axis = static_cast<int>(as_int(p[0]));
        if (axis > s.rank()) return fail("axis " + str_i(axis) + " is past rank " + str_i(s.rank()));
        shape out;
        for (int i = 0; i <= s.rank(); ++i) out.push(i == axis ? 1 : s[i < axis ? i : i - 1]);
        return out;
    }
};
/// CustomDropDimLayer: drop axis by taking index 0 along it.
struct drop_dim : adapter<drop_dim, rank_set::between(3, 6)> {
    static constexpr std::string_view name = "CustomDropDimLayer";
    static param_builder build() { return param_builder{}.add("axis", in_range(1, 5), role::shape, int64_t{1}); }
    static expected<shape> infer(inputs in, args p) {
        const auto axis = static_cast<int>(as_int(p[0]));
        const shape& s = in[0];
        if (axis >= s.rank()) return fail("axis " + str_i(axis) + " is not below rank " + str_i(s.rank()));
        shape out;
        for (int i = 0; i < s.rank(); ++i)
            if (i != axis) out.push(s[i]);
        return out;
    }
};
/// CustomPadLayer: constant padding, (before, after) for each non-batch dimension.
struct pad : adapter<pad, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "CustomPadLayer";
    static param_builder build() {
        return param_builder{}.add("padding", int_list{0, 1 << 16}, role::shape, ints{}).add("constant_values", real_in(-1e6, 1e6), role::mode, 0.0);
    }
    static expected<shape> infer(inputs in, args p) { return border(in[0], std::get<ints>(p[0]), +1); }
    static expected<shape> border(const shape& s, const ints& amounts, int sign) {
        if (amounts.n != 2 * (s.rank() - 1)) return fail("needs " + str_i(2 * (s.rank() - 1)) + " amounts for " + s.str() + ", has " + str_i(amounts.n));
        shape out = s;
        for (int i = 1; i < s.rank(); ++i) {
            out[i] = s[i] + sign * (amounts[2 * (i - 1)] + amounts[2 * (i - 1) + 1]);
            if (out[i] <= 0) return fail("cropping removes all of axis " + str_i(i) + " of " + s.str());
        }
        return out;
    }
};
/// CustomCropLayer: slice [before, size - after) along each non-batch dimension.
struct crop : adapter<crop, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "CustomCropLayer";
    static param_builder build() { return param_builder{}.add("cropping", int_list{0, 1 << 16}, role::shape, ints{}); }
    static expected<shape> infer(inputs in, args p) { return pad::border(in[0], std::get<ints>(p[0]), -1); }
};
/// CustomCastLayer: convert to target_dtype.
struct cast : adapter<cast, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "CustomCastLayer";
    static constexpr std::string_view dtype_param = "target_dtype";
    static param_builder build() {
        return param_builder{}.add("target_dtype", element_of({"float32", "float16", "bfloat16", "float64"}), role::mode, "float32");
    }
    static expected<shape> infer(inputs in, args) { return in[0]; }
};
/// CustomInjectLayer: writes `value` (NaN, Inf or -Inf) into every `stride`-th element, the
/// NaN operator's way of feeding non-finite values into a layer's input.
struct inject : adapter<inject, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "CustomInjectLayer";
    static param_builder build() {
        return param_builder{}
            .add("value", element_of({"nan", "inf", "-inf"}), role::mode, "nan")
            .add("stride", in_range(1, 1 << 20, 64), role::mode, int64_t{1});
    }
    static expected<shape> infer(inputs in, args) { return in[0]; }
};

using adapter_layers = layer_list<reshape, expand_dims, drop_dim, pad, crop, cast, inject>;

}  // namespace memo::layers
