// Isolation and the oracle against a deliberately faulty backend: each fault gives its verdict,
// localised to the faulty layer, and the worker comes back for the next model.
#include <sys/wait.h>
#include <cstdio>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include <memo/backends/isolate.hpp>
#include <memo/campaign/execute.hpp>
#include <memo/campaign/generate.hpp>
#include <memo/oracle/differential.hpp>
#include <memo/tensors/inputs.hpp>

#include "../support.hpp"
#include "faulty.hpp"

namespace test_backends_isolate_test {

namespace {

using memo::run_status;
using memo::oracle::kind;

/// Input(4) -> Dense(3) -> Activation(relu) -> Dense(2): the faults sit in node 2, Activation.
memo::model small_model(std::uint64_t seed = 1) {
    memo::builder b(test::reg());
    const int x = b.input({4});
    const int d = b.add("Dense", {x}, {{"units", std::int64_t{3}}});
    const int a = b.add("Activation", {d}, {{"activation", "tanh"}});
    b.add("Dense", {a}, {{"units", std::int64_t{2}}});
    auto m = b.finish();
    m.seed = seed;
    return m;
}

memo::isolation_limits quick() { return {1500, 512}; }

/// For the memory hog: it must reach the 512 MiB cap before any time limit, and writing 64 MiB
/// blocks under ASan on a loaded machine has taken more than 1.5 s. A minute is far above what
/// it needs, and the hog is killed at the cap long before: the verdict stays `memory`.
memo::isolation_limits roomy() { return {60000, 512}; }

std::unique_ptr<memo::executor> isolated_fault(test::fault f, memo::isolation_limits lim = quick()) {
    return memo::make_isolated<memo::reference::interpreter>([f] { return test::faulty_backend(f, "Activation"); }, test::reg(), lim);
}

TEST(Isolation, HealthyWorkerMatchesInProcess) {
    auto w = memo::make_isolated<memo::reference::interpreter>([] { return memo::reference::interpreter(); }, test::reg(), quick());
    memo::reference::interpreter local;
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    const auto a = w->run(m, in), b = local.run(m, in);
    ASSERT_TRUE(a.ok()) << a.message;
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_GT(a.peak_kb, 0);
    const auto every = w->run(m, in, {true, {}, {}});
    EXPECT_EQ(every.outputs.size(), m.size());
}

// Asked for digest_nodes, a worker sends the model's outputs and a digest per node, the same as
// those of every node's tensor computed here.
TEST(Isolation, WorkerDigestsEveryNode) {
    auto w = memo::make_isolated<memo::reference::interpreter>([] { return memo::reference::interpreter(); }, test::reg(), quick());
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    memo::run_options o;
    o.every_node = o.digest_nodes = true;
    const auto a = w->run(m, in, o);
    ASSERT_TRUE(a.ok()) << a.message;
    auto b = memo::reference::interpreter().run(m, in, o);  // in process: every node's tensor
    ASSERT_EQ(b.outputs.size(), m.size());
    b.digest_nodes(m);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.outputs.size(), m.outputs.size());
    ASSERT_EQ(a.node_digests.size(), m.size());
    EXPECT_EQ(a.node_digests, b.node_digests);
    EXPECT_NE(a.node_digests[1], a.node_digests[2]);
}

// A request carries the model in binary (classes by name, parameters in each class's order): it
// comes back the same model, given weights, weight edits and every kind of parameter value
// included, and a truncated frame is an error, not a crash.
TEST(Isolation, RequestCarriesTheWholeModel) {
    auto models = memo::campaign::load_seeds("zoo:lstm0-sinewave,lstm2-price", test::reg());
    auto m = small_model(42);
    m.weight_edits.push_back({memo::weight_edit::kind::invert_activation, 1, 0.25, 7});
    m.nodes[3].weights = memo::give_weights({{{2, 2}, {0.5, -1.0, 1e-300, std::numeric_limits<double>::quiet_NaN()}}, {{2}, {3.0, 4.0}}});
    models.push_back(m);
    for (const auto& x : models) {
        const auto in = memo::make_inputs(x);
        memo::run_options o;
        o.every_node = true;
        const auto frame = memo::wire::encode_request(x, in, o);
        const auto q = memo::wire::decode_request(frame, test::reg());
        EXPECT_EQ(memo::io::model_to_json(q.m).dump(), memo::io::model_to_json(x).dump());
        EXPECT_EQ(memo::model_key(q.m), memo::model_key(x));
        EXPECT_EQ(q.inputs, in);
        EXPECT_TRUE(q.options.every_node);
        EXPECT_THROW(memo::wire::decode_request(std::string_view(frame).substr(0, frame.size() / 2), test::reg()), memo::error);
    }
    EXPECT_GT(models.size(), 2u);
}

// A request carries the weights costly to draw (an LSTM's Orthogonal recurrent kernel), drawn by
// the sender once: a worker that keeps them in its cache runs on the very values it would draw,
// and the uniform draws (glorot_uniform kernels) it makes itself.
TEST(Isolation, RequestCarriesTheWeightsCostlyToDraw) {
    const auto models = memo::campaign::load_seeds("zoo:lstm0-sinewave", test::reg());
    ASSERT_EQ(models.size(), 1u);
    const auto& m = models[0];
    const auto in = memo::make_inputs(m);
    const auto frame = memo::wire::encode_request(m, in, {});
    std::size_t costly = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
        for (const auto& d : memo::draws_of(m, static_cast<int>(i))) costly += memo::costly_to_draw(d.initializer);
    ASSERT_GT(costly, 0u) << "an LSTM's recurrent kernel is Orthogonal";
    std::thread([&] {  // a thread of its own: an empty cache, as a worker's
        auto q = memo::wire::decode_request(frame, test::reg());
        ASSERT_EQ(q.drawn.size(), costly);
        for (const auto& d : q.drawn) {
            EXPECT_TRUE(memo::costly_to_draw(d.initializer)) << d.initializer;
            EXPECT_EQ(d.value.data, memo::weight_cache().draw(d.stream, d.initializer, d.value.dims).data) << d.initializer;
        }
        q.keep_drawn();
        for (std::size_t i = 0; i < m.size(); ++i) {
            const auto kept = memo::weights_of(q.m, static_cast<int>(i), &memo::drawn_weights());
            const auto fresh = memo::weights_of(m, static_cast<int>(i));
            ASSERT_EQ(kept.size(), fresh.size());
            for (std::size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(kept[k].value.data, fresh[k].value.data) << i << " " << fresh[k].name;
        }
    })
        .join();
}

struct death_case {
    test::fault f;
    run_status status;
    int signal;
    memo::isolation_limits limits = quick();
};

// Readable parameters: "memory (status memory, signal 0, 60000 ms, 512 MiB)", not the bytes.
void PrintTo(const death_case& c, std::ostream* os) {
    *os << test::name_of(c.f) << " (status " << memo::name_of(c.status) << ", signal " << c.signal << ", " << c.limits.timeout_ms << " ms, "
        << c.limits.memory_mb << " MiB)";
}

class WorkerDeath : public ::testing::TestWithParam<death_case> {};

TEST_P(WorkerDeath, IsAVerdictAndTheWorkerComesBack) {
    const auto c = GetParam();
    auto w = isolated_fault(c.f, c.limits);
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    const auto r = w->run(m, in);
    EXPECT_EQ(r.status, c.status) << r.message;
    EXPECT_EQ(r.signal, c.signal) << r.message;
    EXPECT_FALSE(r.message.empty());
    // A model without the faulty layer runs on the fresh worker.
    memo::builder b(test::reg());
    b.add("Dense", {b.input({4})}, {{"units", std::int64_t{2}}});
    const auto clean = b.finish();
    const auto ok = w->run(clean, memo::make_inputs(clean));
    EXPECT_TRUE(ok.ok()) << ok.message;
    EXPECT_EQ(w->restarts(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Faults, WorkerDeath,
                         // A worker that dies at once gets a roomy limit: the fresh worker's first run, under the
                         // sanitizers on a busy machine, can take longer than the hang's short one.
                         ::testing::Values(death_case{test::fault::segfault, run_status::crash, SIGSEGV, roomy()},
                                           death_case{test::fault::abort, run_status::crash, SIGABRT, roomy()},
                                           death_case{test::fault::hang, run_status::timeout, 0},
                                           death_case{test::fault::memory, run_status::memory, 0, roomy()}),
                         [](const ::testing::TestParamInfo<death_case>& i) { return std::string(test::name_of(i.param.f)); });

/// A backend whose every run takes `ms` of wall time (it sleeps), and says so on its result as
/// every backend does.
struct sleeper {
    int ms = 0;
    std::string_view name() const { return "sleeper"; }
    memo::expected<void> supports(const memo::model&) const { return {}; }
    memo::run_result run(const memo::model&, std::span<const memo::tensor>, const memo::run_options&) {
        const auto start = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        memo::run_result r;
        r.status = run_status::ok;
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }
};

// The parent may come to collect late (it waited on another lane or backend): a worker that
// answered in time is judged by when it answered, not by when the parent looked.
TEST(Isolation, FastWorkerCollectedLateIsNoTimeout) {
    auto w = memo::make_isolated<sleeper>([] { return sleeper{0}; }, test::reg(), {1000, 512});
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    w->submit(m, in, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // three times the limit
    const auto r = w->collect();
    EXPECT_EQ(r.status, run_status::ok) << r.message;
    EXPECT_EQ(w->restarts(), 0u);
}

// A worker that answered, but only after its limit, is a time-out by its own clock even when the
// parent reads the answer later still; it answered, so it is not killed.
TEST(Isolation, SlowAnswerReadLateIsATimeoutByTheWorkersClock) {
    auto w = memo::make_isolated<sleeper>([] { return sleeper{1500}; }, test::reg(), {1000, 512});
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    w->submit(m, in, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    const auto r = w->collect();
    EXPECT_EQ(r.status, run_status::timeout) << r.message;
    EXPECT_NE(r.message.find("answered after"), std::string::npos) << r.message;
    EXPECT_EQ(w->restarts(), 0u);
}

// The memory limit holds whatever the parent is doing: while it waits on a slow worker, a hog in
// another grows, and is stopped near its limit (within 10 %) all the same.
TEST(Isolation, HogIsStoppedNearItsLimitWhileTheParentWaitsOnAnother) {
    const memo::isolation_limits hog_limits{60000, 2048};
    auto hog = isolated_fault(test::fault::memory, hog_limits);
    auto slow = memo::make_isolated<sleeper>([] { return sleeper{4000}; }, test::reg(), {60000, 512});
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    hog->submit(m, in, {});
    slow->submit(m, in, {});
    EXPECT_EQ(slow->collect().status, run_status::ok);  // four seconds in which nobody collects the hog
    const auto r = hog->collect();
    EXPECT_EQ(r.status, run_status::memory) << r.message;
    // What the worker added to what it started with (a forked copy of this test, resident already).
    EXPECT_GT(r.peak_kb - r.start_kb, hog_limits.memory_mb * 1024) << r.message;
    EXPECT_LE(r.peak_kb - r.start_kb, hog_limits.memory_mb * 1024 * 11 / 10) << r.message;
    std::printf("memory hog: grew by %.1f MiB against a limit of %lld MiB (%.1f %% over)\n", static_cast<double>(r.peak_kb - r.start_kb) / 1024,
                static_cast<long long>(hog_limits.memory_mb),
                100.0 * (static_cast<double>(r.peak_kb - r.start_kb) / 1024 / static_cast<double>(hog_limits.memory_mb) - 1));
}

TEST(Isolation, LibraryErrorIsAnErrorNotADeath) {
    auto w = isolated_fault(test::fault::error);
    const auto m = small_model();
    const auto r = w->run(m, memo::make_inputs(m));
    EXPECT_EQ(r.status, run_status::error);
    EXPECT_NE(r.message.find("planted error"), std::string::npos);
    EXPECT_EQ(r.node, 2);
    EXPECT_EQ(w->restarts(), 0u);
}

struct oracle_case {
    test::fault f;
    kind what;
};

void PrintTo(const oracle_case& c, std::ostream* os) { *os << test::name_of(c.f) << " (" << memo::oracle::name_of(c.what) << ")"; }

class OracleCatches : public ::testing::TestWithParam<oracle_case> {};

TEST_P(OracleCatches, TheFaultLocalisedToItsLayer) {
    const auto c = GetParam();
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = isolated_fault(c.f);
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    const auto m = small_model();
    const auto v = diff.check(m);
    EXPECT_EQ(v.what, c.what);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0], "faulty");
    EXPECT_EQ(v.node, 2);
    EXPECT_EQ(v.layer, "Activation");
    EXPECT_EQ(v.producer, "Dense");
    // Minimised: the faulty layer alone still shows the bug.
    const auto small = diff.minimise(m, v);
    EXPECT_EQ(small.v.what, c.what);
    EXPECT_EQ(small.m.layer_count(), 1u);
    EXPECT_EQ(small.v.layer, "Activation");
}

INSTANTIATE_TEST_SUITE_P(Faults, OracleCatches,
                         ::testing::Values(oracle_case{test::fault::segfault, kind::crash}, oracle_case{test::fault::abort, kind::crash},
                                           oracle_case{test::fault::error, kind::crash}, oracle_case{test::fault::nan, kind::nan},
                                           oracle_case{test::fault::wrong_value, kind::inconsistency}),
                         [](const ::testing::TestParamInfo<oracle_case>& i) { return std::string(test::name_of(i.param.f)); });

/// An executor that counts the forced runs (every node fed given inputs) made through it.
class counting_forced final : public memo::executor {
public:
    explicit counting_forced(std::unique_ptr<memo::executor> x) : x_(std::move(x)) {}
    std::string_view name() const override { return x_->name(); }
    memo::expected<void> supports(const memo::model& m) const override { return x_->supports(m); }
    void submit(const memo::model& m, std::span<const memo::tensor> in, const memo::run_options& o) override {
        forced += !o.forced.empty();
        x_->submit(m, in, o);
    }
    memo::run_result collect() override { return x_->collect(); }
    bool ready() const override { return x_->ready(); }
    int forced = 0;

private:
    std::unique_ptr<memo::executor> x_;
};

// Where the traced runs show a NaN start, that node alone is run to confirm it, on the fed inputs
// and with its own weights: the whole model is not fed again (a layer that takes a library seconds
// is not paid for twice). Untraced, the whole model is fed; both name the same node.
TEST(Oracle, ANanIsLocalisedByItsNodeAloneWhereTheRunsSayWhereItStarts) {
    for (const bool traced : {true, false}) {
        auto good = memo::make_in_process(memo::reference::interpreter());
        counting_forced bad(isolated_fault(test::fault::nan));
        memo::reference::interpreter truth(memo::dtype::float64);
        memo::oracle::differential diff({good.get(), &bad}, truth, test::reg());
        diff.set_trace(traced);
        const auto v = diff.check(small_model());
        EXPECT_EQ(v.what, kind::nan) << "traced " << traced;
        EXPECT_EQ(v.node, 2) << "traced " << traced;
        EXPECT_EQ(v.layer, "Activation") << "traced " << traced;
        EXPECT_EQ(bad.forced, traced ? 0 : 1) << "traced " << traced;
    }
}

TEST(Oracle, HangIsACrashVerdictOfKindTimeout) {
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = isolated_fault(test::fault::hang);
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    const auto v = diff.check(small_model());
    EXPECT_EQ(v.what, kind::crash);
    EXPECT_EQ(v.status(), run_status::timeout);
}

// A fake compiler in a worker: it compiles for `compile_ms`, telling the phase on fd 5 as memo's
// Python workers do (tools/frames.py), then runs for `run_ms`; what it takes is what the limits
// are tested on.
struct compiler {
    int compile_ms = 0, run_ms = 0;
    std::string_view name() const { return "compiler"; }
    memo::expected<void> supports(const memo::model&) const { return {}; }
    static void tell(bool compiling, std::chrono::steady_clock::time_point since) {
        char record[9] = {static_cast<char>(compiling)};
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
        std::memcpy(record + 1, &ms, sizeof ms);
        if (::write(5, record, sizeof record) != sizeof record) std::abort();
    }
    memo::run_result run(const memo::model&, std::span<const memo::tensor>, const memo::run_options&) const {
        const auto start = std::chrono::steady_clock::now();
        tell(true, start);
        std::this_thread::sleep_for(std::chrono::milliseconds(compile_ms));
        tell(false, start);
        memo::run_result r;
        r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::this_thread::sleep_for(std::chrono::milliseconds(run_ms));
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }
};

memo::run_result run_compiler(compiler c, memo::isolation_limits lim, bool collect_late = false) {
    auto w = memo::make_isolated<compiler>([c] { return c; }, test::reg(), lim);
    const auto m = small_model();
    const auto in = memo::make_inputs(m);
    w->submit(m, in, {});
    if (collect_late) std::this_thread::sleep_for(std::chrono::milliseconds(c.compile_ms + c.run_ms + 500));
    return w->collect();
}

// Compiling has its own limit: a compiler three times slower than the run's limit is slow, not
// hung, whether the parent waits on it or reads its answer late; without a limit for compiling,
// compiling counts as running and the same run is a time-out.
TEST(Isolation, CompilingIsHeldToItsOwnLimit) {
    const compiler slow{3000, 100};
    for (const bool late : {false, true}) {
        const auto r = run_compiler(slow, {1000, 512, 0, 10000}, late);
        EXPECT_EQ(r.status, run_status::ok) << r.message;
        EXPECT_GE(r.compile_ms, 3000) << "the worker's compiling is reported apart";
    }
    const auto r = run_compiler(slow, {1000, 512});
    EXPECT_EQ(r.status, run_status::timeout) << r.message;
}

// A run still compiling past compiling's limit is declined as compiling too long (the worker is
// killed, as a hung one is); a run that hangs after it compiled is a time-out, given the run's
// limit from where compiling ended.
TEST(Isolation, CompilingTooLongIsDeclinedAndAHangAfterItIsATimeout) {
    const auto declined = run_compiler({3000, 0}, {1000, 512, 0, 1500});
    EXPECT_EQ(declined.status, run_status::unsupported) << declined.message;
    EXPECT_NE(declined.message.find("compiles too long"), std::string::npos) << declined.message;
    const auto declined_late = run_compiler({3000, 0}, {1000, 512, 0, 1500}, true);
    EXPECT_EQ(declined_late.status, run_status::unsupported) << declined_late.message;

    const auto start = std::chrono::steady_clock::now();
    const auto hung = run_compiler({1500, 60000}, {1000, 512, 0, 10000});
    const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(hung.status, run_status::timeout) << hung.message;
    EXPECT_NE(hung.message.find("of it compiling"), std::string::npos) << hung.message;
    EXPECT_GE(took, 2500) << "the run's limit counts from where compiling ended";
    EXPECT_LT(took, 10000) << "a hung run is not given compiling's limit";
}

// A worker that hangs or blows its memory says where: the node its backend was running when it
// was killed (backends/progress.hpp). Two hangs in two layers are two bugs, each naming its layer.
TEST(Oracle, HangsAndBlowUpsNameTheirLayerAndEachIsItsOwnBug) {
    auto good = memo::make_in_process(memo::reference::interpreter());
    memo::reference::interpreter truth(memo::dtype::float64);
    const auto m = small_model();
    std::vector<std::string> signatures;
    for (const auto& [f, layer, node, lim] : {std::tuple{test::fault::hang, "Activation", 2, quick()}, std::tuple{test::fault::hang, "Dense", 1, quick()},
                                              std::tuple{test::fault::memory, "Activation", 2, roomy()}}) {
        auto bad = memo::make_isolated<memo::reference::interpreter>([f, l = std::string(layer)] { return test::faulty_backend(f, l); }, test::reg(), lim);
        memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
        const auto v = diff.check(m);
        EXPECT_EQ(v.status(), f == test::fault::hang ? run_status::timeout : run_status::memory) << v.message;
        EXPECT_EQ(v.node, node) << test::name_of(f) << " in " << layer;
        EXPECT_EQ(v.layer, layer);
        signatures.push_back(memo::oracle::signature(v, m));
    }
    EXPECT_NE(signatures[0], signatures[1]);
    EXPECT_NE(signatures[0], signatures[2]);
}

// Once a backend's time-out is confirmed, models that carry its trigger (the layer class and dtype)
// run on it under a short limit: each would cost the whole limit again. A sighting of the known
// hang needs no confirmation; models without the trigger keep the whole limit.
TEST(Oracle, AKnownHangGetsAShortLimit) {
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = isolated_fault(test::fault::hang);
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    const auto first = diff.check(small_model());
    EXPECT_EQ(first.status(), run_status::timeout);
    EXPECT_NE(first.message.find("1500 ms"), std::string::npos) << first.message;
    const auto again = diff.check(small_model(2));
    EXPECT_EQ(again.status(), run_status::timeout);
    EXPECT_NE(again.message.find("250 ms"), std::string::npos) << again.message;
    EXPECT_EQ(memo::oracle::signature(again, small_model(2)), memo::oracle::signature(first, small_model()));
    EXPECT_EQ(diff.short_limit_runs(), 1u);
    EXPECT_EQ(bad->time_limit(), 1500.0);  // restored
    memo::builder b(test::reg());
    b.add("Dense", {b.input({4})}, {{"units", std::int64_t{2}}});
    EXPECT_FALSE(diff.check(b.finish()));
    EXPECT_EQ(diff.short_limit_runs(), 1u);
}

// The same for a memory blow-up: met again, it is stopped at an eighth of the limit (256 MiB at
// least), and the limit comes back for the next model.
TEST(Oracle, AKnownBlowUpGetsAShortMemoryLimit) {
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = isolated_fault(test::fault::memory, {60000, 1024});
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    const auto first = diff.check(small_model());
    EXPECT_EQ(first.status(), run_status::memory);
    EXPECT_NE(first.message.find("limit of 1024 MiB"), std::string::npos) << first.message;
    const auto again = diff.check(small_model(2));
    EXPECT_EQ(again.status(), run_status::memory);
    EXPECT_NE(again.message.find("limit of 256 MiB"), std::string::npos) << again.message;
    EXPECT_EQ(diff.short_limit_runs(), 1u);
    EXPECT_EQ(bad->memory_limit_mb(), 1024);
}

TEST(Oracle, HealthyBackendsAgree) {
    auto a = memo::make_in_process(memo::reference::interpreter());
    auto b = memo::make_in_process(memo::reference::interpreter(std::nullopt, "reference-2"));
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({a.get(), b.get()}, truth, test::reg());
    for (std::uint64_t s = 0; s < 20; ++s) EXPECT_FALSE(diff.check(small_model(s)));
}

TEST(Oracle, DmadFollowsCradle) {
    EXPECT_DOUBLE_EQ(memo::oracle::dmad(1.0, 1.0), 0.0);
    EXPECT_DOUBLE_EQ(memo::oracle::dmad(3.0, 1.0), 0.5);
    EXPECT_DOUBLE_EQ(memo::oracle::dmad(0.0, 0.0), 0.0);
    memo::tensor O({1, 2}), o({1, 2});
    O.data = {1.0, 2.0};
    o.data = {1.5, 1.0};
    EXPECT_DOUBLE_EQ(memo::oracle::mad({o}, {O}), 0.75);
}

TEST(Oracle, RoundingAloneIsNotAnInconsistency) {
    // float32 against float64 through a deep chain: outputs part a little, no node is to blame.
    memo::builder b(test::reg());
    int x = b.input({16});
    for (int i = 0; i < 30; ++i) x = b.add("Dense", {x}, {{"units", std::int64_t{16}}, {"activation", "softsign"}, {"kernel_initializer", "he_normal"}});
    auto m = b.finish();
    auto f32 = memo::make_in_process(memo::reference::interpreter());
    auto f64 = memo::make_in_process(memo::reference::interpreter(memo::dtype::float64));
    memo::reference::interpreter truth(memo::dtype::float64);
    // D_MAD threshold 0 and a tenth of the usual tolerance: the outputs' rounding differences
    // (1e-6 to 1e-5 here) count as candidates, and only the localisation decides.
    memo::oracle::differential diff({f32.get(), f64.get()}, truth, test::reg(), {0.0, 0.1});
    int suppressed = 0;
    for (std::uint64_t s = 0; s < 10; ++s) {
        m.seed = s;
        EXPECT_FALSE(diff.check(m)) << "seed " << s;
        suppressed += diff.last_suppressed();
    }
    EXPECT_GT(suppressed, 0);  // the outputs did differ beyond tolerance: the localisation dropped them
}

TEST(Oracle, AFusedSoftmaxIsJudgedAtItsPreActivationsRounding) {
    // Three filters of ones over inputs up to 1e6: equal pre-activations in float64 that a library
    // summing each filter in an order of its own leaves a unit of float32 apart (about 0.5 here),
    // and the softmax turns that into outputs 0.1 from 1/3: the library's rounding, not a fault.
    memo::builder b(test::reg());
    const int x = b.input({6, 6, 16});
    b.add("Conv2D", {x},
          {{"filters", std::int64_t{3}},
           {"kernel_size", memo::ints{3, 3}},
           {"activation", "softmax"},
           {"kernel_initializer", "Ones"},
           {"bias_initializer", "Ones"}});
    auto m = b.finish();
    memo::reference::interpreter per_filter(std::nullopt, "per-filter");
    per_filter.wrap_kernel(
        "Conv2D",
        []<class T>(std::type_identity<T>, const memo::reference::kernel_in_context<T>& good, const memo::reference::kernel_context& c,
                    std::span<const memo::reference::array<T>> in, std::span<const memo::reference::array<T>> w) -> memo::expected<memo::reference::array<T>> {
            memo::node linear = c.n;
            linear.set("activation", "linear");
            auto z = good({linear, c.m, c.index, c.type}, in, w);
            if (!z) return z;
            if constexpr (std::is_floating_point_v<T>) {
                const auto filters = static_cast<std::size_t>(z->dim(z->rank() - 1));
                for (std::size_t j = 0; j < z->data.size(); ++j)
                    for (std::size_t k = 0; k < j % filters; ++k) z->data[j] = std::nextafter(z->data[j], std::numeric_limits<T>::infinity());
            }
            memo::reference::apply_activation(*z, "softmax");
            return z;
        });
    auto a = memo::make_in_process(memo::reference::interpreter());
    auto p = memo::make_in_process(std::move(per_filter));
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({a.get(), p.get()}, truth, test::reg(), {}, {2, -1e6, 1e6, false});
    int apart = 0;
    for (std::uint64_t s = 0; s < 5; ++s) {
        m.seed = s;
        const auto v = diff.check(m);
        EXPECT_FALSE(v) << "seed " << s << ": " << v.message;
        apart += diff.last_suppressed();
    }
    EXPECT_GT(apart, 0);  // the outputs did part beyond tolerance: the localisation judged them rounding
}

/// A campaign over a faulty backend goes on past every fault and stores each bug once.
TEST(Campaign, GoesOnThroughFaultsAndStoresBugs) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("memo-faulty-campaign-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = memo::make_isolated<memo::reference::interpreter>([] { return test::faulty_backend(test::fault::segfault, "Dense"); }, test::reg(), quick());
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    memo::campaign::execution exec(diff, test::reg(), dir);
    memo::campaign::generation_options o;
    o.out = dir.string();
    o.iterations = 100;
    o.seconds = 120;
    o.quiet = true;
    memo::builder b(test::reg());
    b.add("Dense", {b.add("Activation", {b.input({6})}, {{"activation", "relu"}})}, {{"units", std::int64_t{3}}});
    memo::campaign::generate({b.finish()}, test::reg(), o, &exec);
    EXPECT_GT(exec.executed(), 5u);
    EXPECT_GE(exec.store().unique("crash"), 1u);
    const auto stats = memo::io::parse_json_file((dir / "stats.json").string());
    EXPECT_EQ(stats.at("models_executed").get<std::uint64_t>(), exec.executed());
    EXPECT_GT(stats.at("executions").at("faulty").at("restarts").get<std::uint64_t>(), 0u);
    for (const auto& k : fs::directory_iterator(dir / "bugs"))
        for (const auto& bug : fs::directory_iterator(k.path())) {
            const auto j = memo::io::parse_json_file((bug.path() / "bug.json").string());
            EXPECT_EQ(j.at("culprits")[0], "faulty");
            EXPECT_EQ(j.at("localisation").at("layer"), "Dense");
            EXPECT_NO_THROW(memo::io::load_model((bug.path() / "minimal.json").string(), test::reg()));
            EXPECT_LE(j.at("sizes").at("minimal_layers").get<int>(), j.at("sizes").at("original_layers").get<int>());
        }
    // report.html has a row per stored bug, naming the culprit, the layer and the reproducer.
    const std::string html = memo::io::read_file((dir / "report.html").string());
    std::size_t rows = 0;
    for (auto at = html.find("<tr class=\"bug\">"); at != std::string::npos; at = html.find("<tr class=\"bug\">", at + 1)) ++rows;
    EXPECT_EQ(rows, exec.store().unique());
    EXPECT_NE(html.find("<td>faulty vs reference</td><td>Dense</td>"), std::string::npos);
    EXPECT_NE(html.find("/repro.sh\">repro.sh</a>"), std::string::npos);
    fs::remove_all(dir);
}

/// The workers start before the campaign's clock does (a library imports for seconds): a worker
/// that takes 1.5 s to start leaves the campaign's one second to running models, and the wait is
/// stats.json's time_ms.startup, outside its seconds.
TEST(Campaign, StartsItsWorkersBeforeItsClock) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("memo-slow-start-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const pid_t campaign = ::getpid();
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto slow = memo::make_isolated<memo::reference::interpreter>(
        [campaign] {
            if (::getpid() != campaign) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the worker's start only
            return memo::reference::interpreter();
        },
        test::reg(), roomy());
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), slow.get()}, truth, test::reg());
    memo::campaign::execution exec(diff, test::reg(), dir);
    memo::campaign::generation_options o;
    o.out = dir.string();
    o.seconds = 1;
    o.quiet = true;
    memo::builder b(test::reg());
    b.add("Dense", {b.add("Activation", {b.input({6})}, {{"activation", "relu"}})}, {{"units", std::int64_t{3}}});
    const auto sum = memo::campaign::generate({b.finish()}, test::reg(), o, &exec);
    EXPECT_LT(sum.seconds, 1.4);
    EXPECT_GT(exec.executed(), 5u);
    const auto stats = memo::io::parse_json_file((dir / "stats.json").string());
    EXPECT_GE(stats.at("time_ms").at("startup").get<double>(), 1500.0);
    fs::remove_all(dir);
}

/// SIGKILL at any moment loses no stored bug: every bug directory that exists is complete.
TEST(Campaign, KilledCampaignLosesNoStoredBug) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("memo-killed-campaign-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto good = memo::make_in_process(memo::reference::interpreter());
        auto bad = memo::make_in_process(test::faulty_backend(test::fault::wrong_value, "Dense"));
        memo::reference::interpreter truth(memo::dtype::float64);
        memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
        memo::campaign::execution exec(diff, test::reg(), dir);
        memo::campaign::generation_options o;
        o.out = dir.string();
        o.seconds = 60;
        o.quiet = true;
        o.max_cost = 200000;  // small models: the planted fault reaches their outputs
        memo::builder b(test::reg());
        b.add("Dense", {b.add("Activation", {b.input({6})}, {{"activation", "relu"}})}, {{"units", std::int64_t{3}}});
        memo::campaign::generate({b.finish()}, test::reg(), o, &exec);
        ::_exit(0);
    }
    // Kill it once bugs are being written.
    for (int i = 0; i < 3000; ++i) {
        std::error_code ec;
        if (fs::exists(dir / "bugs" / "inconsistency", ec) && std::distance(fs::directory_iterator(dir / "bugs" / "inconsistency", ec), {}) >= 1) break;
        ::usleep(10000);
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(fs::exists(dir / "bugs" / "inconsistency"));
    int complete = 0;
    for (const auto& bug : fs::directory_iterator(dir / "bugs" / "inconsistency")) {
        EXPECT_NO_THROW(memo::io::parse_json_file((bug.path() / "bug.json").string()));
        EXPECT_NO_THROW(memo::io::load_model((bug.path() / "model.json").string(), test::reg()));
        EXPECT_NO_THROW(memo::io::load_model((bug.path() / "minimal.json").string(), test::reg()));
        ++complete;
    }
    EXPECT_GE(complete, 1);
    // The store reopens them all.
    memo::store::bug_store again(dir);
    EXPECT_EQ(again.unique("inconsistency"), static_cast<std::size_t>(complete));
    fs::remove_all(dir);
}

}  // namespace

