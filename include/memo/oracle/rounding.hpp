#pragma once
// The rounding rule: how far two results of one node may differ before the difference counts.
// One rule for every oracle that compares tensors (differential.hpp's localisation,
// metamorphic.hpp's outputs and gates); docs/oracles.md derives it.
//
// A node computed in a dtype of unit roundoff u rounds relative to the magnitudes it passes
// through, not to its output's: a sum rounds at the size of its terms, and an element-wise formula
// that subtracts a constant rounds at that constant (ELU's exp(x) - 1 is exact to u * 1 however
// small x is, so a library that writes it so differs from one that calls expm1 by 1e-7 at outputs of
// 1e-4: a relative difference of 1e-3 that no library would call a bug). So two results of node n
// differ beyond rounding only when
//
//     max |a - b|  >  tol(dtype) * S  +  8 u * A(n)  +  slack
//
//   S      the magnitude of n's float64 output (normwise: near-zero elements of a larger tensor
//          are judged at the tensor's scale, as allclose's atol judges them at 1)
//   A(n)   the magnitude n's formula rounds against: its activations' constants (elu, selu,
//          sigmoid, tanh, softplus, softmax, hard_sigmoid round at 1) and its class's own
//          (layer_def::rounds_at: ELU's alpha, Softmax's 1, a normalization's |x| / sqrt(eps),
//          since x * rstd - mean * rstd rounds at |x| * rstd even where the exact output is 0, a
//          recurrence's T / 4 times S, since it rounds its state every step); 0 for
//          formulas exact to u * |y|
//   slack  how much n's output moves when its inputs move by their own rounding (measured by the
//          caller; ill-conditioned nodes earn more), plus the dtype's smallest normal
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "../core/model.hpp"
#include "../layers/common.hpp"
#include "oracle.hpp"

namespace memo::oracle {

/// A(n): the magnitude node i of m rounds against besides its output, given the magnitudes of
/// its inputs and of its float64 output.
inline double rounds_at(const model& m, std::size_t i, double input_scale, double scale) {
    const node& n = m.nodes[i];
    double a = 0;
    if (n.layer->rounds_at) {
        std::vector<shape> in;
        for (int e : n.inputs) in.push_back(m[e].out);
        const auto r = n.layer->rounds_at(in, n.params);
        a = r.constant + r.per_input * input_scale + r.per_output * scale;
    }
    for (std::string_view p : {"activation", "recurrent_activation"})
        if (const int k = n.layer->param_index(p); k >= 0)
            if (const auto* s = std::get_if<std::string>(&n.params[static_cast<std::size_t>(k)])) a = std::max(a, layers::activation_rounds_at(*s));
    return a;
}

/// Units of roundoff of A(n) allowed: a formula with a constant rounds at u * A; kernels that
/// approximate exp or tanh by polynomials stay within a few u; 8 leaves a margin. (In bfloat16,
/// 8 u is 3 % of A already: more would hide real faults of half-precision kernels.)
inline constexpr double formula_units = 8;

/// The most two results of node i of m may differ by rounding alone (the rule above), given the
/// magnitudes of its float64 output and of its inputs, and the caller's measured slack; `like`:
/// the dtype whose rounding the two results carry (judged_as: a TF32 backend's float32 rounds
/// like float16), its range staying the node's own.
inline double rounding_bound(const model& m, std::size_t i, dtype like, double scale, double input_scale, double slack, const options& o = {}) {
    return tolerance(like, o) * scale + formula_units * unit_roundoff(like) * rounds_at(m, i, input_scale, scale) + slack + min_normal(m.nodes[i].type);
}
inline double rounding_bound(const model& m, std::size_t i, double scale, double input_scale, double slack, const options& o = {}) {
    return rounding_bound(m, i, m.nodes[i].type, scale, input_scale, slack, o);
}

/// The largest finite magnitude in t (0 for an empty tensor).
inline double magnitude(const tensor& t) {
    double m = 0;
    for (double x : t.data)
        if (std::isfinite(x)) m = std::max(m, std::abs(x));
    return m;
}

/// The largest magnitude among node i's inputs, given every node's values.
inline double input_magnitude(const model& m, std::size_t i, const std::vector<tensor>& values) {
    double s = 0;
    for (int e : m.nodes[i].inputs)
        if (static_cast<std::size_t>(e) < values.size()) s = std::max(s, magnitude(values[static_cast<std::size_t>(e)]));
    return s;
}

/// The rule's bound for node i with no measured slack, its magnitudes read from every node's
/// float64 values: what a whole-graph fault is judged by at each output, by the oracle and by
/// the reproducer that holds a compiled run against the eager one.
inline double unmeasured_bound(const model& m, std::size_t i, const std::vector<tensor>& values, const options& o = {}) {
    return rounding_bound(m, i, magnitude(values[i]), input_magnitude(m, i, values), 0.0, o);
}

/// Whether a difference goes beyond that bound (different dims always do).
inline bool beyond(const difference& d, double bound) noexcept { return d.shapes_differ || d.max_abs > bound; }

}  // namespace memo::oracle
