// The engine's search over a model that is not memo's graph: a list of small integers, with
// operators, a metric and a context of its own, from the engine's headers alone (they need the
// standard library only).
#include <gtest/gtest.h>

#include <memo/engine/search.hpp>

#include <cstdint>
#include <set>
#include <vector>

namespace test_engine_search_test {

namespace {

using numbers = std::vector<int>;

/// Items: the values and the ordered pairs of neighbours a list holds, of 0..9.
struct pairs_metric {
    std::set<int> seen;
    static std::set<int> items(const numbers& m) {
        std::set<int> out(m.begin(), m.end());
        for (std::size_t i = 1; i < m.size(); ++i) out.insert(10 + 10 * m[i - 1] + m[i]);
        return out;
    }
    std::size_t add(const numbers& m) {
        std::size_t k = 0;
        for (int i : items(m)) k += seen.insert(i).second;
        return k;
    }
    std::size_t gain(const numbers& m) const {
        std::size_t k = 0;
        for (int i : items(m)) k += !seen.count(i);
        return k;
    }
    std::size_t covered() const { return seen.size(); }
    std::size_t total() const { return 110; }
};

/// What the operators see: the metric, to prefer values not seen yet.
struct hint {
    const pairs_metric& m;
    explicit hint(pairs_metric& x) : m(x) {}
};

struct append {
    static constexpr std::string_view name = "append";
    memo::expected<numbers> operator()(const numbers& m, memo::rng& r, const hint& h) const {
        if (m.size() >= 12) return memo::fail("full");
        numbers x = m;
        int v = static_cast<int>(r.uniform(0, 9));
        for (int k = 0; k < 10 && h.m.seen.count(v); ++k) v = (v + 1) % 10;  // guided, as MEMO's operators are
        x.push_back(v);
        return x;
    }
};
struct swap_two {
    static constexpr std::string_view name = "swap";
    memo::expected<numbers> operator()(const numbers& m, memo::rng& r, const hint&) const {
        if (m.size() < 2) return memo::fail("too short");
        numbers x = m;
        std::swap(x[static_cast<std::size_t>(r.index(x.size()))], x[static_cast<std::size_t>(r.index(x.size()))]);
        return x;
    }
};
using ops = memo::operator_set<append, swap_two>;
using numbers_search = memo::basic_search<numbers, ops, pairs_metric, memo::mh_selector, hint>;
static_assert(memo::coverage_metric<pairs_metric, numbers>);
static_assert(memo::mutator<append, numbers, hint> && memo::mutator<swap_two, numbers, hint>);

}  // namespace

TEST(Engine, SearchesAModelOfItsOwn) {
    numbers_search s({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 3);
    const std::size_t before = s.coverage().covered();
    std::size_t diverse = 0;
    for (int i = 0; i < 300; ++i) diverse += s.step().gain != 0;
    EXPECT_GT(diverse, 10u);
    EXPECT_GT(s.coverage().covered(), before + 10);
    EXPECT_EQ(numbers_search::operator_names()[0], "append");

    // The same seed makes the same steps; a restored state goes on as the saved search would.
    numbers_search a({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 9);
    for (int i = 0; i < 50; ++i) a.step();
    const auto saved = a.save();
    const pairs_metric cov = a.coverage();
    numbers_search b({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 1);
    b.restore(saved, cov);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(a.step().seed, b.step().seed);
    EXPECT_EQ(a.models(), b.models());
}

// The seed size limit grows when the search stalls: lists of at most 3 numbers soon cover all they
// can, then 20 steps in a row without a diverse mutant double the limit, up to 12; the grown limit
// and the stall count are saved, so a restored search makes the same steps. Without a ceiling the
// limit stays.
TEST(Engine, SeedSizeLimitGrowsWhenTheSearchStalls) {
    auto largest = [](const numbers_search& s) {
        std::size_t n = 0;
        for (const auto& m : s.models()) n = std::max(n, m.size());
        return n;
    };
    numbers_search fixed({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 5);
    fixed.set_max_seed_size(3);
    for (int i = 0; i < 2000; ++i) fixed.step();
    EXPECT_EQ(fixed.max_seed_size(), 3u);
    EXPECT_LE(largest(fixed), 3u);

    numbers_search growing({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 5);
    growing.set_max_seed_size(3, 12, 20);
    std::size_t limits = 0, last = 3;
    for (int i = 0; i < 2000; ++i) {
        growing.step();
        if (growing.max_seed_size() != last) ++limits, last = growing.max_seed_size();
    }
    EXPECT_EQ(limits, 2u) << "3 -> 6 -> 12, and no further";
    EXPECT_EQ(growing.max_seed_size(), 12u);
    EXPECT_GT(largest(growing), 3u);
    EXPECT_GT(growing.coverage().covered(), fixed.coverage().covered());

    numbers_search a({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 5);
    a.set_max_seed_size(3, 12, 20);
    std::size_t steps = 0;
    while (a.max_seed_size() == 3 && steps < 2000) a.step(), ++steps;
    for (int i = 0; i < 5; ++i) a.step();
    const auto saved = a.save();
    numbers_search b({{1, 2}, {7}}, pairs_metric{}, memo::mh_selector(0.05), 1);
    b.set_max_seed_size(3, 12, 20);
    b.restore(saved, a.coverage());
    EXPECT_EQ(b.max_seed_size(), a.max_seed_size());
    for (int i = 0; i < 300; ++i) EXPECT_EQ(a.step().seed, b.step().seed);
    EXPECT_EQ(a.max_seed_size(), b.max_seed_size());
    EXPECT_EQ(a.models(), b.models());
}

}  // namespace test_engine_search_test
