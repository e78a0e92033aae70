#pragma once
// The one random number generator: xoshiro256** seeded through splitmix64.
// Its whole state is four words, so a campaign can save and restore it exactly.
#include <array>
#include <cstdint>
#include <span>

namespace memo {

namespace detail {
__extension__ typedef unsigned __int128 uint128;  // a GCC/Clang extension; __extension__ keeps -Wpedantic quiet
}

/// splitmix64: used to seed and to derive independent streams from (seed, node, slot).
constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

class rng {
public:
    using result_type = std::uint64_t;
    explicit rng(std::uint64_t seed = 0) noexcept { reseed(seed); }

    void reseed(std::uint64_t seed) noexcept {
        for (auto& w : s_) w = splitmix64(seed);
    }

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return ~result_type{0}; }

    result_type operator()() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    /// Uniform integer in [lo, hi] (inclusive); lo > hi gives lo.
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) noexcept {
        if (hi <= lo) return lo;
        const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
        if (span == 0) return static_cast<std::int64_t>((*this)());  // full 64-bit range
        return lo + static_cast<std::int64_t>(bounded(span));
    }
    /// Uniform index in [0, n).
    std::size_t index(std::size_t n) noexcept { return n == 0 ? 0 : static_cast<std::size_t>(bounded(n)); }
    /// Uniform real in [0, 1).
    double unit() noexcept { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
    double uniform_real(double lo, double hi) noexcept { return lo + (hi - lo) * unit(); }
    bool chance(double p) noexcept { return unit() < p; }

    template <class T>
    const T& pick(std::span<const T> xs) noexcept {
        return xs[index(xs.size())];
    }

    const std::array<std::uint64_t, 4>& state() const noexcept { return s_; }
    void set_state(const std::array<std::uint64_t, 4>& s) noexcept { s_ = s; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    // Lemire's nearly divisionless bounded draw.
    std::uint64_t bounded(std::uint64_t n) noexcept {
        detail::uint128 m = static_cast<detail::uint128>((*this)()) * n;
        auto low = static_cast<std::uint64_t>(m);
        if (low < n) {
            const std::uint64_t t = (0 - n) % n;
            while (low < t) {
                m = static_cast<detail::uint128>((*this)()) * n;
                low = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }
    std::array<std::uint64_t, 4> s_{};
};

}  // namespace memo
