#pragma once
// How the store encodes what it keeps beside models: per-node digests as one blob, and the input
// options of a run as readable text.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "../engine/error.hpp"
#include "../tensors/digest.hpp"
#include "../tensors/inputs.hpp"

namespace memo::store {

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

}  // namespace memo::store
