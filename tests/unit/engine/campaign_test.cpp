// The engine's campaign over a model of its own (lists of small integers), from the engine's
// headers alone: it stores each bug once with a model that replays it, and a campaign stopped and
// resumed from its checkpoint makes the very steps of one that ran straight through.
#include <unistd.h>

#include <gtest/gtest.h>

#include <memo/engine/campaign.hpp>
#include <memo/engine/search.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch.hpp"

namespace test_engine_campaign_test {

namespace {

using numbers = std::vector<int>;

struct values_metric {
    std::set<std::pair<int, int>> seen;
    static std::set<std::pair<int, int>> items(const numbers& m) {
        std::set<std::pair<int, int>> out;
        for (std::size_t i = 0; i < m.size(); ++i) out.insert({i ? m[i - 1] : -1, m[i]});
        return out;
    }
    std::size_t add(const numbers& m) {
        std::size_t k = 0;
        for (const auto& i : items(m)) k += seen.insert(i).second;
        return k;
    }
    std::size_t gain(const numbers& m) const {
        std::size_t k = 0;
        for (const auto& i : items(m)) k += !seen.count(i);
        return k;
    }
    std::size_t covered() const { return seen.size(); }
    std::size_t total() const { return 110; }
};
struct no_context {
    explicit no_context(const values_metric&) {}
};
struct push {
    static constexpr std::string_view name = "push";
    memo::expected<numbers> operator()(const numbers& m, memo::rng& r, const no_context&) const {
        if (m.size() >= 6) return memo::fail("full");
        numbers x = m;
        x.push_back(static_cast<int>(r.uniform(0, 9)));
        return x;
    }
};
struct change {
    static constexpr std::string_view name = "change";
    memo::expected<numbers> operator()(const numbers& m, memo::rng& r, const no_context&) const {
        numbers x = m;
        x[r.index(x.size())] = static_cast<int>(r.uniform(0, 9));
        return x;
    }
};
using numbers_search = memo::basic_search<numbers, memo::operator_set<push, change>, values_metric, memo::mh_selector, no_context>;

struct numbers_codec {
    std::uint64_t key(const numbers& m) const {
        std::uint64_t h = 7;
        for (int x : m) h = h * 31 + static_cast<std::uint64_t>(x);
        return h;
    }
    std::string save(const numbers& m) const {
        std::string s;
        for (int x : m) s += std::to_string(x) + " ";
        return s;
    }
    memo::expected<numbers> load(std::string_view text) const {
        numbers m;
        std::istringstream in{std::string(text)};
        for (int x; in >> x;) m.push_back(x);
        if (m.empty()) return memo::fail("no numbers");
        return m;
    }
};

/// A correct sum, and one that fails on a 7 right after a 3 and adds one too many after an 8.
memo::engine::observation sum(const numbers& m) {
    double s = 0;
    for (int x : m) s += x;
    return {memo::engine::observation::status::ok, {s}, {}};
}
memo::engine::observation faulty_sum(const numbers& m) {
    double s = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
        if (i && m[i - 1] == 3 && m[i] == 7) return {memo::engine::observation::status::failed, {}, "3 then 7"};
        s += m[i] + (i && m[i - 1] == 8 ? 1 : 0);
    }
    return {memo::engine::observation::status::ok, {s}, {}};
}
const std::vector<memo::engine::library<numbers>> libraries{{"sum", sum}, {"faulty", faulty_sum}};

std::string read(const std::filesystem::path& f) {
    std::ifstream in(f);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
const std::vector<numbers> seeds{{1}, {2, 3}};

/// Where a test campaign keeps its directory: a folder of this process's own under the system's
/// temporary directory, never the directory the tests were started from.
std::filesystem::path scratch(const std::string& name) { return test::scratch_root() / "engine" / name; }

}  // namespace

TEST(EngineCampaign, StoresEachBugOnceAndItReplays) {
    numbers_search s(seeds, values_metric{}, memo::mh_selector(0.05), 5);
    memo::engine::campaign<numbers_search, numbers_codec> c(scratch("engine_bugs"), numbers_codec{}, libraries, {.tolerance = 1e-9});
    const auto sum = c.run(s, 1500);
    ASSERT_EQ(sum.bugs.size(), 2u);
    EXPECT_TRUE(sum.bugs.count("crash-faulty"));
    EXPECT_TRUE(sum.bugs.count("inconsistency-faulty-sum"));  // two libraries: both are named
    for (const auto& [sig, k] : sum.bugs) {
        EXPECT_GT(k, 0u);
        EXPECT_EQ(memo::engine::signature(memo::engine::replay(scratch("engine_bugs") / "bugs" / sig, numbers_codec{}, libraries, 1e-9)), sig);
    }
    // A clean pair finds nothing.
    numbers_search clean(seeds, values_metric{}, memo::mh_selector(0.05), 5);
    const std::vector<memo::engine::library<numbers>> both_right{{"a", test_engine_campaign_test::sum}, {"b", test_engine_campaign_test::sum}};
    memo::engine::campaign<numbers_search, numbers_codec> quiet(scratch("engine_clean"), numbers_codec{}, both_right);
    EXPECT_TRUE(quiet.run(clean, 500).bugs.empty());
}

TEST(EngineCampaign, ResumedFromItsCheckpointGoesOnAsIfNeverStopped) {
    numbers_search straight(seeds, values_metric{}, memo::mh_selector(0.05), 11);
    memo::engine::campaign<numbers_search, numbers_codec> a(scratch("engine_straight"), numbers_codec{}, libraries, {.checkpoint_every = 50});
    const auto whole = a.run(straight, 600);

    {
        numbers_search first(seeds, values_metric{}, memo::mh_selector(0.05), 11);
        memo::engine::campaign<numbers_search, numbers_codec> b(scratch("engine_resumed"), numbers_codec{}, libraries, {.checkpoint_every = 50});
        b.run(first, 250);
    }
    numbers_search again(seeds, values_metric{}, memo::mh_selector(0.05), 11);
    memo::engine::campaign<numbers_search, numbers_codec> b(scratch("engine_resumed"), numbers_codec{}, libraries, {.checkpoint_every = 50});
    const auto resumed = b.resume(again, values_metric{}, 350);

    EXPECT_EQ(resumed.steps, whole.steps);
    EXPECT_EQ(resumed.diverse, whole.diverse);
    EXPECT_EQ(resumed.bugs, whole.bugs);
    EXPECT_EQ(again.models(), straight.models());
    EXPECT_EQ(again.coverage().covered(), straight.coverage().covered());
    EXPECT_EQ(read(scratch("engine_resumed") / "checkpoint"), read(scratch("engine_straight") / "checkpoint"));
    std::size_t queued = 0;
    for (const auto& f : std::filesystem::directory_iterator(scratch("engine_straight") / "queue")) {
        EXPECT_EQ(read(f.path()), read((scratch("engine_resumed") / "queue") / f.path().filename())) << f.path();
        ++queued;
    }
    EXPECT_EQ(queued, whole.diverse);
    // A directory without a checkpoint is refused by name.
    std::filesystem::create_directories(scratch("engine_empty"));
    numbers_search none(seeds, values_metric{}, memo::mh_selector(0.05), 11);
    memo::engine::campaign<numbers_search, numbers_codec> e(scratch("engine_empty"), numbers_codec{}, libraries);
    EXPECT_THROW(e.resume(none, values_metric{}, 10), memo::error);
}

}  // namespace test_engine_campaign_test
