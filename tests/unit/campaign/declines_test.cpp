// What a campaign learns a backend declines: by class, dtype and, for a class with a data_format,
// layout, so that a library lacking one layout's kernel (TensorFlow's CPU convolutions in
// channels_first) keeps running the other.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/oracle/declines.hpp>
#include <memo/oracle/differential.hpp>

#include "../support.hpp"

namespace test_campaign_declines_test {

namespace {

memo::model conv(const std::string& layout, std::int64_t filters = 2) {
    memo::builder b(test::reg());
    const int x = b.input({6, 6, 3});
    b.add("Conv2D", {x}, {{"filters", filters}, {"kernel_size", memo::ints{3, 3}}, {"data_format", layout}});
    return b.finish();
}

memo::oracle::observation declined_at(int node) {
    memo::oracle::observation o;
    o.backend = "lib";
    o.result.status = memo::run_status::unsupported;
    o.result.node = node;
    return o;
}

TEST(Declines, ALayoutIsDeclinedAlone) {
    memo::oracle::decline_table t;
    const auto first = conv("channels_first"), last = conv("channels_last");
    t.learn(first, {declined_at(1)});
    EXPECT_FALSE(t.runs_everywhere(first));
    EXPECT_TRUE(t.runs_everywhere(last));
    // Generation may still give Conv2D float32: one of its layouts runs.
    EXPECT_FALSE(t.declined("Conv2D", memo::dtype::float32));
    t.learn(last, {declined_at(1)});
    EXPECT_FALSE(t.runs_everywhere(last));
    EXPECT_TRUE(t.declined("Conv2D", memo::dtype::float32));
    EXPECT_EQ(t.stats("lib")["known"][0], "Conv2D in float32 (channels_first)");
}

TEST(Declines, ARunThatWentThroughTakesTheDeclineBack) {
    memo::oracle::decline_table t;
    const auto m = conv("channels_first");
    t.learn(m, {declined_at(1)});
    EXPECT_FALSE(t.runs_everywhere(m));
    memo::oracle::observation ran;
    ran.backend = "lib";
    t.learn(m, {ran});
    EXPECT_TRUE(t.runs_everywhere(m));
}

TEST(Declines, ALayoutSurvivesResume) {
    memo::oracle::decline_table t, back;
    t.learn(conv("channels_first"), {declined_at(1)});
    back.restore(t.save());
    EXPECT_FALSE(back.runs_everywhere(conv("channels_first")));
    EXPECT_TRUE(back.runs_everywhere(conv("channels_last")));
}

/// The reference, but lacking channels_first convolutions of two filters: a library that lacks a
/// layout (TensorFlow's CPU convolutions), or only some of its parameters.
class no_channels_first final : public memo::executor {
public:
    std::string_view name() const override { return "lib"; }
    memo::expected<void> supports(const memo::model& m) const override { return inner_.supports(m); }
    void submit(const memo::model& m, std::span<const memo::tensor> in, const memo::run_options& o) override {
        ++runs;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (m[i].layer->name == "Conv2D" && memo::as_str(m[i].param("data_format")) == "channels_first" && memo::as_int(m[i].param("filters")) == 2) {
                result_ = {};
                result_.status = memo::run_status::unsupported;
                result_.node = static_cast<int>(i);
                return;
            }
        result_ = inner_.run(m, in, o);
    }
    memo::run_result collect() override { return std::move(result_); }
    int runs = 0;

private:
    memo::in_process<memo::reference::interpreter> inner_{memo::reference::interpreter(std::nullopt, "lib")};
    memo::run_result result_;
};

}  // namespace

TEST(Declines, TheOracleDeclinesAgainOnlyTheLayoutDeclined) {
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter(std::nullopt, "reference")};
    memo::reference::interpreter truth(memo::dtype::float64);
    no_channels_first lib;
    memo::oracle::differential diff{{&ref, &lib}, truth, test::reg()};
    diff.check(conv("channels_first"));
    EXPECT_EQ(lib.runs, 1);
    diff.check(conv("channels_first"));  // known: not sent to the library again
    EXPECT_EQ(lib.runs, 1);
    EXPECT_EQ(diff.observations()[1].result.status, memo::run_status::unsupported);
    diff.check(conv("channels_last"));  // the other layout still runs
    EXPECT_EQ(lib.runs, 2);
    EXPECT_EQ(diff.observations()[1].result.status, memo::run_status::ok) << diff.observations()[1].result.message;
}

TEST(Declines, TheOracleTriesALearntDeclineAgainAndForgetsItWhenItRuns) {
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter(std::nullopt, "reference")};
    memo::reference::interpreter truth(memo::dtype::float64);
    no_channels_first lib;
    memo::oracle::differential diff{{&ref, &lib}, truth, test::reg()};
    diff.check(conv("channels_first"));            // learnt: Conv2D in float32 (channels_first)
    const auto three = conv("channels_first", 3);  // the same key, but the library takes it
    int held = 0;
    while (lib.runs == 1 && held < 100) {
        diff.check(three);
        held += lib.runs == 1;
    }
    EXPECT_EQ(held, 15);  // one model in 16 goes to the library anyway
    EXPECT_EQ(diff.observations()[1].result.status, memo::run_status::ok);
    diff.check(three);  // it ran: the decline is forgotten
    EXPECT_EQ(lib.runs, 3);
}

// A campaign's lanes share one table: what one lane's library declined, another lane does not send
// to its own worker of that library, and generation reads it at once; the reasons are counted once.
TEST(Declines, LanesThatShareATableLearnOnce) {
    memo::in_process<memo::reference::interpreter> ref_a{memo::reference::interpreter(std::nullopt, "reference")};
    memo::in_process<memo::reference::interpreter> ref_b{memo::reference::interpreter(std::nullopt, "reference")};
    memo::reference::interpreter truth(memo::dtype::float64);
    no_channels_first lib_a, lib_b;
    memo::oracle::differential a{{&ref_a, &lib_a}, truth, test::reg()}, b{{&ref_b, &lib_b}, truth, test::reg()};
    memo::oracle::decline_table shared;
    ASSERT_TRUE(a.share_declines(shared));
    ASSERT_TRUE(b.share_declines(shared));
    a.check(conv("channels_first"));
    EXPECT_EQ(lib_a.runs, 1);
    EXPECT_FALSE(shared.runs_everywhere(conv("channels_first")));
    b.check(conv("channels_first"));  // learnt by lane a: lane b's library is not sent it
    EXPECT_EQ(lib_b.runs, 0);
    EXPECT_EQ(b.observations()[1].result.status, memo::run_status::unsupported);
    const auto stats = shared.stats("lib");
    ASSERT_EQ(stats["reasons"].size(), 1u) << stats.dump();
    EXPECT_EQ(stats["reasons"][0]["runs"], 2) << stats.dump();  // one declined run in each lane
}

}  // namespace test_campaign_declines_test
