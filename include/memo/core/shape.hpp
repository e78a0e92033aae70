#pragma once
// Tensor shapes, batch dimension included (index 0), as Keras writes them: (None, 28, 28, 1).
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace memo {

/// A shape of rank 1..max_rank. dims[0] is the batch dimension; `unknown` (-1) stands for None.
/// Fixed capacity: shapes are copied a lot in the hot loop and never allocate.
struct shape {
    static constexpr int max_rank = 8;
    static constexpr std::int64_t unknown = -1;

    std::array<std::int64_t, max_rank> dims{};
    int n = 0;

    shape() = default;
    shape(std::initializer_list<std::int64_t> ds) {
        for (auto d : ds) push(d);
    }
    /// A shape with an unknown batch dimension and these per-sample dimensions.
    static shape batched(std::span<const std::int64_t> sample) {
        shape s;
        s.push(unknown);
        for (auto d : sample) s.push(d);
        return s;
    }

    int rank() const noexcept { return n; }
    std::int64_t& operator[](int i) noexcept { return dims[static_cast<std::size_t>(i)]; }
    std::int64_t operator[](int i) const noexcept { return dims[static_cast<std::size_t>(i)]; }
    /// Index from the end: back(1) is the last dimension.
    std::int64_t back(int k = 1) const noexcept { return dims[static_cast<std::size_t>(n - k)]; }
    void push(std::int64_t d) noexcept {
        if (n < max_rank) dims[static_cast<std::size_t>(n++)] = d;
    }
    std::span<const std::int64_t> view() const noexcept { return {dims.data(), static_cast<std::size_t>(n)}; }
    /// The dimensions after the batch dimension.
    std::span<const std::int64_t> sample() const noexcept { return n == 0 ? view() : view().subspan(1); }
    /// Elements per sample (product of the non-batch dimensions).
    std::int64_t elements() const noexcept {
        std::int64_t p = 1;
        for (auto d : sample()) p *= d;
        return p;
    }

    friend bool operator==(const shape& a, const shape& b) noexcept { return a.n == b.n && std::equal(a.dims.begin(), a.dims.begin() + a.n, b.dims.begin()); }

    /// "(None, 28, 28, 1)"
    std::string str() const {
        std::string s = "(";
        for (int i = 0; i < n; ++i) {
            if (i) s += ", ";
            s += dims[static_cast<std::size_t>(i)] == unknown ? std::string("None") : std::to_string(dims[static_cast<std::size_t>(i)]);
        }
        if (n == 1) s += ",";
        return s + ")";
    }
};

}  // namespace memo
