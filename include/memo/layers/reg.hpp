#pragma once
// LReg: Dropout, GaussianDropout, GaussianNoise, ActivityRegularization, AlphaDropout,
// SpatialDropout1D/2D/3D. All are the identity at inference; their settings are inert.
#include "common.hpp"

namespace memo::layers {

/// An identity-at-inference layer with one real parameter.
template <class Tag>
struct regularization {
    static constexpr std::string_view name = Tag::name;
    static constexpr memo::family family = memo::family::reg;
    static constexpr rank_set ranks = Tag::ranks;
    static std::span<const param> params() {
        static const auto ps = Tag::build().done();
        return ps;
    }
    static expected<shape> infer(inputs in, args) { return in[0]; }
};

namespace tags {
inline param_builder rate(double fallback) { return param_builder{}.add("rate", real_in(0, 0.99), role::inert, fallback); }
struct dropout {
    static constexpr std::string_view name = "Dropout";
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static param_builder build() { return rate(0.5); }
};
struct gaussian_dropout {
    static constexpr std::string_view name = "GaussianDropout";
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static param_builder build() { return rate(0.5); }
};
struct alpha_dropout {
    static constexpr std::string_view name = "AlphaDropout";
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static param_builder build() { return rate(0.5); }
};
struct gaussian_noise {
    static constexpr std::string_view name = "GaussianNoise";
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static param_builder build() { return param_builder{}.add("stddev", real_in(0, 1), role::inert, 0.1); }
};
struct activity_regularization {
    static constexpr std::string_view name = "ActivityRegularization";
    static constexpr rank_set ranks = rank_set::between(2, 6);
    static param_builder build() { return param_builder{}.add("l1", real_in(0, 1), role::inert, 0.0).add("l2", real_in(0, 1), role::inert, 0.0); }
};
struct spatial_dropout1d {
    static constexpr std::string_view name = "SpatialDropout1D";
    static constexpr rank_set ranks = rank_set::of(3);
    static param_builder build() { return rate(0.5); }
};
struct spatial_dropout2d {
    static constexpr std::string_view name = "SpatialDropout2D";
    static constexpr rank_set ranks = rank_set::of(4);
    static param_builder build() { return rate(0.5); }
};
struct spatial_dropout3d {
    static constexpr std::string_view name = "SpatialDropout3D";
    static constexpr rank_set ranks = rank_set::of(5);
    static param_builder build() { return rate(0.5); }
};
}  // namespace tags

using dropout = regularization<tags::dropout>;
using gaussian_dropout = regularization<tags::gaussian_dropout>;
using gaussian_noise = regularization<tags::gaussian_noise>;
using activity_regularization = regularization<tags::activity_regularization>;
using alpha_dropout = regularization<tags::alpha_dropout>;
using spatial_dropout1d = regularization<tags::spatial_dropout1d>;
using spatial_dropout2d = regularization<tags::spatial_dropout2d>;
using spatial_dropout3d = regularization<tags::spatial_dropout3d>;

using reg_layers =
    layer_list<dropout, gaussian_dropout, gaussian_noise, activity_regularization, alpha_dropout, spatial_dropout1d, spatial_dropout2d, spatial_dropout3d>;

}  // namespace memo::layers
