#pragma once
// What the backends' tests (torch, onnx, tfjs, cuda) compare outputs and name models with.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <memo/all.hpp>
#include <memo/backends/reference/interpreter.hpp>

namespace test {

/// max |a - b| over max(1, max |b|): 0 for identical tensors, infinite when dims differ or NaN
/// and infinities sit in different places. Below magnitude 1 the bound is absolute: an output
/// that cancels to zero (LayerNormalization over an axis of size 1) keeps the rounding noise of
/// its terms, which are of the inputs' magnitude.
inline double relative_error(const memo::tensor& a, const memo::tensor& b) {
    if (a.dims != b.dims) return std::numeric_limits<double>::infinity();
    double diff = 0, scale = 1;
    for (std::int64_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
            if (!(std::isnan(a[i]) && std::isnan(b[i])) && a[i] != b[i]) return std::numeric_limits<double>::infinity();
            continue;
        }
        diff = std::max(diff, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(b[i]));
    }
    return diff / scale;
}

/// How far the reference's float64 output moves from `truth` when every input is nudged by the
/// unit roundoff `u`, up or down at random: what rounding the inputs to a dtype alone does to the
/// result, the yardstick for an ill-conditioned model (an exponential recurrence) in that dtype.
inline double input_rounding_drift(memo::reference::interpreter& ref, const memo::model& m, std::vector<memo::tensor> inputs, const memo::tensor& truth,
                                   double u, std::uint64_t seed) {
    memo::rng r(seed);
    for (auto& x : inputs)
        for (auto& v : x.data) v *= 1.0 + u * (r.chance(0.5) ? 1.0 : -1.0);
    const auto moved = ref.run(m, inputs, {false, {}, memo::dtype::float64});
    if (!moved.ok()) {
        ADD_FAILURE() << "the reference failed on nudged inputs: " << moved.message;
        return 0;
    }
    return relative_error(moved.outputs.at(0), truth);
}

/// A model's last layer for a failure message: class, dtype, input shapes and the parameters
/// that act at inference.
inline std::string describe(const memo::model& m) {
    const auto& n = m.nodes.back();
    std::string s = std::string(n.layer->name) + " " + std::string(name_of(n.type)) + " on ";
    for (int i : n.inputs) s += m[i].out.str() + " ";
    for (std::size_t p = 0; p < n.params.size(); ++p)
        if (n.layer->params[p].what != memo::role::inert) s += std::string(n.layer->params[p].name) + "=" + memo::to_string(n.params[p]) + " ";
    return s;
}

}  // namespace test
