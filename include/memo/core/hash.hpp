#pragma once
// Small, stable 64-bit hashing (the same on every platform and run), used for structural
// model hashes and coverage keys.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace memo {

struct hasher {
    std::uint64_t h = 0xcbf29ce484222325ULL;

    constexpr hasher& mix(std::uint64_t x) noexcept {
        h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
        return *this;
    }
    constexpr hasher& mix(std::string_view s) noexcept {
        std::uint64_t x = 0xcbf29ce484222325ULL;
        for (unsigned char c : s) x = (x ^ c) * 0x100000001b3ULL;
        return mix(x).mix(s.size());
    }
    constexpr std::uint64_t value() const noexcept { return h; }
};

/// 16 hex digits.
inline std::string hex(std::uint64_t x) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(x));
    return b;
}

}  // namespace memo
