#pragma once
// Parameter domains, after Google FuzzTest's: each can draw a value (init), change one
// (mutate), check one (validate), and, for coverage, split its values into buckets.
//
// A domain concept and five domains:
//   in_range(lo, hi)          integers lo..hi
//   tuple_of(n, in_range(..)) n integers, each in the range (kernel sizes, strides)
//   real_in(lo, hi)           reals in [lo, hi]
//   element_of({...})         one of the listed values (strings, integers, None)
//   bools()                   true or false
// plus int_list(lo, hi), a list of any length (the adapters' paddings), kept out of coverage. A
// type of the user's own that models the concept is a domain too (any_domain holds it).
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../engine/rng.hpp"
#include "value.hpp"

namespace memo {

/// How a parameter matters. shape: changes output shapes or what is computed where;
/// mode: changes what is computed; init: decides how weights are drawn; inert: regularizers,
/// constraints and other training-only settings that change nothing at inference.
enum class role : unsigned char { shape, mode, init, inert };

constexpr std::string_view name_of(role r) noexcept {
    switch (r) {
        case role::shape: return "shape";
        case role::mode: return "mode";
        case role::init: return "init";
        case role::inert: return "inert";
    }
    return "?";
}

/// Numeric domains have this many coverage buckets (MEMO's count); None adds one.
inline constexpr int numeric_buckets = 5;

/// The domain concept. Requires:
///   d.init(r)        -> value   a fresh draw
///   d.mutate(v, r)   -> value   a nearby or fresh value, different from v where the domain allows
///   d.validate(v)    -> bool    v belongs to the domain
///   d.buckets()      -> int     how many coverage buckets the values fall into
///   d.bucket_of(v)   -> int     v's bucket, in [0, buckets())
///   d.describe()     -> string  "in_range(1, 64)"
template <class D>
concept domain = requires(const D d, const value& v, rng& r) {
    { d.init(r) } -> std::convertible_to<value>;
    { d.mutate(v, r) } -> std::convertible_to<value>;
    { d.validate(v) } -> std::convertible_to<bool>;
    { d.buckets() } -> std::convertible_to<int>;
    { d.bucket_of(v) } -> std::convertible_to<int>;
    { d.describe() } -> std::convertible_to<std::string>;
};

namespace detail {
inline int linear_bucket(double x, double lo, double hi) noexcept {
    if (!(hi > lo)) return 0;
    const double t = (x - lo) / (hi - lo);
    return std::clamp(static_cast<int>(t * numeric_buckets), 0, numeric_buckets - 1);
}
inline std::int64_t step_int(std::int64_t x, std::int64_t lo, std::int64_t typical_hi, std::int64_t hi, rng& r) {
    const std::int64_t top = std::max(lo, std::min(hi, typical_hi));
    if (top == lo) return lo;
    for (int tries = 0; tries < 4; ++tries) {
        std::int64_t y = r.chance(0.5) ? x + (r.chance(0.5) ? 1 : -1) * r.uniform(1, std::max<std::int64_t>(1, (top - lo) / 4)) : r.uniform(lo, top);
        y = std::clamp(y, lo, hi);
        if (y != x) return y;
    }
    return x == lo ? lo + 1 : lo;
}
}  // namespace detail

/// Integers in [lo, hi]; draws and buckets use [lo, typical_hi] so generated models stay small,
/// larger values (from imported models) are valid and fall in the last bucket.
/// With `nullable`, None is also a value (Keras' strides=None) and has a bucket of its own.
struct int_range {
    std::int64_t lo = 0, hi = 0, typical_hi = 0;
    bool nullable = false;

