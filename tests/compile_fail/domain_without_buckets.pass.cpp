// Twin of domain_without_buckets.fail.cpp: the built-in domains convert, and so does a user's own
// domain that has all the concept asks for.
#include <memo/memo.hpp>

struct with_buckets {
    memo::value init(memo::rng&) const { return std::int64_t{1}; }
    memo::value mutate(const memo::value& v, memo::rng&) const { return v; }
    bool validate(const memo::value&) const { return true; }
    int buckets() const { return 1; }
    int bucket_of(const memo::value&) const { return 0; }
    std::string describe() const { return "one"; }
};

memo::any_domain d = memo::in_range(1, 8);
memo::any_domain mine = with_buckets{};
