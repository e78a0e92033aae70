#pragma once
// Abs, Square, StopGradient and ScaleShift: element-wise functions of one tensor that Keras has no
// layer class for (a Keras model writes them as tf ops). The metamorphic relations splice them into
// a model, e.g. the zero gate relu(ScaleShift(Square(Subtract(a, b)), scale=-1, shift=-1e-3)),
// which is exactly 0 on every backend. Outside the coverage universe.
#include "common.hpp"

namespace memo::layers {

/// What the four share: one input of rank 2 to 6; the output has its shape and dtype. The tag
/// gives the class name and the parameters.
template <class Tag>
struct elementwise_unary : named_by<Tag>, layer_kind<family::core, rank_set::between(2, 6), counted::no> {
    static expected<shape> infer(inputs in, args) { return in[0]; }
    static int64_t flops(const node_view& n) { return per_input_element(n); }
};

namespace tags {
inline param_builder no_params() { return {}; }
inline param_builder scale_and_shift() {
    return param_builder{}.add("scale", real_in(-1e6, 1e6), role::mode, 1.0).add("shift", real_in(-1e6, 1e6), role::mode, 0.0);
}
template <class_name Name, param_builder (*Build)() = no_params>
struct unary {
    static constexpr std::string_view name = Name.view();
    static param_builder build() { return Build(); }
};
}  // namespace tags

/// |x|: |-0| = +0, |NaN| = NaN, |-inf| = inf (tf.abs).
using absolute = elementwise_unary<tags::unary<"Abs">>;
/// x * x, rounded to the dtype (tf.square).
using square = elementwise_unary<tags::unary<"Square">>;
/// x (tf.stop_gradient): the identity forward, but a copy of its own on every backend.
using stop_gradient = elementwise_unary<tags::unary<"StopGradient">>;
/// scale * x + shift; the product is rounded to the dtype before the shift is added, as
/// at::add(at::mul(x, scale), shift) and ONNX's Add(Mul(x, scale), shift) round it.
using scale_shift = elementwise_unary<tags::unary<"ScaleShift", tags::scale_and_shift>>;

using elementwise_layers = layer_list<absolute, square, stop_gradient, scale_shift>;

}  // namespace memo::layers
