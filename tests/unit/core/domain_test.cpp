// Every parameter domain of every layer: draws stay in the domain, mutations stay in it and
// change the value, buckets are in range, and Keras' defaults are valid values.
#include "../support.hpp"

namespace test_core_domain_test {

namespace {

class EveryLayer : public ::testing::TestWithParam<std::size_t> {};

TEST_P(EveryLayer, DomainsDrawMutateValidateBucket) {
    const auto& L = test::reg()[GetParam()];
    memo::rng r(GetParam() + 1);
    for (const auto& p : L.params) {
        SCOPED_TRACE(std::string(L.name) + "." + std::string(p.name) + " " + p.dom.describe());
        EXPECT_TRUE(p.dom.validate(p.fallback)) << "default " << memo::to_string(p.fallback);
        EXPECT_GE(p.dom.buckets(), 1);
        for (int i = 0; i < 200; ++i) {
            const auto v = p.dom.init(r);
            ASSERT_TRUE(p.dom.validate(v)) << memo::to_string(v);
            const int b = p.dom.bucket_of(v);
            EXPECT_GE(b, 0);
            EXPECT_LT(b, p.dom.buckets());
            const auto w = p.dom.mutate(v, r);
            ASSERT_TRUE(p.dom.validate(w)) << memo::to_string(v) << " -> " << memo::to_string(w);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryLayer, ::testing::Range<std::size_t>(0, memo::default_layers::size),
                         [](const auto& info) { return std::string(test::reg()[info.param].name); });

}  // namespace

TEST(Domains, EveryBucketOfANumericDomainIsReachable) {
    memo::rng r(3);
    for (const auto& d : {memo::any_domain(memo::in_range(1, 4096, 32)), memo::any_domain(memo::tuple_of(2, memo::in_range(1, 512, 5))),
                          memo::any_domain(memo::real_in(0, 1)), memo::any_domain(memo::optional(memo::in_range(0, 9, 4)))}) {
        std::vector<int> seen(static_cast<std::size_t>(d.buckets()), 0);
        for (int i = 0; i < 2000; ++i) seen[static_cast<std::size_t>(d.bucket_of(d.init(r)))]++;
        for (std::size_t b = 0; b < seen.size(); ++b) EXPECT_GT(seen[b], 0) << d.describe() << " bucket " << b;
    }
}

TEST(Domains, MutationChangesTheValue) {
    memo::rng r(5);
    const memo::any_domain ds[] = {memo::in_range(1, 64, 8), memo::element_of({"valid", "same"}), memo::bools(), memo::real_in(0, 1),
                                   memo::tuple_of(2, memo::in_range(1, 7))};
    for (const auto& d : ds)
        for (int i = 0; i < 100; ++i) {
            const auto v = d.init(r);
            EXPECT_FALSE(d.mutate(v, r) == v) << d.describe() << " " << memo::to_string(v);
        }
}

TEST(Domains, RejectOutside) {
    EXPECT_FALSE(memo::any_domain(memo::in_range(1, 4)).validate(memo::value{std::int64_t{5}}));
    EXPECT_FALSE(memo::any_domain(memo::in_range(1, 4)).validate(memo::none));
    EXPECT_TRUE(memo::any_domain(memo::optional(memo::in_range(1, 4))).validate(memo::none));
    EXPECT_FALSE(memo::any_domain(memo::element_of({"valid", "same"})).validate(memo::value{"causal"}));
    EXPECT_FALSE(memo::any_domain(memo::tuple_of(2, memo::in_range(1, 4))).validate(memo::ints{1, 2, 3}));
    EXPECT_FALSE(memo::any_domain(memo::bools()).validate(memo::value{std::int64_t{1}}));
    EXPECT_EQ(memo::any_domain(memo::in_range(1, 4096, 32)).bucket_of(memo::value{std::int64_t{4000}}), 4);  // beyond typical: last bucket
}

// A user's own domain type is a domain too: any_domain holds it and answers through it; copies
// share it. (One that lacks part of the concept is refused at compile time with a message that
// names the part: tests/compile_fail/domain_without_buckets.fail.cpp.)
namespace {
struct odd_numbers {
    memo::value init(memo::rng& r) const { return 2 * r.uniform(0, 10) + 1; }
    memo::value mutate(const memo::value& v, memo::rng&) const { return memo::as_int(v) + 2; }
    bool validate(const memo::value& v) const { return std::holds_alternative<std::int64_t>(v) && memo::as_int(v) % 2 == 1; }
    int buckets() const { return 2; }
    int bucket_of(const memo::value& v) const { return memo::as_int(v) > 9 ? 1 : 0; }
    std::string describe() const { return "odd_numbers()"; }
};
}  // namespace

TEST(Domains, AUsersOwnDomainIsHeld) {
    const memo::any_domain d = odd_numbers{};
    const memo::any_domain copy = d;
    memo::rng r(7);
    EXPECT_EQ(copy.describe(), "odd_numbers()");
    EXPECT_EQ(copy.buckets(), 2);
    EXPECT_FALSE(copy.categorical());
    for (int i = 0; i < 50; ++i) {
        const auto v = copy.init(r);
        EXPECT_TRUE(copy.validate(v)) << memo::to_string(v);
        EXPECT_EQ(memo::as_int(copy.mutate(v, r)), memo::as_int(v) + 2);
    }
    EXPECT_FALSE(d.validate(memo::value{std::int64_t{4}}));
    EXPECT_EQ(d.bucket_of(memo::value{std::int64_t{11}}), 1);
}

}  // namespace test_core_domain_test
