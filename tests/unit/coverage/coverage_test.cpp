// Coverage: the universes are at least MEMO's, and a model covers exactly the items it should.
#include "../support.hpp"

using memo::criterion;

TEST(Universe, AtLeastMemos) {
    const memo::memo_coverage c(test::reg());
    EXPECT_EQ(c.total(criterion::layer_type), 67u);
    EXPECT_EQ(c.total(criterion::layer_pair), 67u * 67u);
    EXPECT_GE(c.total(criterion::layer_param), 2049u);
    // MEMO's 766 counts 'half' and 'double' apart from float16 and float64; without them, 648.
    EXPECT_EQ(c.total(criterion::layer_input), 117u + 59u * 4u + 59u * 5u);
    EXPECT_LT(c.total(criterion::layer_param_effective), c.total(criterion::layer_param));
    // COMET's connectable pairs (2170 in its universe) are a strict subset of all pairs.
    EXPECT_GT(c.total(criterion::layer_pair_connectable), 2000u);
    EXPECT_LT(c.total(criterion::layer_pair_connectable), c.total(criterion::layer_pair));
}

TEST(Universe, ConnectableFollowsRanks) {
    const auto& u = memo::universe::of(test::reg());
    auto slot = [&](std::string_view n) { return static_cast<std::size_t>(u.slot_of(test::reg().at(n))); };
    // Flatten outputs rank 2; Conv2D takes rank 4; ReLU takes 2-6; GlobalMaxPooling2D outputs 2 or 4.
    EXPECT_EQ(u.output_ranks(slot("Flatten")).str(), "2");
    EXPECT_TRUE(u.output_ranks(slot("GlobalMaxPooling2D")).contains(4));
    EXPECT_TRUE(u.output_ranks(slot("LSTM")).contains(2) && u.output_ranks(slot("LSTM")).contains(3));
}

TEST(Coverage, ItemsOfASmallModel) {
    memo::builder b(test::reg());
    auto x = b.input({8, 8, 3});
    auto c = b.add("Conv2D", {x}, {{"filters", 4}, {"padding", "same"}});               // (8, 8, 4)
    auto p = b.add("CustomPadLayer", {c}, {{"padding", memo::ints{1, 1, 1, 1, 0, 0}}});  // (10, 10, 4)
    auto r = b.add("ReLU", {p});
    auto z = b.add("ZeroPadding2D", {c});  // (10, 10, 4)
    auto r2 = b.add("ReLU", {z});
    b.output(b.add("Add", {r, r2}));
    const auto m = b.finish();

    memo::memo_coverage cov(test::reg());
    const auto gain = cov.gain(m);
    const auto added = cov.add(m);
    for (auto k : memo::all_criteria) EXPECT_EQ(gain[k], added[k]) << name_of(k);
    EXPECT_EQ(added[criterion::layer_type], 4u);  // Conv2D, ReLU, ZeroPadding2D, Add (Input and the pad are outside)
    // Conv2D->ZeroPadding2D, ZeroPadding2D->ReLU, ReLU->Add; not Conv2D->ReLU: a pair is a direct
    // edge, and the ReLU behind CustomPadLayer consumes a padded copy.
    EXPECT_EQ(added[criterion::layer_pair], 3u);
    EXPECT_EQ(added[criterion::layer_pair_connectable], 2u);  // merges are not connectable pairs
    // Conv2D: 15 parameters, ReLU: 3, ZeroPadding2D: 2, one value each; Add has none.
    EXPECT_EQ(added[criterion::layer_param], 20u);
    // Each of Conv2D, ReLU, ZeroPadding2D: rank 4, float32, size bucket 1 (192, 400 and 256 elements).
    EXPECT_EQ(added[criterion::layer_input], 9u);
    EXPECT_EQ(cov.covered(criterion::layer_type), 4u);
    // The same model again adds nothing.
    EXPECT_EQ(cov.gain(m).memo_total(), 0u);
    EXPECT_EQ(cov.add(m).memo_total(), 0u);
}

TEST(Coverage, EffectiveLeavesOutInertParameters) {
    memo::builder b(test::reg());
    auto x = b.input({8, 8, 3});
    b.output(b.add("Conv2D", {x}, {{"filters", 4}}));
    const auto m = b.finish();
    memo::memo_coverage cov(test::reg());
    const auto d = cov.add(m);
    // Conv2D's inert parameters: kernel/bias/activity regularizers, kernel/bias constraints.
    EXPECT_EQ(d[criterion::layer_param] - d[criterion::layer_param_effective], 5u);
}

TEST(Coverage, DescribesItems) {
    const auto& u = memo::universe::of(test::reg());
    EXPECT_EQ(u.describe(criterion::layer_type, 1), "Conv2D");
    EXPECT_EQ(u.describe(criterion::layer_pair, 0 * 67 + 1), "Conv1D -> Conv2D");
    EXPECT_NE(u.describe(criterion::layer_param, 0).find("Conv1D.filters"), std::string::npos);
    EXPECT_EQ(u.describe(criterion::layer_input, 0), "Conv1D input rank 3");
}
