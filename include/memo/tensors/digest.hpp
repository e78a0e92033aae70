#pragma once
// A tensor's fingerprint: per tensor (or per node) a 64-bit digest of the exact values, for exact
// comparison, and the sum of absolute values, for comparison within a dtype's tolerance when a
// library is not bit-for-bit deterministic. The store keeps these instead of a run's tensors.
//
// A traced run takes one of every node's output, with its value span (coverage/value_span.hpp):
// digest_and_span reads the values once for both, in four interleaved lanes (hash, sum and range
// each), so that no chain of dependent multiplications or additions sets the pace. It is a
// campaign's most frequent loop over tensor values.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "../core/hash.hpp"
#include "values.hpp"

namespace memo {

struct digest {
    std::uint64_t hash = 0;
    double abs_sum = 0;  // finite values only; non-finite ones change the hash
    friend bool operator==(const digest&, const digest&) = default;
};

namespace detail::digests {

/// One pass over some values: their hash, the sum of the finite magnitudes, and what a value span
/// needs (the finite range, the least nonzero finite magnitude, whether any is zero or not finite).
struct scan {
    static constexpr std::size_t lanes = 4;
    static constexpr double inf = std::numeric_limits<double>::infinity();
    std::array<std::uint64_t, lanes> hash{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL};
    std::array<double, lanes> sum{}, lo{inf, inf, inf, inf}, hi{-inf, -inf, -inf, -inf}, least{inf, inf, inf, inf};
    std::array<bool, lanes> zero{}, non_finite{};

    void step(std::size_t k, double x) noexcept {
        const auto bits = std::bit_cast<std::uint64_t>(x);
        hash[k] = (hash[k] ^ bits) * 0x9e3779b97f4a7c15ULL;  // odd: each step is a bijection, no value is lost
        constexpr std::uint64_t exponent = 0x7ff0000000000000ULL;
        const bool finite = (bits & exponent) != exponent;
        const double a = std::abs(x);
        sum[k] += finite ? a : 0.0;
        lo[k] = std::min(lo[k], finite ? x : inf);
        hi[k] = std::max(hi[k], finite ? x : -inf);
        least[k] = std::min(least[k], finite && a != 0 ? a : inf);
        zero[k] = zero[k] || x == 0;
        non_finite[k] = non_finite[k] || !finite;
    }
    void over(std::span<const double> xs) noexcept {
        const double* p = xs.data();
        const std::size_t n = xs.size();
        std::size_t i = 0;
        // The loop over the lanes unrolled: then each lane stays in a register (-O2 alone does not
        // unroll it, and the scan takes 1.7 times as long: 1.63 ns a value against 0.98).
        for (; i + lanes <= n; i += lanes)
#pragma GCC unroll 4
            for (std::size_t k = 0; k < lanes; ++k) step(k, p[i + k]);
        for (std::size_t k = 0; i < n; ++i, ++k) step(k, p[i]);
    }

    std::uint64_t hash_value() const noexcept {
        hasher h;
        for (auto x : hash) h.mix(x);
        return h.value();
    }
    double abs_sum() const noexcept { return (sum[0] + sum[1]) + (sum[2] + sum[3]); }
    /// The classes as value_span::add would find them one value at a time.
    value_span span() const noexcept {
        value_span s;
        double least_all = inf;
        for (std::size_t k = 0; k < lanes; ++k) {
            s.lo = std::min(s.lo, lo[k]), s.hi = std::max(s.hi, hi[k]), least_all = std::min(least_all, least[k]);
            if (zero[k]) s.classes |= bit(value_class::zero);
            if (non_finite[k]) s.classes |= bit(value_class::non_finite);
        }
        if (s.lo < 0) s.classes |= bit(value_class::negative);
        if (least_all < small_value) s.classes |= bit(value_class::small);
        if (std::max(-s.lo, s.hi) >= large_value) s.classes |= bit(value_class::large);
        return s;
    }
};

/// Mixes t's dims, dtype and values (their lanes' hash) into h; the scan that read them is kept
/// for the sum and the span.
inline scan scanned(hasher& h, const tensor& t) {
    h.mix(t.dims.size());
    for (auto x : t.dims) h.mix(static_cast<std::uint64_t>(x));
    h.mix(static_cast<std::uint64_t>(t.type));
    scan s;
    s.over(t.data);
    h.mix(s.hash_value());
    return s;
}

}  // namespace detail::digests

/// The digest of some tensors: dims, dtype and every value's bits.
inline digest digest_of(std::span<const tensor> ts) {
    hasher h;
    digest d;
    h.mix(ts.size());
    for (const auto& t : ts) d.abs_sum += detail::digests::scanned(h, t).abs_sum();
    d.hash = h.value();
    return d;
}
inline digest digest_of(const tensor& t) { return digest_of(std::span<const tensor>(&t, 1)); }

/// A tensor's digest (as digest_of, which mixes the count of one tensor first) and value span (as
/// span_of), from one pass over its values.
inline std::pair<digest, value_span> digest_and_span(const tensor& t) {
    hasher h;
    h.mix(std::uint64_t{1});
    const auto s = detail::digests::scanned(h, t);
    return {digest{h.value(), s.abs_sum()}, s.span()};
}

}  // namespace memo
