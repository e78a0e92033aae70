#pragma once
// LResh: Flatten, RepeatVector, Permute, Cropping1D/2D/3D, UpSampling1D/2D/3D, ZeroPadding1D/2D/3D.
#include "common.hpp"

namespace memo::layers {

struct flatten : layer_kind<family::reshape, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "Flatten";
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("data_format", data_formats(), role::mode, "channels_last"); });
    }
    static expected<shape> infer(inputs in, args) { return shape{in[0][0], in[0].elements()}; }
};

struct repeat_vector : layer_kind<family::reshape, rank_set::of(2)> {
    static constexpr std::string_view name = "RepeatVector";
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("n", in_range(1, 4096, 8), role::shape, int64_t{2}); });
    }
    static expected<shape> infer(inputs in, args p) { return shape{in[0][0], as_int(p[0]), in[0][1]}; }
};

struct permute : layer_kind<family::reshape, rank_set::of(3)> {
    static constexpr std::string_view name = "Permute";
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("dims", element_of({ints{2, 1}, ints{1, 2}}), role::shape, ints{2, 1}); });
    }
    static expected<shape> infer(inputs in, args p) {
        const auto& d = std::get<ints>(p[0]);
        return shape{in[0][0], in[0][static_cast<int>(d[0])], in[0][static_cast<int>(d[1])]};
    }
};

inline constexpr std::string_view cropping_names[] = {"", "Cropping1D", "Cropping2D", "Cropping3D"};
inline constexpr std::string_view upsampling_names[] = {"", "UpSampling1D", "UpSampling2D", "UpSampling3D"};
inline constexpr std::string_view zero_padding_names[] = {"", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"};

/// Cropping and ZeroPadding: (before, after) per spatial axis, stored flat.
template <int N, int Sign, const std::string_view* Names, const char* Param>
struct border : layer_kind<family::reshape, rank_set::of(N + 2)> {
    static constexpr std::string_view name = Names[N];
    static std::span<const param> params() {
        return built_once([] {
            param_builder b;
            // Keras' defaults: 1 on each side, except Cropping2D's ((0, 0), (0, 0)).
            const int64_t fallback = (Sign < 0 && N == 2) ? 0 : 1;
            b.add(Param, tuple_of(2 * N, in_range(0, 4096, 4)), role::shape, ints::filled(2 * N, fallback));
            if (N > 1) b.add("data_format", data_formats(), role::shape, "channels_last");
            return b;
        });
    }
    static expected<shape> infer(inputs in, args p) {
        const auto amounts = as_ints(p[0], 2 * N);
        spatial s = spatial::of(in[0], N > 1 ? as_str(p[1]) : std::string_view("channels_last"));
        for (int i = 0; i < N; ++i) {
            const int64_t out = s.sizes[i] + Sign * (amounts[2 * i] + amounts[2 * i + 1]);
            if (out <= 0)
                return fail("cropping " + str_i(amounts[2 * i]) + "+" + str_i(amounts[2 * i + 1]) + " is not smaller than input size " + str_i(s.sizes[i]));
            s.sizes[i] = out;
        }
        return s.to_shape();
    }
};

inline constexpr char cropping_param[] = "cropping";
inline constexpr char padding_param[] = "padding";

template <int N>
using cropping = border<N, -1, cropping_names, cropping_param>;
template <int N>
using zero_padding = border<N, +1, zero_padding_names, padding_param>;

template <int N>
struct upsampling : layer_kind<family::reshape, rank_set::of(N + 2)> {
    static constexpr std::string_view name = upsampling_names[N];
    static std::span<const param> params() {
        return built_once([] {
            param_builder b;
            if (N == 1) b.add("size", in_range(1, 64, 5), role::shape, int64_t{2});
            else b.add("size", tuple_of(N, in_range(1, 64, 5)), role::shape, ints::filled(N, 2));
            if (N > 1) b.add("data_format", data_formats(), role::shape, "channels_last");
            if (N == 2) b.add("interpolation", element_of({"nearest", "bilinear"}), role::mode, "nearest");
            return b;
        });
    }
    static expected<shape> infer(inputs in, args p) {
        const auto size = as_ints(p[0], N);
        spatial s = spatial::of(in[0], N > 1 ? as_str(p[1]) : std::string_view("channels_last"));
        for (int i = 0; i < N; ++i) s.sizes[i] *= size[i];
        return s.to_shape();
    }
};

using reshape_layers = layer_list<flatten, repeat_vector, permute, cropping<1>, cropping<2>, cropping<3>, upsampling<1>, upsampling<2>, upsampling<3>,
                                  zero_padding<1>, zero_padding<2>, zero_padding<3>>;

}  // namespace memo::layers
