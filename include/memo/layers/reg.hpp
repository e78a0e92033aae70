#pragma once
// LReg: Dropout, GaussianDropout, GaussianNoise, ActivityRegularization, AlphaDropout,
// SpatialDropout1D/2D/3D. All are the identity at inference; their settings are inert.
#include "common.hpp"

namespace memo::layers {

/// An identity-at-inference layer; its tag gives the class name, the ranks and the parameters.
template <class Tag>
struct regularization : named_by<Tag>, layer_kind<family::reg, Tag::ranks> {
    static expected<shape> infer(inputs in, args) { return in[0]; }
};

namespace tags {
/// A regularization layer's tag: its class name, the ranks it takes and its parameters.
template <class_name Name, rank_set Ranks, param_builder (*Build)()>
struct inert {
    static constexpr std::string_view name = Name.view();
    static constexpr rank_set ranks = Ranks;
    static param_builder build() { return Build(); }
};
inline param_builder rate() { return param_builder{}.add("rate", real_in(0, 0.99), role::inert, 0.5); }
inline param_builder stddev() { return param_builder{}.add("stddev", real_in(0, 1), role::inert, 0.1); }
inline param_builder l1_l2() { return param_builder{}.add("l1", real_in(0, 1), role::inert, 0.0).add("l2", real_in(0, 1), role::inert, 0.0); }
constexpr rank_set any_rank = rank_set::between(2, 6);
}  // namespace tags

using dropout = regularization<tags::inert<"Dropout", tags::any_rank, tags::rate>>;
using gaussian_dropout = regularization<tags::inert<"GaussianDropout", tags::any_rank, tags::rate>>;
using gaussian_noise = regularization<tags::inert<"GaussianNoise", tags::any_rank, tags::stddev>>;
using activity_regularization = regularization<tags::inert<"ActivityRegularization", tags::any_rank, tags::l1_l2>>;
using alpha_dropout = regularization<tags::inert<"AlphaDropout", tags::any_rank, tags::rate>>;
using spatial_dropout1d = regularization<tags::inert<"SpatialDropout1D", rank_set::of(3), tags::rate>>;
using spatial_dropout2d = regularization<tags::inert<"SpatialDropout2D", rank_set::of(4), tags::rate>>;
using spatial_dropout3d = regularization<tags::inert<"SpatialDropout3D", rank_set::of(5), tags::rate>>;

using reg_layers =
    layer_list<dropout, gaussian_dropout, gaussian_noise, activity_regularization, alpha_dropout, spatial_dropout1d, spatial_dropout2d, spatial_dropout3d>;

}  // namespace memo::layers
