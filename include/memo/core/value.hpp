#pragma once
// Parameter values: None, a bool, an integer, a real, a string, or a short list of integers
// (kernel sizes, strides, paddings as flat before/after pairs).
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <variant>

#include "hash.hpp"

namespace memo {

struct none_t {
    friend bool operator==(none_t, none_t) noexcept { return true; }
};
inline constexpr none_t none{};

/// A list of up to 12 integers, stored inline.
struct ints {
    static constexpr int capacity = 12;
    std::array<std::int64_t, capacity> v{};
    int n = 0;

    ints() = default;
    ints(std::initializer_list<std::int64_t> xs) {
        for (auto x : xs) push(x);
    }
    static ints filled(int count, std::int64_t x) {
        ints r;
        for (int i = 0; i < count; ++i) r.push(x);
        return r;
    }
    void push(std::int64_t x) noexcept {
        if (n < capacity) v[static_cast<std::size_t>(n++)] = x;
    }
    int size() const noexcept { return n; }
    std::int64_t operator[](int i) const noexcept { return v[static_cast<std::size_t>(i)]; }
    std::int64_t& operator[](int i) noexcept { return v[static_cast<std::size_t>(i)]; }
    const std::int64_t* begin() const noexcept { return v.data(); }
    const std::int64_t* end() const noexcept { return v.data() + n; }
    std::int64_t max() const noexcept { return n ? *std::max_element(begin(), end()) : 0; }
    friend bool operator==(const ints& a, const ints& b) noexcept { return a.n == b.n && std::equal(a.begin(), a.end(), b.begin()); }
};

using value = std::variant<none_t, bool, std::int64_t, double, std::string, ints>;

inline bool is_none(const value& v) noexcept { return std::holds_alternative<none_t>(v); }
inline std::int64_t as_int(const value& v) noexcept {
    if (auto p = std::get_if<std::int64_t>(&v)) return *p;
    if (auto p = std::get_if<ints>(&v); p && p->n) return (*p)[0];
    if (auto p = std::get_if<bool>(&v)) return *p;
    if (auto p = std::get_if<double>(&v)) return static_cast<std::int64_t>(*p);
    return 0;
}
inline double as_real(const value& v) noexcept {
    if (auto p = std::get_if<double>(&v)) return *p;
    if (auto p = std::get_if<std::int64_t>(&v)) return static_cast<double>(*p);
    return 0.0;
}
inline bool as_bool(const value& v) noexcept {
    if (auto p = std::get_if<bool>(&v)) return *p;
    return as_int(v) != 0;
}
inline std::string_view as_str(const value& v) noexcept {
    if (auto p = std::get_if<std::string>(&v)) return *p;
    return {};
}
/// An integer list of `count` entries; a single integer is broadcast (Keras accepts 3 for (3, 3)).
inline ints as_ints(const value& v, int count) {
    if (auto p = std::get_if<ints>(&v)) {
        if (p->n == count) return *p;
        if (p->n == 1) return ints::filled(count, (*p)[0]);
        return *p;
    }
    return ints::filled(count, as_int(v));
}

/// Text form used in tables and messages: None, true, 3, 0.5, 'same', (3, 3).
inline std::string to_string(const value& v) {
    struct visitor {
        std::string operator()(none_t) const { return "None"; }
        std::string operator()(bool b) const { return b ? "true" : "false"; }
        std::string operator()(std::int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const {
            std::string s = std::to_string(d);
            while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
            return s;
        }
        std::string operator()(const std::string& s) const { return "'" + s + "'"; }
        std::string operator()(const ints& xs) const {
            std::string s = "(";
            for (int i = 0; i < xs.n; ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
            return s + (xs.n == 1 ? ",)" : ")");
        }
    };
    return std::visit(visitor{}, v);
}

inline void hash_value(hasher& h, const value& v) {
    h.mix(v.index());
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, none_t>) {
            } else if constexpr (std::is_same_v<T, std::string>) {
                h.mix(std::string_view(x));
            } else if constexpr (std::is_same_v<T, ints>) {
                h.mix(static_cast<std::uint64_t>(x.n));
                for (auto i : x) h.mix(static_cast<std::uint64_t>(i));
            } else if constexpr (std::is_same_v<T, double>) {
                std::uint64_t bits;
                static_assert(sizeof bits == sizeof x);
                __builtin_memcpy(&bits, &x, sizeof bits);
                h.mix(bits);
            } else {
                h.mix(static_cast<std::uint64_t>(x));
            }
        },
        v);
}

}  // namespace memo
