// One worker serving several lanes (memo::shared_executor): each lane gets its own run's answer
// whatever order the lanes collect in, a lane's limits and restarts stay its own, and a lane that
// abandons its run leaves the others' alone.
#include <chrono>
#include <memory>
#include <thread>

#include <memo/backends/isolate.hpp>
#include <memo/backends/shared.hpp>
#include <memo/tensors/inputs.hpp>

#include "../support.hpp"

namespace test_backends_shared_test {

namespace {

using memo::run_status;

memo::model dense_model(std::uint64_t seed) {
    memo::builder b(test::reg());
    const int x = b.input({4});
    b.add("Dense", {x}, {{"units", std::int64_t{3}}});
    auto m = b.finish();
    m.seed = seed;
    return m;
}

/// A backend whose every run sleeps `ms` and answers ok.
struct sleeper {
    int ms = 0;
    std::string_view name() const { return "sleeper"; }
    memo::expected<void> supports(const memo::model&) const { return {}; }
    memo::run_result run(const memo::model&, std::span<const memo::tensor>, const memo::run_options&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        memo::run_result r;
        r.status = run_status::ok;
        return r;
    }
};

std::shared_ptr<memo::shared_executor> shared_reference() {
    return std::make_shared<memo::shared_executor>(
        memo::make_isolated<memo::reference::interpreter>([] { return memo::reference::interpreter(); }, test::reg(), {10000, 512}));
}

pid_t pid_of(memo::shared_executor& s) { return dynamic_cast<memo::isolated<memo::reference::interpreter>&>(s.shared()).worker_pid(); }

// Three lanes submit before any collects, and collect in the reverse order: each gets the outputs of
// its own model, all from the one worker.
TEST(SharedWorker, EachLaneGetsItsOwnAnswer) {
    auto s = shared_reference();
    std::vector<std::unique_ptr<memo::executor>> lanes;
    std::vector<memo::model> models;
    std::vector<std::vector<memo::tensor>> inputs;
    for (std::uint64_t k = 0; k < 3; ++k) {
        lanes.push_back(memo::shared_executor::lane(s));
        models.push_back(dense_model(k + 1));
        inputs.push_back(memo::make_inputs(models.back()));
    }
    for (std::size_t k = 0; k < 3; ++k) lanes[k]->submit(models[k], inputs[k], {});
    const pid_t worker = pid_of(*s);
    EXPECT_GT(worker, 0);
    memo::reference::interpreter here;
    for (std::size_t k = 3; k-- > 0;) {
        const auto r = lanes[k]->collect();
        ASSERT_EQ(r.status, run_status::ok) << r.message;
        const auto want = here.run(models[k], inputs[k], {});
        ASSERT_EQ(r.outputs.size(), want.outputs.size());
        EXPECT_EQ(r.outputs[0].data, want.outputs[0].data) << "lane " << k;
    }
    EXPECT_EQ(pid_of(*s), worker);
    for (const auto& l : lanes) EXPECT_EQ(l->restarts(), 0u);
}

// A lane waiting in the queue is not ready, and becomes ready once the run ahead of it and its own
// have been answered, without a collect() from the lane ahead.
TEST(SharedWorker, AQueuedLaneBecomesReadyAsTheQueueMoves) {
    auto s = std::make_shared<memo::shared_executor>(memo::make_isolated<sleeper>([] { return sleeper{300}; }, test::reg(), {10000, 512}));
    auto a = memo::shared_executor::lane(s), b = memo::shared_executor::lane(s);
    const auto m = dense_model(1);
    const auto in = memo::make_inputs(m);
    a->submit(m, in, {});
    b->submit(m, in, {});
    EXPECT_FALSE(b->ready());
    EXPECT_GE(b->awaited_fd(), 0);  // the worker's: its answer to a lets the queue move
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!b->ready() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(b->ready());
    EXPECT_TRUE(a->ready());
    EXPECT_EQ(b->collect().status, run_status::ok);
    EXPECT_EQ(a->collect().status, run_status::ok);
}

// Limits are the lane's: a lane with a short time limit gets the time-out (and the restart it
// caused), the lane queued behind it runs on a fresh worker within its own limit.
TEST(SharedWorker, LimitsAndRestartsAreTheLanes) {
    auto s = std::make_shared<memo::shared_executor>(memo::make_isolated<sleeper>([] { return sleeper{800}; }, test::reg(), {10000, 512}));
    auto quick = memo::shared_executor::lane(s), patient = memo::shared_executor::lane(s);
    quick->set_time_limit(200);
    const auto m = dense_model(1);
    const auto in = memo::make_inputs(m);
    quick->submit(m, in, {});
    patient->submit(m, in, {});
    const auto p = patient->collect();
    EXPECT_EQ(p.status, run_status::ok) << p.message;
    EXPECT_EQ(quick->collect().status, run_status::timeout);
    EXPECT_EQ(quick->restarts(), 1u);
    EXPECT_EQ(patient->restarts(), 0u);
    EXPECT_EQ(patient->time_limit(), 10000);
}

// A lane that abandons its queued run takes it off the queue; one that abandons the run in flight
// stops the worker, and the next lane's run goes to a fresh one.
TEST(SharedWorker, AbandonedRunsLeaveTheOtherLanesAlone) {
    auto s = std::make_shared<memo::shared_executor>(memo::make_isolated<sleeper>([] { return sleeper{300}; }, test::reg(), {10000, 512}));
    auto a = memo::shared_executor::lane(s), b = memo::shared_executor::lane(s), c = memo::shared_executor::lane(s);
    const auto m = dense_model(1);
    const auto in = memo::make_inputs(m);
    a->submit(m, in, {});
    b->submit(m, in, {});
    c->submit(m, in, {});
    b->abandon();
    EXPECT_EQ(a->collect().status, run_status::ok);
    c->abandon();  // now in flight
    a->submit(m, in, {});
    EXPECT_EQ(a->collect().status, run_status::ok);
    b->submit(m, in, {});
    EXPECT_EQ(b->collect().status, run_status::ok);
}

}  // namespace

}  // namespace test_backends_shared_test