namespace {

/// A library that runs the whole graph at once and hangs on any model with an Activation, without
/// saying where it was: the reference interpreter otherwise.
struct graph_hanger {
    memo::reference::interpreter inner{};
    std::string_view name() const { return "hanger"; }
    memo::expected<void> supports(const memo::model&) const { return {}; }
    memo::run_result run(const memo::model& m, std::span<const memo::tensor> in, const memo::run_options& o) {
        for (const auto& n : m.nodes)
            if (n.layer->name == "Activation")
                for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        return inner.run(m, in, o);
    }
};

}  // namespace

// A time-out on a library that does not say where it hung is localised by running prefixes of the
// model, and the layer it names is a known hang from then on: the next sighting gets the short
// limit and the same node, without being confirmed or localised again.
TEST(Oracle, WholeGraphHangIsLocalisedByPrefixes) {
    auto good = memo::make_in_process(memo::reference::interpreter());
    auto bad = memo::make_isolated<graph_hanger>([] { return graph_hanger{}; }, test::reg(), quick());
    memo::reference::interpreter truth(memo::dtype::float64);
    memo::oracle::differential diff({good.get(), bad.get()}, truth, test::reg());
    const auto first = diff.check(small_model());
    EXPECT_EQ(first.status(), run_status::timeout) << first.message;
    EXPECT_EQ(first.node, 2);
    EXPECT_EQ(first.layer, "Activation");
    const auto again = diff.check(small_model(2));
    EXPECT_EQ(again.status(), run_status::timeout);
    EXPECT_NE(again.message.find("250 ms"), std::string::npos) << again.message;
    EXPECT_EQ(again.node, 2);
    EXPECT_EQ(memo::oracle::signature(again, small_model(2)), memo::oracle::signature(first, small_model()));
}

}  // namespace test_backends_isolate_test
