#pragma once
// Model inputs as pure functions of the model's seed: one tensor per Input node, `samples` samples
// in the batch, uniform in [lo, hi) as MEMO draws them ([0, 1) by default), rounded to the input's
// dtype.
#include <cstdint>
#include <vector>

#include "../core/model.hpp"
#include "../core/rng.hpp"
#include "tensor.hpp"

namespace memo {

struct input_options {
    std::int64_t samples = 2;
    double lo = 0.0, hi = 1.0;
    friend bool operator==(const input_options&, const input_options&) = default;
};

/// The inputs of `m`, in the order of m.input_nodes().
inline std::vector<tensor> make_inputs(const model& m, const input_options& o = {}) {
    std::vector<tensor> out;
    for (int i : m.input_nodes()) {
        std::uint64_t s = m.seed ^ 0x1f83d9abfb41bd6bULL ^ (static_cast<std::uint64_t>(i) * 0x5be0cd19137e2179ULL);
        rng r(splitmix64(s));
        tensor t(concrete(m[i].out, o.samples), m[i].type);
        for (auto& x : t.data) x = round_to(t.type, r.uniform_real(o.lo, o.hi));
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace memo