    value init(rng& r) const {
        if (nullable && r.chance(1.0 / (numeric_buckets + 1))) return none;
        return r.uniform(lo, std::min(hi, typical_hi));
    }
    value mutate(const value& v, rng& r) const {
        if (nullable && !is_none(v) && r.chance(0.15)) return none;
        if (is_none(v)) return r.uniform(lo, std::min(hi, typical_hi));
        return detail::step_int(as_int(v), lo, typical_hi, hi, r);
    }
    bool validate(const value& v) const {
        if (is_none(v)) return nullable;
        auto p = std::get_if<std::int64_t>(&v);
        return p && *p >= lo && *p <= hi;
    }
    int buckets() const { return numeric_buckets + (nullable ? 1 : 0); }
    int bucket_of(const value& v) const {
        if (is_none(v)) return numeric_buckets;
        return detail::linear_bucket(static_cast<double>(as_int(v)), static_cast<double>(lo), static_cast<double>(std::min(hi, typical_hi)) + 1.0);
    }
    std::string describe() const {
        auto s = "in_range(" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
        return nullable ? "optional(" + s + ")" : s;
    }
};

/// `count` integers, each in an int_range (kernel_size=(3, 3)). Buckets follow the largest entry.
struct int_tuple {
    int count = 1;
    int_range each;

    value init(rng& r) const {
        if (each.nullable && r.chance(1.0 / (numeric_buckets + 1))) return none;
        // Square kernels and strides are the common case; keep them likely.
        const auto first = r.uniform(each.lo, std::min(each.hi, each.typical_hi));
        ints xs = ints::filled(count, first);
        if (r.chance(0.3))
            for (int i = 1; i < count; ++i) xs[i] = r.uniform(each.lo, std::min(each.hi, each.typical_hi));
        return xs;
    }
    value mutate(const value& v, rng& r) const {
        if (each.nullable && !is_none(v) && r.chance(0.15)) return none;
        if (is_none(v) || !std::holds_alternative<ints>(v)) return init(r);
        ints xs = std::get<ints>(v);
        if (r.chance(0.5)) {
            const auto y = detail::step_int(xs.max(), each.lo, each.typical_hi, each.hi, r);
            return ints::filled(count, y);
        }
        const int i = static_cast<int>(r.index(static_cast<std::size_t>(count)));
        xs[i] = detail::step_int(xs[i], each.lo, each.typical_hi, each.hi, r);
        return xs;
    }
    bool validate(const value& v) const {
        if (is_none(v)) return each.nullable;
        auto p = std::get_if<ints>(&v);
        if (!p || p->n != count) return false;
        return std::all_of(p->begin(), p->end(), [&](auto x) { return x >= each.lo && x <= each.hi; });
    }
    int buckets() const { return each.buckets(); }
    int bucket_of(const value& v) const {
        if (is_none(v)) return numeric_buckets;
        if (auto p = std::get_if<ints>(&v)) return each.bucket_of(value{p->max()});
        return each.bucket_of(v);
    }
    std::string describe() const { return "tuple_of<" + std::to_string(count) + ">(" + each.describe() + ")"; }
};

/// Reals in [lo, hi].
struct real_range {
    double lo = 0, hi = 1;
    bool nullable = false;

    value init(rng& r) const {
        if (nullable && r.chance(1.0 / (numeric_buckets + 1))) return none;
        return r.uniform_real(lo, hi);
    }
    value mutate(const value& v, rng& r) const {
        if (nullable && !is_none(v) && r.chance(0.15)) return none;
        const double x = as_real(v);
        const double y = r.chance(0.5) ? std::clamp(x + (hi - lo) * (r.unit() - 0.5) * 0.2, lo, hi) : r.uniform_real(lo, hi);
        return y == x ? value{r.uniform_real(lo, hi)} : value{y};
    }
    bool validate(const value& v) const {
        if (is_none(v)) return nullable;
        if (!std::holds_alternative<double>(v) && !std::holds_alternative<std::int64_t>(v)) return false;
        const double x = as_real(v);
        return x >= lo && x <= hi;
    }
    int buckets() const { return numeric_buckets + (nullable ? 1 : 0); }
    int bucket_of(const value& v) const { return is_none(v) ? numeric_buckets : detail::linear_bucket(as_real(v), lo, hi); }
    std::string describe() const {
        auto s = "real_in(" + to_string(value{lo}) + ", " + to_string(value{hi}) + ")";
        return nullable ? "optional(" + s + ")" : s;
    }
};

/// One of a list of values; each value is its own bucket.
struct choice {
    std::vector<value> options;

