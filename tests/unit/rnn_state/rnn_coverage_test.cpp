// The reference interpreter's state hook (every step of every recurrent layer, its last state the
// layer's output), and the RNN-state metric a campaign counts (rnn_state/rnn_coverage.hpp) and the
// input fuzzer of one model (rnn_state/input_fuzz.hpp).
// Light on purpose: it includes what it uses, not the whole library (each such file costs minutes
// under the sanitizer build).
#include <algorithm>
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include <memo/campaign/seeds.hpp>
#include <memo/core/builder.hpp>
#include <memo/coverage/checkpoint.hpp>
#include <memo/rnn_state/input_fuzz.hpp>

namespace test_rnn_state_rnn_coverage_test {

namespace {

using memo::tensor;
const memo::registry& reg() { return memo::default_registry(); }

/// Input (steps, features) -> one recurrent layer, in float64.
memo::model one_layer(std::string_view cls, std::initializer_list<std::pair<std::string_view, memo::value>> ps, std::int64_t steps = 5,
                      std::int64_t features = 3) {
    memo::builder b(reg());
    const int in = b.input({steps, features}, memo::dtype::float64);
    b.add(cls, {in}, ps);
    return b.finish();
}

struct heard {
    std::map<std::pair<int, int>, std::vector<memo::reference::state_step>> steps;  // by (node, part)
    std::map<std::pair<int, int>, std::vector<std::vector<double>>> h, c;
};

heard listen(const memo::model& m, std::int64_t samples, std::vector<tensor>* outputs = nullptr) {
    heard out;
    memo::reference::interpreter r;
    r.set_state_hook([&](const memo::reference::state_step& s) {
        out.steps[{s.node, s.part}].push_back(s);
        out.h[{s.node, s.part}].emplace_back(s.h.begin(), s.h.end());
        out.c[{s.node, s.part}].emplace_back(s.c.begin(), s.c.end());
    });
    const auto in = memo::make_inputs(m, {.samples = samples});
    auto res = r.run(m, in);
    EXPECT_TRUE(res.ok()) << res.message;
    if (outputs) *outputs = std::move(res.outputs);
    return out;
}

}  // namespace

TEST(StateHook, SeesEveryStepAndTheLastStateIsTheOutput) {
    const auto m = one_layer("LSTM", {{"units", 4}, {"return_sequences", false}});
    std::vector<tensor> out;
    const auto got = listen(m, 2, &out);
    ASSERT_EQ(got.steps.size(), 1u);
    const auto& steps = got.steps.at({1, 0});
    ASSERT_EQ(steps.size(), 10u);  // 2 samples x 5 steps
    for (std::size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i].sample, static_cast<std::int64_t>(i / 5));
        EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i % 5));
        EXPECT_EQ(got.h.at({1, 0})[i].size(), 4u);
        EXPECT_EQ(got.c.at({1, 0})[i].size(), 4u) << "an LSTM has a cell state";
    }
    // The last hidden state of each sample is the layer's output row.
    for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(got.h.at({1, 0})[static_cast<std::size_t>(b * 5 + 4)][static_cast<std::size_t>(j)], out[0][b * 4 + j]);
}

TEST(StateHook, SequencesMatchReturnSequencesAndGruHasNoCell) {
    const auto m = one_layer("GRU", {{"units", 3}, {"return_sequences", true}}, 4, 2);
    std::vector<tensor> out;
    const auto got = listen(m, 3, &out);
    const auto& h = got.h.at({1, 0});
    ASSERT_EQ(h.size(), 12u);
    for (std::size_t i = 0; i < h.size(); ++i) {
        EXPECT_TRUE(got.c.at({1, 0})[i].empty());
        for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(h[i][j], out[0][static_cast<std::int64_t>(i * 3 + j)]);
    }
}

