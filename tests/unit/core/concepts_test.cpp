// The concepts, checked against small archetypes: what satisfies them and what does not.
#include "../support.hpp"

namespace test_core_concepts_test {

namespace arche {

struct good_layer {
    static constexpr std::string_view name = "Good";
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::between(2, 6);
    static std::span<const memo::param> params() { return {}; }
    static memo::expected<memo::shape> infer(memo::inputs in, memo::args) { return in[0]; }
};
struct no_infer {
    static constexpr std::string_view name = "NoInfer";
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::of(2);
    static std::span<const memo::param> params() { return {}; }
};
struct infer_returns_shape {  // must return expected<shape>, not a bare shape
    static constexpr std::string_view name = "Bare";
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::of(2);
    static std::span<const memo::param> params() { return {}; }
    static memo::shape infer(memo::inputs in, memo::args) { return in[0]; }
};
struct no_name {
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::of(2);
    static std::span<const memo::param> params() { return {}; }
    static memo::expected<memo::shape> infer(memo::inputs in, memo::args) { return in[0]; }
};

struct good_domain {
    memo::value init(memo::rng&) const { return std::int64_t{1}; }
    memo::value mutate(const memo::value& v, memo::rng&) const { return v; }
    bool validate(const memo::value&) const { return true; }
    int buckets() const { return 1; }
    int bucket_of(const memo::value&) const { return 0; }
    std::string describe() const { return "one"; }
};
struct domain_without_buckets {
    memo::value init(memo::rng&) const { return std::int64_t{1}; }
    memo::value mutate(const memo::value& v, memo::rng&) const { return v; }
    bool validate(const memo::value&) const { return true; }
    std::string describe() const { return "one"; }
};

struct good_metric {
    std::size_t add(const memo::model&) { return 0; }
    std::size_t gain(const memo::model&) const { return 0; }
    std::size_t covered() const { return 0; }
    std::size_t total() const { return 1; }
};
struct metric_without_gain {
    std::size_t add(const memo::model&) { return 0; }
    std::size_t covered() const { return 0; }
    std::size_t total() const { return 1; }
};

}  // namespace arche

static_assert(memo::layer<arche::good_layer>);
static_assert(!memo::layer<arche::no_infer>);
static_assert(!memo::layer<arche::infer_returns_shape>);
static_assert(!memo::layer<arche::no_name>);
static_assert(!memo::layer<int>);
static_assert(memo::layer<memo::layers::conv<2>> && memo::layer<memo::layers::lstm> && memo::layer<memo::layers::cast>);

static_assert(memo::domain<arche::good_domain>);
static_assert(!memo::domain<arche::domain_without_buckets>);
static_assert(memo::domain<memo::any_domain> && memo::domain<memo::int_tuple>);

static_assert(memo::coverage_metric<arche::good_metric, memo::model>);
static_assert(!memo::coverage_metric<arche::metric_without_gain, memo::model>);
static_assert(memo::coverage_metric<memo::memo_coverage, memo::model>);

// Registries are type lists that users concatenate.
using extended = memo::concat<memo::default_layers, memo::layer_list<arche::good_layer>>;
static_assert(extended::size == memo::default_layers::size + 1);
static_assert(std::is_same_v<memo::concat<memo::layer_list<arche::good_layer>, memo::layer_list<>>, memo::layer_list<arche::good_layer>>);

TEST(Registry, UserLayerJoinsByConcatenation) {
    const auto& reg = memo::registry_of<extended>();
    ASSERT_NE(reg.find("Good"), nullptr);
    EXPECT_EQ(reg.size(), memo::default_layers::size + 1);
    EXPECT_EQ(reg.find("Conv2D")->params.size(), memo::default_registry().find("Conv2D")->params.size());
    // The user's layer counts in coverage: one more type, (n+1)^2 pairs.
    const memo::memo_coverage c(reg);
    EXPECT_EQ(c.total(memo::criterion::layer_type), 68u);
    EXPECT_EQ(c.total(memo::criterion::layer_pair), 68u * 68u);
}

TEST(Registry, DispatchByIndex) {
    std::vector<std::string_view> names;
    for (std::size_t i = 0; i < memo::keras_layers::size; ++i)
        names.push_back(memo::with_index<memo::keras_layers>(i, [](auto t) { return decltype(t)::type::name; }));
    EXPECT_EQ(names.front(), "Conv1D");
    EXPECT_EQ(names.back(), "LocallyConnected2D");
    for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], memo::default_registry()[i].name);
    EXPECT_THROW(memo::default_registry().at("NoSuchLayer"), memo::error);
}

}  // namespace test_core_concepts_test
