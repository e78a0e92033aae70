#pragma once
// Model inputs as pure functions of the model's seed: one tensor per Input node, `samples` samples
// in the batch, rounded to the input's dtype. By default uniform in [lo, hi), as MEMO draws them
// ([0, 1)). With `varied`, each Input node draws from one of several generators, picked by the
// model's seed (so the choice is recorded with the model, and a replay is exact): a fault that needs
// a negative value, an exact zero, a value past a ReLU's max_value or a large magnitude is reached
// only by inputs that hold one.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../core/model.hpp"
#include "../engine/rng.hpp"
#include "tensor.hpp"
#include "values.hpp"

namespace memo {

/// The input generators:
///   uniform     [lo, hi) of input_options (MEMO's [0, 1))
///   symmetric   [-1, 1)
///   tiny        [-2^-10, 2^-10): small values of both signs
///   wide        [-16, 16)
///   normal      N(0, 1)
///   sparse      [-1, 1) with about a third exact zeros
///   thresholds  values at and next to the thresholds of the model's layers (ReLU's max_value and
///               threshold, ThresholdedReLU's theta, 0), among [-2, 2)
///   large       magnitudes from 2^10 to 2^14 (float16) or 2^20, both signs: large, within the dtype
enum class input_kind : unsigned char { uniform, symmetric, tiny, wide, normal, sparse, thresholds, large };
inline constexpr std::array<std::string_view, 8> input_kind_names{"uniform", "symmetric", "tiny", "wide", "normal", "sparse", "thresholds", "large"};
constexpr std::string_view name_of(input_kind k) noexcept { return input_kind_names[static_cast<std::size_t>(k)]; }

struct input_options {
    std::int64_t samples = 2;
    double lo = 0.0, hi = 1.0;
    bool varied = false;  // a generator per Input node, picked by the model's seed; else uniform
    friend bool operator==(const input_options&, const input_options&) = default;
};
/// What memo-fuzz's commands draw inputs with unless told otherwise: a generator per input, which
/// reaches value classes MEMO's uniform [0, 1) (input_options{}) never does (docs/oracles.md).
inline constexpr input_options varied_inputs{.varied = true};

namespace detail::inputs {
inline rng input_rng(const model& m, int node, std::uint64_t salt) {
    std::uint64_t s = m.seed ^ salt ^ (static_cast<std::uint64_t>(node) * 0x5be0cd19137e2179ULL);
    return rng(splitmix64(s));
}
/// The thresholds of m's layers, and 0.
inline std::vector<double> thresholds(const model& m) {
    std::vector<double> t{0.0};
    for (const auto& n : m.nodes)
        for (std::size_t j = 0; j < n.params.size(); ++j) {
            if (is_threshold_param(n.layer->params[j].name))
                if (const auto* x = std::get_if<double>(&n.params[j])) t.push_back(*x);
        }
    return t;
}
}  // namespace detail::inputs

/// The generator Input node `node` of m draws from.
inline input_kind input_kind_of(const model& m, int node, const input_options& o) {
    if (!o.varied) return input_kind::uniform;
    auto r = detail::inputs::input_rng(m, node, 0x243f6a8885a308d3ULL);
    // MEMO's uniform inputs a quarter of the time; the others share the rest.
    if (r.chance(0.25)) return input_kind::uniform;
    return static_cast<input_kind>(1 + r.index(input_kind_names.size() - 1));
}

/// The generator of each of m's inputs, in the order of m.input_nodes().
inline std::vector<input_kind> input_kinds(const model& m, const input_options& o) {
    std::vector<input_kind> ks;
    for (int i : m.input_nodes()) ks.push_back(input_kind_of(m, i, o));
    return ks;
}

/// One value of generator k for an input of dtype t.
inline double draw_input(input_kind k, rng& r, dtype t, const input_options& o, const std::vector<double>& thresholds) {
    switch (k) {
        case input_kind::uniform: return r.uniform_real(o.lo, o.hi);
        case input_kind::symmetric: return r.uniform_real(-1, 1);
        case input_kind::tiny: return r.uniform_real(-0x1p-10, 0x1p-10);
        case input_kind::wide: return r.uniform_real(-16, 16);
        case input_kind::normal: {  // Box-Muller
            const double u = std::max(r.unit(), 0x1p-53), v = r.unit();
            return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
        }
        case input_kind::sparse: return r.chance(1.0 / 3) ? 0.0 : r.uniform_real(-1, 1);
        case input_kind::thresholds: {
            if (r.chance(0.5)) return r.uniform_real(-2, 2);
            const double at = thresholds[r.index(thresholds.size())];
            constexpr std::array<double, 7> step{0.0, 1e-3, -1e-3, 1e-2, -1e-2, 0.1, -0.1};
            return at + step[r.index(step.size())];
        }
        case input_kind::large: {
            const double top = t == dtype::float16 ? 14 : 20;
            return (r.chance(0.5) ? 1 : -1) * std::exp2(r.uniform_real(10, top));
        }
    }
    return 0.0;
}

/// The inputs of `m`, in the order of m.input_nodes().
inline std::vector<tensor> make_inputs(const model& m, const input_options& o = {}) {
    std::vector<tensor> out;
    std::vector<double> ts;
    for (int i : m.input_nodes()) {
        auto r = detail::inputs::input_rng(m, i, 0x1f83d9abfb41bd6bULL);
        const auto k = input_kind_of(m, i, o);
        if (k == input_kind::thresholds && ts.empty()) ts = detail::inputs::thresholds(m);
        tensor t(concrete(m[i].out, o.samples), m[i].type);
        for (auto& x : t.data) x = round_to(t.type, draw_input(k, r, t.type, o, ts));
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace memo
