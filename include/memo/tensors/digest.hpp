#pragma once
// A tensor's fingerprint: per tensor (or per node) a 64-bit digest of the exact values, for exact
// comparison, and the sum of absolute values, for comparison within a dtype's tolerance when a
// library is not bit-for-bit deterministic. The store keeps these instead of a run's tensors.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "../core/hash.hpp"
#include "tensor.hpp"

namespace memo {

struct digest {
    std::uint64_t hash = 0;
    double abs_sum = 0;  // finite values only; non-finite ones change the hash
    friend bool operator==(const digest&, const digest&) = default;
};

/// The digest of some tensors: dims, dtype and every value's bits.
inline digest digest_of(std::span<const tensor> ts) {
    hasher h;
    digest d;
    h.mix(ts.size());
    for (const auto& t : ts) {
        h.mix(t.dims.size());
        for (auto x : t.dims) h.mix(static_cast<std::uint64_t>(x));
        h.mix(static_cast<std::uint64_t>(t.type));
        for (double x : t.data) {
            h.mix(std::bit_cast<std::uint64_t>(x));
            if (std::isfinite(x)) d.abs_sum += std::abs(x);
        }
    }
    d.hash = h.value();
    return d;
}
inline digest digest_of(const tensor& t) { return digest_of(std::span<const tensor>(&t, 1)); }

}  // namespace memo
