#pragma once
// What a tensor's values reach, in a few bytes: the classes of value it holds and its finite
// range. A traced run keeps one per node (run_result::node_spans, from tensors/values.hpp's
// span_of) beside its digest, so the campaign learns what each layer received without the
// tensors crossing a pipe; the coverage criterion layer_input_range (input_range.hpp) counts it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace memo {

/// The value classes a layer may receive. `beyond` is a layer's own: values on both sides of one
/// of its thresholds (ReLU's max_value, ThresholdedReLU's theta), so it is judged per consumer
/// from the finite range, not stored in a span's classes.
enum class value_class : unsigned char { negative, zero, small, large, non_finite, beyond };
inline constexpr std::array<std::string_view, 6> value_class_names{"negative", "zero", "small", "large", "non_finite", "beyond"};
constexpr std::string_view name_of(value_class c) noexcept { return value_class_names[static_cast<std::size_t>(c)]; }
constexpr std::uint8_t bit(value_class c) noexcept { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(c)); }

/// Below this magnitude (and not zero) a value is small; at or above `large_value` it is large.
inline constexpr double small_value = 0x1p-10, large_value = 0x1p10;

/// The parameters that set a threshold a layer's inputs may fall either side of (ReLU's max_value
/// and threshold, ThresholdedReLU's theta): what the `thresholds` input generator aims at and what
/// the value class `beyond` is judged against.
inline bool is_threshold_param(std::string_view p) noexcept { return p == "max_value" || p == "threshold" || p == "theta"; }

/// The classes and finite range of some values.
struct value_span {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    std::uint8_t classes = 0;

    void add(double x) noexcept {
        if (!std::isfinite(x)) {
            classes |= bit(value_class::non_finite);
            return;
        }
        lo = std::min(lo, x), hi = std::max(hi, x);
        const double a = std::abs(x);
        if (x < 0) classes |= bit(value_class::negative);
        if (x == 0) classes |= bit(value_class::zero);
        else if (a < small_value) classes |= bit(value_class::small);
        if (a >= large_value) classes |= bit(value_class::large);
    }
    void merge(const value_span& o) noexcept {
        lo = std::min(lo, o.lo), hi = std::max(hi, o.hi);
        classes |= o.classes;
    }
    bool has(value_class c) const noexcept { return classes & bit(c); }
    /// Whether finite values lie on both sides of t.
    bool straddles(double t) const noexcept { return lo < t && t < hi; }
    friend bool operator==(const value_span&, const value_span&) = default;
};

}  // namespace memo
