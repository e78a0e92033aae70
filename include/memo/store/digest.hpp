#pragma once
// What the store keeps of a run instead of its tensors: per tensor (or per node) a 64-bit digest
// of the exact values, for exact comparison, and the sum of absolute values, for comparison
// within a dtype's tolerance when a library is not bit-for-bit deterministic.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "../core/hash.hpp"
#include "../core/model.hpp"
#include "../exec/inputs.hpp"
#include "../exec/tensor.hpp"

namespace memo::store {

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

/// Per-node digests as a blob (16 bytes a node) and back.
inline std::vector<std::byte> pack(const std::vector<digest>& ds) {
    std::vector<std::byte> b(ds.size() * 16);
    for (std::size_t i = 0; i < ds.size(); ++i) {
        std::memcpy(b.data() + 16 * i, &ds[i].hash, 8);
        std::memcpy(b.data() + 16 * i + 8, &ds[i].abs_sum, 8);
    }
    return b;
}
inline std::vector<digest> unpack(std::span<const std::byte> b) {
    std::vector<digest> ds(b.size() / 16);
    for (std::size_t i = 0; i < ds.size(); ++i) {
        std::memcpy(&ds[i].hash, b.data() + 16 * i, 8);
        std::memcpy(&ds[i].abs_sum, b.data() + 16 * i + 8, 8);
    }
    return ds;
}

/// A model's identity for memoisation: its structure (structural_hash) and what structural_hash
/// leaves out but a run depends on, its weight seed and weight edits.
inline std::uint64_t model_key(const model& m) {
    hasher h;
    h.mix(structural_hash(m)).mix(m.seed).mix(m.weight_edits.size());
    for (const auto& e : m.weight_edits)
        h.mix(static_cast<std::uint64_t>(e.what)).mix(static_cast<std::uint64_t>(e.node)).mix(std::bit_cast<std::uint64_t>(e.amount)).mix(e.seed);
    return h.value();
}

/// Input options as the store writes them, "samples:lo:hi", with ":varied" when each input draws
/// from a generator of its own (readable, and parsed back by replay).
inline std::string inputs_text(const input_options& in) {
    char b[96];
    std::snprintf(b, sizeof b, "%lld:%.17g:%.17g%s", static_cast<long long>(in.samples), in.lo, in.hi, in.varied ? ":varied" : "");
    return b;
}
inline input_options inputs_from_text(const std::string& s) {
    input_options in;
    long long n = 2;
    int used = 0;
    if (std::sscanf(s.c_str(), "%lld:%lf:%lf%n", &n, &in.lo, &in.hi, &used) != 3) throw error("bad input options '" + s + "' in the store");
    const std::string rest = s.substr(static_cast<std::size_t>(used));
    if (rest == ":varied") in.varied = true;
    else if (!rest.empty()) throw error("bad input options '" + s + "' in the store");
    in.samples = n;
    return in;
}

/// 16 hex digits.
inline std::string hex(std::uint64_t x) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(x));
    return b;
}

}  // namespace memo::store
