#pragma once
// Errors and expected values.
//
// Failures that the hot loop expects (a mutant that fails shape inference, a backend that
// rejects a model) are values: memo::expected<T>. Failures at the API edge (a bad file, bad
// JSON, an unknown layer class) throw memo::error, whose message names the input and the cause.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace memo {

/// The exception thrown at the API edge. what() names the input and the cause.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The reason an expected value is missing.
struct failure {
    std::string reason;
};

/// Builds the failure side of an expected: `return fail("kernel larger than input");`
inline failure fail(std::string reason) { return failure{std::move(reason)}; }

/// A value or the reason it could not be made (std::expected is C++23; this is its small core).
template <class T>
class [[nodiscard]] expected {
public:
    expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    expected(failure f) : v_(std::in_place_index<1>, std::move(f)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & {
        check();
        return std::get<0>(v_);
    }
    const T& value() const& {
        check();
        return std::get<0>(v_);
    }
    T&& value() && {
        check();
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return std::get<0>(v_); }
    const T& operator*() const& { return std::get<0>(v_); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }

    const std::string& reason() const { return std::get<1>(v_).reason; }
    const failure& error() const { return std::get<1>(v_); }

private:
    void check() const {
        if (!has_value()) throw memo::error("expected has no value: " + std::get<1>(v_).reason);
    }
    std::variant<T, failure> v_;
};

/// expected<void>: success or a reason.
template <>
class [[nodiscard]] expected<void> {
public:
    expected() = default;
    expected(failure f) : failed_(true), f_(std::move(f)) {}
    bool has_value() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return !failed_; }
    const std::string& reason() const { return f_.reason; }
    const failure& error() const { return f_; }

private:
    bool failed_ = false;
    failure f_;
};

}  // namespace memo
