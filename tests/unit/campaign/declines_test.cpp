// What a campaign learns a backend declines: by class, dtype and, for a class with a data_format,
// layout, so that a library lacking one layout's kernel (TensorFlow's CPU convolutions in
// channels_first) keeps running the other.
#include <memo/campaign/declines.hpp>

#include "../support.hpp"

namespace test_campaign_declines_test {

namespace {

memo::model conv(const std::string& layout) {
    memo::builder b(test::reg());
    const int x = b.input({6, 6, 3});
    b.add("Conv2D", {x}, {{"filters", 2}, {"kernel_size", memo::ints{3, 3}}, {"data_format", layout}});
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
    memo::campaign::decline_table t;
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

TEST(Declines, ALayoutSurvivesResume) {
    memo::campaign::decline_table t, back;
    t.learn(conv("channels_first"), {declined_at(1)});
    back.restore(t.save());
    EXPECT_FALSE(back.runs_everywhere(conv("channels_first")));
    EXPECT_TRUE(back.runs_everywhere(conv("channels_last")));
}

}  // namespace

}  // namespace test_campaign_declines_test
