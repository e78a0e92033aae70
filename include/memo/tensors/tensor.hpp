#pragma once
// The tensor every backend hands in and out: concrete dimensions (batch included), row-major,
// values held as double. A float32, float16 or bfloat16 run stores values its dtype can represent
// exactly, so the oracle compares backends without a second copy per dtype.
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "../core/dtype.hpp"
#include "../core/shape.hpp"

namespace memo {

struct tensor {
    std::vector<std::int64_t> dims;
    std::vector<double> data;
    dtype type = dtype::float32;

    tensor() = default;
    tensor(std::vector<std::int64_t> d, dtype t = dtype::float32) : dims(std::move(d)), data(count(dims)), type(t) {}

    static std::int64_t count(const std::vector<std::int64_t>& d) { return std::accumulate(d.begin(), d.end(), std::int64_t{1}, std::multiplies<>()); }
    std::int64_t size() const noexcept { return static_cast<std::int64_t>(data.size()); }
    int rank() const noexcept { return static_cast<int>(dims.size()); }
    double& operator[](std::int64_t i) noexcept { return data[static_cast<std::size_t>(i)]; }
    double operator[](std::int64_t i) const noexcept { return data[static_cast<std::size_t>(i)]; }

    /// Whether any element is NaN or infinite.
    bool has_non_finite() const noexcept {
        for (double x : data)
            if (!std::isfinite(x)) return true;
        return false;
    }
    /// "2x8x8x3"
    std::string dims_str() const {
        std::string s;
        for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
        return s.empty() ? "scalar" : s;
    }
    friend bool operator==(const tensor&, const tensor&) = default;
};

/// Rounds x to the nearest value of dtype t (Eigen's half and bfloat16 round to nearest even).
inline double round_to(dtype t, double x) noexcept {
    switch (t) {
        case dtype::float16: return static_cast<double>(static_cast<float>(Eigen::half(static_cast<float>(x))));
        case dtype::bfloat16: return static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(x))));
        case dtype::float32: return static_cast<double>(static_cast<float>(x));
        case dtype::float64: return x;
    }
    return x;
}

/// The unit roundoff of dtype t: half the gap between 1 and the next value.
constexpr double unit_roundoff(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return 0x1p-11;
        case dtype::bfloat16: return 0x1p-8;
        case dtype::float32: return 0x1p-24;
        case dtype::float64: return 0x1p-53;
    }
    return 0x1p-24;
}

/// The smallest positive normal value of dtype t.
constexpr double min_normal(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return 0x1p-14;
        case dtype::bfloat16:
        case dtype::float32: return 0x1p-126;
        case dtype::float64: return 0x1p-1022;
    }
    return 0x1p-126;
}

/// The largest finite value of dtype t.
constexpr double max_finite(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return 65504.0;
        case dtype::bfloat16: return 0x1.fep127;
        case dtype::float32: return 0x1.fffffep127;
        case dtype::float64: return 0x1.fffffffffffffp1023;
    }
    return 0x1.fffffep127;
}

/// The concrete dimensions of a model shape for a batch of `batch` samples.
inline std::vector<std::int64_t> concrete(const shape& s, std::int64_t batch) {
    std::vector<std::int64_t> d(s.view().begin(), s.view().end());
    if (!d.empty()) d[0] = batch;
    for (auto& x : d)
        if (x < 0) x = batch;
    return d;
}

}  // namespace memo
