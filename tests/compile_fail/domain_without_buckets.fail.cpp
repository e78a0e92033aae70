// A domain must say how its values fall into coverage buckets; without buckets()/bucket_of()
// it cannot become a parameter domain, and the compiler says so. Twin: domain_without_buckets.pass.cpp.
// memo-expect-error: a parameter domain needs buckets\(\) const -> int
#include <memo/memo.hpp>

struct no_buckets {
    memo::value init(memo::rng&) const { return std::int64_t{1}; }
    memo::value mutate(const memo::value& v, memo::rng&) const { return v; }
    bool validate(const memo::value&) const { return true; }
    std::string describe() const { return "one"; }
};

memo::any_domain d = no_buckets{};
