#pragma once
// LPool: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D, and their Global forms.
#include "common.hpp"

namespace memo::layers {

enum class pool_kind { max, average };

inline constexpr std::string_view pool_names[2][4] = {{"", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D"},
                                                      {"", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D"}};
inline constexpr std::string_view global_pool_names[2][4] = {{"", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"},
                                                             {"", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D"}};

template <int N, pool_kind Kind>
struct pooling : layer_kind<family::pool, rank_set::of(N + 2)> {
    static constexpr std::string_view name = pool_names[static_cast<int>(Kind)][N];
    enum : std::size_t { pool_size, strides, padding, data_format };
    static std::span<const param> params() {
        return built_once([] {
            return param_builder{}
                .add("pool_size", tuple_of(N, in_range(1, 512, 5)), role::shape, ints::filled(N, 2))
                .add("strides", optional(tuple_of(N, in_range(1, 512, 5))), role::shape, none)
                .add("padding", element_of({"valid", "same"}), role::shape, "valid")
                .add("data_format", data_formats(), role::shape, "channels_last");
        });
    }
    static expected<shape> infer(inputs in, args p) {
        const auto ps = as_ints(p[pool_size], N);
        const auto st = is_none(p[strides]) ? ps : as_ints(p[strides], N);
        spatial s = spatial::of(in[0], as_str(p[data_format]));
        for (int i = 0; i < N; ++i) {
            const int64_t out = conv_length(s.sizes[i], ps[i], as_str(p[padding]), st[i], 1);
            if (out <= 0)
                return fail("pool_size " + str_i(ps[i]) + " is larger than input size " + str_i(s.sizes[i]) + " under padding '" +
                            std::string(as_str(p[padding])) + "'");
            s.sizes[i] = out;
        }
        return s.to_shape();
    }
    /// the window per output element
    static int64_t flops(const node_view& n) { return n.out.elements() * n.volume("pool_size", N); }
};

template <int N, pool_kind Kind>
struct global_pooling : layer_kind<family::pool, rank_set::of(N + 2)> {
    static constexpr std::string_view name = global_pool_names[static_cast<int>(Kind)][N];
    enum : std::size_t { data_format, keepdims };
    static std::span<const param> params() {
        return built_once(
            [] { return param_builder{}.add("data_format", data_formats(), role::shape, "channels_last").add("keepdims", bools(), role::shape, false); });
    }
    static expected<shape> infer(inputs in, args p) {
        spatial s = spatial::of(in[0], as_str(p[data_format]));
        if (!as_bool(p[keepdims])) return shape{s.batch, s.channels};
        for (int i = 0; i < N; ++i) s.sizes[i] = 1;
        return s.to_shape();
    }
    static int64_t flops(const node_view& n) { return per_input_element(n); }
};

/// MaxPooling1D to 3D, AveragePooling1D to 3D, then their Global forms, in that order.
template <template <int, pool_kind> class Pool>
using pools_of = layer_list<Pool<1, pool_kind::max>, Pool<2, pool_kind::max>, Pool<3, pool_kind::max>, Pool<1, pool_kind::average>, Pool<2, pool_kind::average>,
                            Pool<3, pool_kind::average>>;
using pool_layers = concat<pools_of<pooling>, pools_of<global_pooling>>;

}  // namespace memo::layers