TEST(StateHook, BidirectionalReportsBothDirectionsAndAnEmptyHookNothing) {
    const auto m = one_layer("Bidirectional", {{"units", 2}, {"return_sequences", false}, {"merge_mode", "concat"}});
    const auto got = listen(m, 1);
    ASSERT_EQ(got.steps.size(), 2u);
    EXPECT_EQ(got.steps.at({1, 0}).size(), 5u);
    EXPECT_EQ(got.steps.at({1, 1}).size(), 5u);

    memo::reference::interpreter r;
    int calls = 0;
    r.set_state_hook([&](const memo::reference::state_step&) { ++calls; });
    r.set_state_hook({});
    EXPECT_TRUE(r.run(m, memo::make_inputs(m)).ok());
    EXPECT_EQ(calls, 0);
}

// An every_node run says each node's largest state (run_result::node_inner), hook or not: the
// oracle's test of a state past its dtype's range, which an LSTM's outputs o * tanh(c) hide.
TEST(StateHook, EveryNodeRunSaysEachNodesLargestState) {
    const auto m = one_layer("LSTM", {{"units", 4}, {"return_sequences", false}});
    heard got = listen(m, 2);
    double largest = 0;
    for (const auto* states : {&got.h.at({1, 0}), &got.c.at({1, 0})})
        for (const auto& step : *states)
            for (double x : step) largest = std::max(largest, std::abs(x));
    ASSERT_GT(largest, 0.0);

    memo::reference::interpreter r;  // no hook
    const auto in = memo::make_inputs(m, {.samples = 2});
    const auto traced = r.run(m, in, {.every_node = true});
    ASSERT_TRUE(traced.ok()) << traced.message;
    ASSERT_EQ(traced.node_inner.size(), 2u);
    EXPECT_EQ(traced.node_inner[0].largest, 0.0) << "an Input holds no state";
    EXPECT_EQ(traced.node_inner[1].largest, largest);
    EXPECT_TRUE(r.run(m, in).node_inner.empty()) << "only an every_node run says it";
}

TEST(StateHook, ConvLstmStepsAreWholeFrames) {
    memo::builder b(reg());
    const int in = b.input({3, 4, 4, 2}, memo::dtype::float64);
    b.add("ConvLSTM2D", {in}, {{"filters", 2}, {"kernel_size", memo::ints{3, 3}}, {"padding", "same"}});
    const auto m = b.finish();
    const auto got = listen(m, 1);
    const auto& h = got.h.at({1, 0});
    ASSERT_EQ(h.size(), 3u);
    EXPECT_EQ(h[0].size(), 4u * 4u * 2u);
    EXPECT_EQ(got.c.at({1, 0})[0].size(), h[0].size());
}