    value init(rng& r) const { return options[r.index(options.size())]; }
    value mutate(const value& v, rng& r) const {
        if (options.size() < 2) return options.front();
        for (;;) {
            const auto& w = options[r.index(options.size())];
            if (!(w == v)) return w;
        }
    }
    int index_of(const value& v) const {
        for (std::size_t i = 0; i < options.size(); ++i)
            if (options[i] == v) return static_cast<int>(i);
        return -1;
    }
    bool validate(const value& v) const { return index_of(v) >= 0; }
    int buckets() const { return static_cast<int>(options.size()); }
    int bucket_of(const value& v) const { return std::max(0, index_of(v)); }
    std::string describe() const {
        std::string s = "element_of(";
        for (std::size_t i = 0; i < options.size(); ++i) s += (i ? ", " : "") + to_string(options[i]);
        return s + ")";
    }
};

/// true or false.
struct boolean {
    value init(rng& r) const { return r.chance(0.5); }
    value mutate(const value& v, rng&) const { return !as_bool(v); }
    bool validate(const value& v) const { return std::holds_alternative<bool>(v); }
    int buckets() const { return 2; }
    int bucket_of(const value& v) const { return as_bool(v) ? 1 : 0; }
    std::string describe() const { return "bools()"; }
};

/// A list of any length with entries in [lo, hi] (the adapters' before/after amounts);
/// adapters stay outside the coverage universe, so it has one bucket.
struct int_list {
    std::int64_t lo = 0, hi = 0;

    value init(rng&) const { return ints{}; }
    value mutate(const value& v, rng& r) const {
        ints xs = std::holds_alternative<ints>(v) ? std::get<ints>(v) : ints{};
        if (xs.n) xs[static_cast<int>(r.index(static_cast<std::size_t>(xs.n)))] = r.uniform(lo, std::min<std::int64_t>(hi, lo + 4));
        return xs;
    }
    bool validate(const value& v) const {
        auto p = std::get_if<ints>(&v);
        return p && std::all_of(p->begin(), p->end(), [&](auto x) { return x >= lo && x <= hi; });
    }
    int buckets() const { return 1; }
    int bucket_of(const value&) const { return 0; }
    std::string describe() const { return "int_list(" + std::to_string(lo) + ", " + std::to_string(hi) + ")"; }
};

static_assert(domain<int_range> && domain<int_tuple> && domain<real_range> && domain<choice> && domain<boolean> && domain<int_list>);

/// A domain of the user's own (any type that models `domain`), held through an interface: what
/// any_domain keeps when it is given a type it does not list.
class custom_domain {
public:
    template <domain D>
    explicit custom_domain(D d) : p_(std::make_shared<held<D>>(std::move(d))) {}

    value init(rng& r) const { return p_->init(r); }
    value mutate(const value& v, rng& r) const { return p_->mutate(v, r); }
    bool validate(const value& v) const { return p_->validate(v); }
    int buckets() const { return p_->buckets(); }
    int bucket_of(const value& v) const { return p_->bucket_of(v); }
    std::string describe() const { return p_->describe(); }

private:
    struct base {
        virtual ~base() = default;
        virtual value init(rng& r) const = 0;
        virtual value mutate(const value& v, rng& r) const = 0;
        virtual bool validate(const value& v) const = 0;
        virtual int buckets() const = 0;
        virtual int bucket_of(const value& v) const = 0;
        virtual std::string describe() const = 0;
    };
    template <class D>
    struct held final : base {
        D d;
        explicit held(D x) : d(std::move(x)) {}
        value init(rng& r) const override { return d.init(r); }
        value mutate(const value& v, rng& r) const override { return d.mutate(v, r); }
        bool validate(const value& v) const override { return d.validate(v); }
        int buckets() const override { return d.buckets(); }
        int bucket_of(const value& v) const override { return d.bucket_of(v); }
        std::string describe() const override { return d.describe(); }
    };
    std::shared_ptr<const base> p_;
};

/// Any domain, chosen at run time (a layer's parameters are a list of these): one of the domains
/// above, or a user's own (custom_domain). A type that is not a domain is refused with a message
/// naming what it lacks.
struct any_domain {
    std::variant<int_range, int_tuple, real_range, choice, boolean, int_list, custom_domain> d;

    template <class D>
    requires(!std::same_as<std::remove_cvref_t<D>, any_domain>) any_domain(D x) : d(hold(std::move(x))) {}

