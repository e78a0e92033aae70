// Coverage: the universes are at least MEMO's, and a model covers exactly the items it should.
#include <set>

#include "../support.hpp"

namespace test_coverage_coverage_test {

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

// The graph pairs are every ordered pair of the registry's classes, the universe's and the rest
// (Dense, the adapters, InputLayer as a producer); their connectable ones include merges.
TEST(Universe, GraphPairsSpanTheRegistry) {
    const memo::memo_coverage c(test::reg());
    const auto n = test::reg().size();
    EXPECT_GT(n, 67u);
    EXPECT_EQ(c.total(criterion::graph_pair), n * n);
    EXPECT_GT(c.total(criterion::graph_pair_connectable), c.total(criterion::layer_pair_connectable));
    EXPECT_LT(c.total(criterion::graph_pair_connectable), c.total(criterion::graph_pair));
    const auto& u = memo::universe::of(test::reg());
    auto at = [&](std::string_view n) { return test::reg().index_of(test::reg().at(n)); };
    for (const auto& [a, b] : {std::pair{"Dense", "Dense"}, {"Dense", "Dot"}, {"InputLayer", "Dense"}, {"CustomPadLayer", "MaxPooling2D"}})
        EXPECT_GE(u.graph_connectable_item(at(a), at(b)), 0) << a << " -> " << b;
    EXPECT_LT(u.graph_connectable_item(at("Dense"), at("InputLayer")), 0) << "nothing feeds an input";
    EXPECT_LT(u.graph_connectable_item(at("Flatten"), at("Conv2D")), 0) << "Flatten's rank 2 is no Conv2D input";
}

// Input -> Dense -> Dense: no pair of MEMO's (Dense is outside its universe), two graph pairs;
// they count beside MEMO's criteria, and in the search's fitness only where it pursues them.
TEST(Coverage, GraphPairsCountWhatMemosPairsLeaveOut) {
    memo::builder b(test::reg());
    auto x = b.input({8});
    auto d = b.add("Dense", {x}, {{"units", std::int64_t{4}}});
    b.output(b.add("Dense", {d}, {{"units", std::int64_t{2}}}));
    const auto m = b.finish();
    memo::memo_coverage cov(test::reg());
    const auto added = cov.add(m);
    EXPECT_EQ(added[criterion::layer_pair], 0u);
    EXPECT_EQ(added[criterion::graph_pair], 2u);
    EXPECT_EQ(added[criterion::graph_pair_connectable], 2u);
    EXPECT_EQ(static_cast<std::size_t>(added), added.memo_total()) << "graph pairs are not MEMO's fitness";
    memo::memo_coverage pursuing(test::reg());
    pursuing.pursue_graph_pairs(true);
    EXPECT_EQ(static_cast<std::size_t>(pursuing.gain(m)), pursuing.gain(m).memo_total() + 2);
    EXPECT_EQ(static_cast<std::size_t>(pursuing.add(m)), added.memo_total() + 2);
    const auto& u = cov.space();
    EXPECT_EQ(
        u.describe(criterion::graph_pair, u.graph_pair_item(test::reg().index_of(test::reg().at("Dense")), test::reg().index_of(test::reg().at("Dense")))),
        "Dense -> Dense");
}

TEST(Coverage, ItemsOfASmallModel) {
    memo::builder b(test::reg());
    auto x = b.input({8, 8, 3});
    auto c = b.add("Conv2D", {x}, {{"filters", 4}, {"padding", "same"}});                // (8, 8, 4)
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

// Inputs: uniform in [lo, hi) unless varied; varied, each Input node's generator is a function of
// the model's seed, and the generators together reach every value class.
// A metric is any type that models coverage_metric: here, the node counts models reached. It
// counts in the search beside MEMO's criteria once attached, is copied with them, and campaigns
// report it under one criterion when it names none.
namespace {
struct node_counts {
    std::set<std::size_t> seen;
    std::size_t add(const memo::model& m) { return seen.insert(m.size()).second ? 1 : 0; }
    std::size_t gain(const memo::model& m) const { return seen.count(m.size()) ? 0 : 1; }
    std::size_t covered() const { return seen.size(); }
    std::size_t total() const { return 1000; }
};
}  // namespace

TEST(Coverage, AnyMetricCountsBesideMemos) {
    static_assert(memo::coverage_metric<node_counts, memo::model>);
    const auto m = memo::zoo::build("lenet5-mnist", test::reg());
    memo::memo_coverage cov(test::reg());
    cov.attach(node_counts{});
    const auto before = cov.gain(m);
    EXPECT_EQ(before.extra, 1u);
    EXPECT_EQ(static_cast<std::size_t>(before), before.memo_total() + 1);
    const memo::memo_coverage copy = cov;  // the metric is copied with MEMO's criteria
    EXPECT_EQ(cov.add(m).extra, 1u);
    EXPECT_EQ(cov.gain(m).extra, 0u);
    EXPECT_EQ(copy.gain(m).extra, 1u);
    EXPECT_EQ(cov.extra()->criteria(), (std::vector<memo::criterion_count>{{"extra", 1, 1000}}));
    EXPECT_EQ(cov.extra()->save(), "");
}

TEST(Inputs, VariedGeneratorsAreTheSeedsAndReachEveryValueClass) {
    memo::builder b(test::reg());
    auto x = b.input({64});
    b.output(b.add("ReLU", {x}, {{"max_value", 0.5}}));
    auto m = b.finish();
    const memo::input_options uniform{}, varied{.varied = true};
    std::array<int, memo::input_kind_names.size()> seen{};
    std::uint8_t classes = 0;
    for (std::uint64_t seed = 1; seed <= 400; ++seed) {
        m.seed = seed;
        const auto u = memo::make_inputs(m, uniform);
        for (double v : u.at(0).data) ASSERT_TRUE(v >= 0 && v < 1) << v;
        EXPECT_EQ(memo::input_kind_of(m, 0, uniform), memo::input_kind::uniform);
        const auto k = memo::input_kind_of(m, 0, varied);
        ++seen[static_cast<std::size_t>(k)];
        const auto t = memo::make_inputs(m, varied);
        EXPECT_EQ(t, memo::make_inputs(m, varied)) << "the same seed draws the same inputs";
        if (k == memo::input_kind::uniform) {
            EXPECT_EQ(t, u);
        }
        classes |= memo::span_of(t.at(0)).classes;
        if (k == memo::input_kind::thresholds) {  // some values at 0.5 +- a step: both sides of max_value
            EXPECT_TRUE(memo::span_of(t.at(0)).straddles(0.5));
        }
    }
    for (std::size_t k = 0; k < seen.size(); ++k) EXPECT_GT(seen[k], 10) << memo::input_kind_names[k];
    for (auto c : {memo::value_class::negative, memo::value_class::zero, memo::value_class::small, memo::value_class::large})
        EXPECT_TRUE(classes & memo::bit(c)) << memo::name_of(c);
    // The store writes the choice with the other input options and reads it back.
    EXPECT_EQ(memo::store::inputs_from_text(memo::store::inputs_text(varied)), varied);
    EXPECT_EQ(memo::store::inputs_from_text("2:0:1"), uniform);
    EXPECT_THROW(memo::store::inputs_from_text("2:0:1:sometimes"), memo::error);
}

TEST(ValueSpan, ClassesAndRange) {
    memo::tensor t({5}, memo::dtype::float32);
    t.data = {-2.0, 0.0, 1e-5, 3000.0, 0.5};
    const auto s = memo::span_of(t);
    EXPECT_EQ(s.lo, -2.0);
    EXPECT_EQ(s.hi, 3000.0);
    for (auto c : {memo::value_class::negative, memo::value_class::zero, memo::value_class::small, memo::value_class::large}) EXPECT_TRUE(s.has(c));
    EXPECT_FALSE(s.has(memo::value_class::non_finite));
    t.data = {0.25, std::numeric_limits<double>::infinity(), 0.75};
    const auto f = memo::span_of(t);
    EXPECT_EQ(f.classes, memo::bit(memo::value_class::non_finite));
    EXPECT_TRUE(f.straddles(0.5));
    EXPECT_FALSE(f.straddles(1.0));
}

// A traced run's one pass per node (digest_and_span) finds the span value_span::add finds one value
// at a time, and the digest digest_of finds; the digest tells values, their order and dims apart.
TEST(ValueSpan, OnePassWithTheDigest) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    memo::rng r(7);
    const std::vector<double> specials{0.0, -0.0, 1e-5, -1e-5, 2048.0, -4096.0, inf, -inf, nan, 0.5, -0.5};
    for (int round = 0; round < 200; ++round) {
        memo::tensor t({r.uniform(0, 13)}, memo::dtype::float32);
        for (auto& x : t.data)
            x = r.chance(0.3) ? specials[static_cast<std::size_t>(r.uniform(0, static_cast<std::int64_t>(specials.size()) - 1))] : r.uniform_real(-3, 3);
        memo::value_span one;
        for (double x : t.data) one.add(x);
        const auto [d, s] = memo::digest_and_span(t);
        ASSERT_EQ(s, one) << round;
        ASSERT_EQ(s, memo::span_of(t));
        ASSERT_EQ(d, memo::digest_of(t));
        double sum = 0;
        for (double x : t.data)
            if (std::isfinite(x)) sum += std::abs(x);
        EXPECT_NEAR(d.abs_sum, sum, 1e-12 * std::max(1.0, sum));
        if (t.size() >= 2 && t.data[0] != t.data[1] && !std::isnan(t.data[0]) && !std::isnan(t.data[1])) {
            auto swapped = t;
            std::swap(swapped.data[0], swapped.data[1]);
            EXPECT_NE(memo::digest_of(swapped).hash, d.hash) << "order counts";
        }
        if (t.size() >= 1 && std::isfinite(t.data.back())) {
            auto moved = t;
            moved.data.back() = std::nextafter(moved.data.back(), inf);
            EXPECT_NE(memo::digest_of(moved).hash, d.hash) << "one unit in the last place counts";
            auto reshaped = t;
            reshaped.dims = {1, t.size()};
            EXPECT_NE(memo::digest_of(reshaped).hash, d.hash) << "dims count";
        }
    }
}

// layer_input_range counts what each layer received: its producers' spans, and for a class with
// thresholds, values on both sides of one.
TEST(InputRangeCoverage, CountsWhatEachLayerReceived) {
    memo::builder b(test::reg());
    auto x = b.input({4});
    auto r = b.add("ReLU", {x}, {{"max_value", 0.5}});
    b.output(b.add("ThresholdedReLU", {r}, {{"theta", 1.0}}));
    const auto m = b.finish();
    memo::input_range_coverage cov(test::reg());
    const auto& u = memo::universe::of(test::reg());
    std::size_t with_thresholds = 0;
    for (std::size_t s = 0; s < u.classes(); ++s)
        for (const auto& p : u.class_at(s).params)
            if (memo::is_threshold_param(p.name)) {
                ++with_thresholds;
                break;
            }
    EXPECT_EQ(cov.total(), 5 * u.classes() + with_thresholds);
    EXPECT_GE(with_thresholds, 2u);  // ReLU, ThresholdedReLU

    auto span = [](std::vector<double> v) {
        memo::tensor t({static_cast<std::int64_t>(v.size())});
        t.data = std::move(v);
        return memo::span_of(t);
    };
    // Untraced (no span per node): nothing.
    EXPECT_EQ(cov.add(m, {}), 0u);
    // The ReLU receives a negative value and both sides of 0.5; the ThresholdedReLU receives
    // [0, 0.5]: a zero, not both sides of theta.
    const std::vector<memo::value_span> spans{span({-1.0, 0.25, 0.75, 0.0}), span({0.0, 0.25, 0.5, 0.0}), span({0.0, 0.0, 0.0, 0.0})};
    EXPECT_EQ(cov.add(m, spans), 4u);  // ReLU: negative, zero, beyond; ThresholdedReLU: zero
    std::vector<std::string> names;
    for (std::size_t i = 0; i < cov.total(); ++i)
        if (cov.items().test(i)) names.push_back(cov.describe(i));
    EXPECT_EQ(names, (std::vector<std::string>{"ReLU received negative", "ReLU received zero", "ReLU received beyond", "ThresholdedReLU received zero"}));
    EXPECT_EQ(cov.add(m, spans), 0u);
    memo::input_range_coverage back(test::reg());
    back.restore(cov.save());
    EXPECT_EQ(back.covered(), 4u);
}

// layer_param_pairs: each pair of a node's effective parameter values, once; a mutant that only
// recombines values seen apart still raises it, an inert parameter pairs with nothing, and a
// tuple's order (square or not) is a value of its own.
TEST(ParamPairCoverage, CountsPairsOfValuesWithinANode) {
    const auto& u = memo::universe::of(test::reg());
    auto pool = [](std::string format, std::string padding, memo::ints size = memo::ints{2, 2}) {
        memo::builder b(test::reg());
        auto x = b.input({8, 8, 3});
        b.output(b.add("MaxPooling2D", {x}, {{"data_format", format}, {"padding", padding}, {"pool_size", size}}));
        return b.finish();
    };
    memo::param_pair_coverage cov(test::reg());
    EXPECT_GT(cov.total(), u.total(criterion::layer_param_effective));
    // pool_size, strides (None), padding, data_format, and pool_size's order: 5 values, 10 pairs.
    const std::size_t k = 5;
    const auto a = pool("channels_last", "valid");
    EXPECT_EQ(cov.gain(a), k * (k - 1) / 2);
    EXPECT_EQ(cov.add(a), k * (k - 1) / 2);
    EXPECT_FALSE(cov.raises(a));
    // padding='same' is new: it pairs with each of the other k - 1 values.
    const auto b = pool("channels_last", "same");
    EXPECT_TRUE(cov.raises(b));
    EXPECT_EQ(cov.add(b), k - 1);
    // channels_first is new: it pairs with each of the others, padding='valid' among them.
    const auto c = pool("channels_first", "valid");
    EXPECT_EQ(cov.add(c), k - 1);
    const auto d = pool("channels_first", "same");  // both values seen, never together
    EXPECT_EQ(cov.gain(d), 1u);
    EXPECT_EQ(cov.add(d), 1u);
    // A window of 1 x 2: the same bucket (its largest element is 2), a new order, which pairs with
    // the k - 1 others; 2 x 1 is the other order.
    EXPECT_EQ(cov.add(pool("channels_first", "same", memo::ints{1, 2})), k - 1);
    EXPECT_EQ(cov.gain(pool("channels_first", "same", memo::ints{1, 2})), 0u);
    EXPECT_EQ(cov.gain(pool("channels_first", "same", memo::ints{2, 1})), k - 1);
    memo::param_pair_coverage back(test::reg());
    back.restore(cov.save());
    EXPECT_EQ(back.covered(), cov.covered());
    EXPECT_EQ(back.gain(pool("channels_last", "same", memo::ints{1, 2})), 1u);  // the order with channels_last
}

}  // namespace test_coverage_coverage_test
