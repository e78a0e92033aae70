#pragma once
// Element types a layer can run in.
#include <array>
#include <optional>
#include <string_view>

namespace memo {

enum class dtype : unsigned char { float16, bfloat16, float32, float64 };

inline constexpr std::array<dtype, 4> all_dtypes{dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};

constexpr std::string_view name_of(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return "float16";
        case dtype::bfloat16: return "bfloat16";
        case dtype::float32: return "float32";
        case dtype::float64: return "float64";
    }
    return "?";
}

/// Parses a dtype name; accepts the aliases Keras and NumPy use ("half", "float", "double").
constexpr std::optional<dtype> parse_dtype(std::string_view s) noexcept {
    if (s == "float16" || s == "half") return dtype::float16;
    if (s == "bfloat16") return dtype::bfloat16;
    if (s == "float32" || s == "float") return dtype::float32;
    if (s == "float64" || s == "double") return dtype::float64;
    return std::nullopt;
}

}  // namespace memo