    value init(rng& r) const {
        return std::visit([&](const auto& x) { return x.init(r); }, d);
    }
    value mutate(const value& v, rng& r) const {
        return std::visit([&](const auto& x) { return x.mutate(v, r); }, d);
    }
    bool validate(const value& v) const {
        return std::visit([&](const auto& x) { return x.validate(v); }, d);
    }
    int buckets() const {
        return std::visit([](const auto& x) { return x.buckets(); }, d);
    }
    int bucket_of(const value& v) const {
        return std::visit([&](const auto& x) { return x.bucket_of(v); }, d);
    }
    std::string describe() const {
        return std::visit([](const auto& x) { return x.describe(); }, d);
    }
    bool categorical() const { return std::holds_alternative<choice>(d) || std::holds_alternative<boolean>(d); }

private:
    template <class D>
    static constexpr bool listed = std::same_as<D, int_range> || std::same_as<D, int_tuple> || std::same_as<D, real_range> || std::same_as<D, choice> ||
                                   std::same_as<D, boolean> || std::same_as<D, int_list> || std::same_as<D, custom_domain>;
    template <class D>
    static decltype(d) hold(D x) {
        static_assert(
            requires(const D c, rng& r) {
                { c.init(r) } -> std::convertible_to<value>;
            },
            "a parameter domain needs init(memo::rng&) const -> memo::value: a fresh draw");
        static_assert(
            requires(const D c, const value& v, rng& r) {
                { c.mutate(v, r) } -> std::convertible_to<value>;
            },
            "a parameter domain needs mutate(const memo::value&, memo::rng&) const -> memo::value: a nearby or fresh value");
        static_assert(
            requires(const D c, const value& v) {
                { c.validate(v) } -> std::convertible_to<bool>;
            },
            "a parameter domain needs validate(const memo::value&) const -> bool: whether a value belongs to it");
        static_assert(
            requires(const D c, const value& v) {
                { c.buckets() } -> std::convertible_to<int>;
                { c.bucket_of(v) } -> std::convertible_to<int>;
            },
            "a parameter domain needs buckets() const -> int and bucket_of(const memo::value&) const -> int: how its values fall into coverage buckets");
        static_assert(
            requires(const D c) {
                { c.describe() } -> std::convertible_to<std::string>;
            },
            "a parameter domain needs describe() const -> std::string, say \"in_range(1, 64)\"");
        if constexpr (!domain<D>) return int_range{};  // unreachable: a static_assert above failed
        else if constexpr (listed<D>) return x;
        else return custom_domain(std::move(x));
    }
};
static_assert(domain<any_domain>);

// Factories, each in FuzzTest's words.

/// real_in(lo, hi) represents reals in [lo, hi]. Example: real_in(0, 1) for a dropout rate.
inline real_range real_in(double lo, double hi) { return {lo, hi, false}; }
/// in_range(lo, hi, typical_hi) represents the integers lo..hi, drawn from lo..typical_hi.
/// Example: in_range(1, 4096, 64) for filters.
inline int_range in_range(std::int64_t lo, std::int64_t hi, std::int64_t typical_hi) { return {lo, hi, typical_hi, false}; }
inline int_range in_range(std::int64_t lo, std::int64_t hi) { return {lo, hi, hi, false}; }
/// optional(in_range(...)) represents None or an integer. Example: strides=None for pooling.
inline int_range optional(int_range r) {
    r.nullable = true;
    return r;
}
/// optional(real_in(...)) represents None or a real. Example: ReLU's max_value.
inline real_range optional(real_range r) {
    r.nullable = true;
    return r;
}
inline int_tuple optional(int_tuple t) {
    t.each.nullable = true;
    return t;
}
/// tuple_of(n, in_range(...)) represents n integers. Example: tuple_of(2, in_range(1, 7)) for (3, 3).
inline int_tuple tuple_of(int n, int_range each) { return {n, each}; }
/// element_of({...}) represents one of the listed values. Example: element_of({"valid", "same"}).
inline choice element_of(std::initializer_list<value> xs) { return choice{std::vector<value>(xs)}; }
inline choice element_of(std::vector<value> xs) { return choice{std::move(xs)}; }
/// bools() represents true and false.
inline boolean bools() { return {}; }

}  // namespace memo