// The seeds are the profile: adding them again covers every profiled state and transition and no
// boundary cell; gain() is what add() then returns; a clone and a restored copy agree.
TEST(RnnCoverage, SeedsCoverTheirOwnProfile) {
    const auto seeds = memo::campaign::load_seeds("zoo:lstm0-sinewave,lstm2-price", reg());
    memo::rnn_state::rnn_coverage cov(reg(), seeds);
    const auto before = memo::criteria_json(cov.criteria());
    ASSERT_GT(before["rnn_state_basic"]["total"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(before["rnn_state_basic"]["covered"], 0);
    std::size_t gained = 0;
    for (const auto& m : seeds) {
        const auto g = cov.gain(m);
        EXPECT_EQ(cov.add(m), g);
        gained += g;
        EXPECT_EQ(cov.gain(m), 0u) << "a model adds nothing twice";
    }
    EXPECT_GT(gained, 0u);
    const auto j = memo::criteria_json(cov.criteria());
    for (const char* k : {"rnn_state_basic", "rnn_state_weighted", "rnn_transition_basic", "rnn_transition_weighted"})
        EXPECT_EQ(j[k]["covered"], j[k]["total"]) << k;
    EXPECT_EQ(j["rnn_state_boundary"]["covered"], 0);
    EXPECT_GT(j["rnn_state_boundary"]["total"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(j["rnn_states"]["covered"], j["rnn_state_basic"]["total"]);

    memo::rnn_state::rnn_coverage fresh(reg(), seeds);
    fresh.restore(cov.save());
    EXPECT_EQ(memo::criteria_json(fresh.criteria()), j);
    const memo::rnn_state::rnn_coverage copy = cov;
    EXPECT_EQ(memo::criteria_json(copy.criteria()), j);
    // As a coverage_metric, its items are the states and transitions reached.
    EXPECT_EQ(cov.covered(), j["rnn_states"]["covered"].get<std::size_t>() + j["rnn_transitions"]["covered"].get<std::size_t>());
    EXPECT_EQ(cov.total(), j["rnn_states"]["total"].get<std::size_t>() + j["rnn_transitions"]["total"].get<std::size_t>());
}

// Attached to memo_coverage, the metric's new items count in the search's diversity test.
TEST(RnnCoverage, CountsInMemoCoverageDelta) {
    const auto seeds = memo::campaign::load_seeds("zoo:lstm2-price", reg());
    memo::memo_coverage cov(reg());
    cov.attach(memo::rnn_state::rnn_coverage(reg(), seeds));
    const auto d = cov.gain(seeds[0]);
    EXPECT_GT(d.extra, 0u);
    EXPECT_EQ(static_cast<std::size_t>(d), d.memo_total() + d.extra);
    const memo::memo_coverage copy = cov;  // deep: adding to one leaves the other
    cov.add(seeds[0]);
    EXPECT_GT(copy.gain(seeds[0]).extra, 0u);
    EXPECT_EQ(cov.gain(seeds[0]).extra, 0u);
    memo::memo_coverage back = copy;
    memo::restore_coverage(back, memo::save_coverage(cov));
    EXPECT_EQ(back.extra()->criteria(), cov.extra()->criteria());
}

TEST(InputFuzz, SchedulerProbabilityFallsFromPointEightToPointThree) {
    EXPECT_DOUBLE_EQ(memo::rnn_state::pick_probability(0), 0.8);
    EXPECT_DOUBLE_EQ(memo::rnn_state::pick_probability(5), 0.7);
    EXPECT_DOUBLE_EQ(memo::rnn_state::pick_probability(25), 0.3);
    EXPECT_DOUBLE_EQ(memo::rnn_state::pick_probability(1000), 0.3);
}

// Inputs stay within their bounds, kept inputs raise coverage, and a seed gives the same run.
TEST(InputFuzz, KeepsBoundedInputsThatReachNewStatesAndIsDeterministic) {
    const auto m = one_layer("LSTM", {{"units", 6}, {"return_sequences", true}}, 8, 2);
    auto run = [&](std::uint64_t seed) {
        memo::rnn_state::input_fuzzer f(m, {.seed = seed, .profile_samples = 16, .initial = 4, .linf = 0.2, .l0 = 3});
        const auto start = f.values();
        for (int i = 0; i < 150; ++i) f.step();
        EXPECT_EQ(f.iterations(), 150u);
        EXPECT_GT(f.queue().size(), 4u) << "no mutant reached a new state";
        EXPECT_GE(f.seen_states(), static_cast<std::size_t>(start.basic_state.covered));
        for (const auto& e : f.queue()) {
            const auto& root = f.queue()[e.root].inputs[0];
            for (std::size_t i = 0; i < e.inputs[0].data.size(); ++i) {
                EXPECT_LE(std::abs(e.inputs[0].data[i] - root.data[i]), 0.2 + 1e-12);
                EXPECT_GE(e.inputs[0].data[i], 0.0);
                EXPECT_LE(e.inputs[0].data[i], 1.0);
            }
        }
        return std::pair{f.values(), f.queue().size()};
    };
    const auto a = run(1), b = run(1);
    EXPECT_EQ(a.first, b.first);
    EXPECT_EQ(a.second, b.second);
    EXPECT_GT(a.first.basic_state.total, 0u);
}

TEST(InputFuzz, ModelWithoutRecurrentLayerIsAClearError) {
    memo::builder b(reg());
    const int in = b.input({4}, memo::dtype::float32);
    b.add("Dense", {in}, {{"units", 2}});
    const auto m = b.finish();
    try {
        memo::rnn_state::input_fuzzer f(m);
        FAIL() << "expected an error";
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find("no recurrent layer"), std::string::npos) << e.what();
    }
}

}  // namespace test_rnn_state_rnn_coverage_test
