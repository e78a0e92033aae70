#pragma once
// printf into a std::string: messages of the headers below the campaign, which use no formatting
// library (memo::memo links nothing compiled).
#include <cstdio>
#include <string>

namespace memo {

template <class... Args>
std::string printf_string(const char* format, Args... args) {
    const int n = std::snprintf(nullptr, 0, format, args...);
    if (n <= 0) return {};
    std::string s(static_cast<std::size_t>(n), '\0');
    std::snprintf(s.data(), s.size() + 1, format, args...);
    return s;
}

}  // namespace memo
