#pragma once
// LResh: Flatten, RepeatVector, Permute, Cropping1D/2D/3D, UpSampling1D/2D/3D, ZeroPadding1D/2D/3D.
#include "common.hpp"

namespace memo::layers {

struct flatten {
    static constexpr std::string_view name = "Flatten";
    static constexpr memo::family family = memo::family::reshape;
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static std::span<const param> params() {
        static const auto ps = param_builder{}.add("data_format", data_formats(), role::mode, "channels_last").done();
        return ps;
    }
    static expected<shape> infer(inputs in, args) { return shape{in[0][0], in[0].elements()}; }
};

struct repeat_vector {
    static constexpr std::string_view name = "RepeatVector";
    static constexpr memo::family family = memo::family::reshape;
    static constexpr rank_set ranks = rank_set::of(2);
    static std::span<const param> params() {
        static const auto ps = param_builder{}.add("n", in_range(1, 4096, 8), role::shape, int64_t{2}).done();
        return ps;
    }
    static expected<shape> infer(inputs in, args p) { return shape{in[0][0], as_int(p[0]), in[0][1]}; }
};

struct permute {
    static constexpr std::string_view name = "Permute";
    static constexpr memo::family family = memo::family::reshape;
    static constexpr rank_set ranks = rank_set::of(3);
    static std::span<const param> params() {
        static const auto ps = param_builder{}.add("dims", element_of({ints{2, 1}, ints{1, 2}}), role::shape, ints{2, 1}).done();
        return ps;
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
struct border {
    static constexpr std::string_view name = Names[N];
    static constexpr memo::family family = memo::family::reshape;
    static constexpr rank_set ranks = rank_set::of(N + 2);
    static std::span<const param> params() {
        static const auto ps = [] {
            param_builder b;
            // Keras' defaults: 1 on each side, except Cropping2D's ((0, 0), (0, 0)).
            const int64_t fallback = (Sign < 0 && N == 2) ? 0 : 1;
            b.add(Param, tuple_of(2 * N, in_range(0, 4096, 4)), role::shape, ints::filled(2 * N, fallback));
            if (N > 1) b.add("data_format", data_formats(), role::shape, "channels_last");
            return b.done();
        }();
        return ps;
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
struct upsampling {
    static constexpr std::string_view name = upsampling_names[N];
    static constexpr memo::family family = memo::family::reshape;
    static constexpr rank_set ranks = rank_set::of(N + 2);
    static std::span<const param> params() {
        static const auto ps = [] {
            param_builder b;
            if (N == 1) b.add("size", in_range(1, 64, 5), role::shape, int64_t{2});
            else b.add("size", tuple_of(N, in_range(1, 64, 5)), role::shape, ints::filled(N, 2));
            if (N > 1) b.add("data_format", data_formats(), role::shape, "channels_last");
            if (N == 2) b.add("interpolation", element_of({"nearest", "bilinear"}), role::mode, "nearest");
            return b.done();
        }();
        return ps;
    }
    static expected<shape> infer(inputs in, args p) {
        const auto size = as_ints(p[0], N);
        spatial s = spatial::of(in[0], N > 1 ? as_str(p[1]) : std::string_view("channels_last"));
        for (int i = 0; i < N; ++i) s.sizes[i] *= size[i];
        return s.to_shape();
    }
};

using cropping1d = cropping<1>;
using cropping2d = cropping<2>;
using cropping3d = cropping<3>;
using upsampling1d = upsampling<1>;
using upsampling2d = upsampling<2>;
using upsampling3d = upsampling<3>;
using zero_padding1d = zero_padding<1>;
using zero_padding2d = zero_padding<2>;
using zero_padding3d = zero_padding<3>;

using reshape_layers = layer_list<flatten, repeat_vector, permute, cropping1d, cropping2d, cropping3d, upsampling1d, upsampling2d, upsampling3d, zero_padding1d,
                                  zero_padding2d, zero_padding3d>;

}  // namespace memo::layers
