// PyTorch (its Python worker, tools/torch-worker) eager and compiled by torch.compile (Inductor)
// as a library under test: every layer class agrees with the reference interpreter within float32
// tolerance, or differs where PyTorch is known to (listed below with why); what the worker cannot
// carry or PyTorch lacks is declined with its reason; every node's output and teacher forcing come
// back one per node; the worker's death and time-out are verdicts.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/backends/torch/worker.hpp>
#include <memo/oracle/differential.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"
#include "../unit/workers.hpp"

namespace test_pytorch_torch_worker_test {

namespace {

using memo::dtype;

/// "torch" runs eagerly, "torch-compile" compiled by torch.compile.
memo::torch::worker_options options_for(const std::string& name) {
    memo::torch::worker_options o;
    o.python = test::python();
    o.worker = MEMO_SOURCE_DIR "/tools/torch-worker/worker.py";
    o.name = name;
    o.compile = name == "torch-compile";
    // Importing torch, and for Inductor its first compilation, take tens of seconds on a busy
    // machine; one model's compilation takes seconds.
    o.limits.startup_ms = 240000;
    o.limits.timeout_ms = 120000;
    return o;
}

memo::torch::worker_runtime& worker(const std::string& name) {
    static std::map<std::string, std::unique_ptr<memo::torch::worker_runtime>> all;
    auto& r = all[name];
    if (!r) r = std::make_unique<memo::torch::worker_runtime>(options_for(name));
    return *r;
}

/// Where PyTorch differs from Keras 2.8's semantics (the reference's), as this test found it, each
/// with why: a random model of these classes may differ from the reference for that reason; a
/// model of any other class must agree. None today, eager or compiled.
const test::findings known_findings = {};

}  // namespace

TEST(TorchWorker, Installed) {
    for (const char* n : {"torch", "torch-compile"}) ASSERT_EQ(memo::torch::unavailable(options_for(n)), "") << "run scripts/setup.sh";
}

// Every layer class of the registry against the reference in float32: 2 random single-layer
// float32 models each eagerly, and the smaller of them (fewer input elements: a recurrence over
// fewer steps) compiled by Inductor too, which takes seconds a model and a second a kernel. A
// model PyTorch declines is counted, not failed; a difference is a failure unless the class is a
// known finding. A float32 run of an ill-conditioned model (an exponential recurrence) drifts from
// float64 by more than 1e-4 in any implementation: the bound is then a hundred times what float32
// rounding of the inputs alone moves the float64 result.
TEST(TorchWorker, EveryLayerClassAgreesWithTheReferenceOrIsAKnownFinding) {
    test::agree_with_reference({.seed = 20261203,
                                .models_per_class = 2,
                                .draws_per_class = 60,
                                .takes = [](const memo::model& m) { return memo::torch::supports(m) && m.nodes.back().type == dtype::float32; },
                                .lanes = {{.name = "torch", .run = test::runs_on(worker("torch"))},
                                          {.name = "torch-compile", .run = test::runs_on(worker("torch-compile")), .smallest_only = true}},
                                .steps = {{.within = test::always({.floor = 1e-4, .drift_times = 100})}},
                                .known = known_findings,
                                .min_classes = 70});
}

// MEMO's seed models run like the reference; every node's output and teacher forcing (each layer
// fed the given tensors) come back one per node, eagerly whether or not the worker compiles.
TEST(TorchWorker, EveryNodeAndTeacherForcing) {
    test::every_node_and_teacher_forcing(
        {{.name = "torch", .run = test::runs_on(worker("torch"))}, {.name = "torch-compile", .run = test::runs_on(worker("torch-compile"))}},
        {.every_node_within = 1e-4});
}

// What the worker cannot take is declined with the reason: float64 before anything is sent (the
// frames carry float32), a CPU kernel PyTorch lacks for float16 when the worker meets it, and a
// layer class the lowering has no function for.
// A fault of the compiler alone (tests/data/planted_library: what torch.compile returns gives
// outputs 1 % off, the eager run right) shows in no layer run alone, as torch-compile's forced
// runs are eager: the oracle keeps it as the whole graph's, since the same library's every-node
// run of the model agrees with the reference. Without rewrites_graph it would be dropped as
// rounding accumulated over the layers.
TEST(TorchWorker, ACompilersFaultIsAVerdictOfTheWholeGraph) {
    ::setenv("PYTHONPATH", MEMO_TEST_DATA_DIR "/planted_library", 1);
    ::setenv("MEMO_PLANTED_FAULT", "torch-compile", 1);
    memo::torch::worker_runtime faulty(options_for("torch-compile"));  // its worker starts at the first run
    EXPECT_TRUE(faulty.rewrites_graph());
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
    memo::reference::interpreter truth(dtype::float64);
    std::vector<memo::executor*> xs{&ref, &faulty};
    memo::oracle::differential diff(xs, truth, test::reg());
    const auto v = diff.check(test::lenet());
    ASSERT_EQ(v.what, memo::oracle::kind::inconsistency) << v.message;
    EXPECT_TRUE(v.whole_graph);
    EXPECT_LT(v.node, 0);
    EXPECT_EQ(v.culprits, std::vector<std::string>{"torch-compile"});
    EXPECT_NE(v.message.find("rewritten graph"), std::string::npos) << v.message;
    faulty.set_rewrites_graph(false);
    EXPECT_FALSE(diff.check(test::lenet())) << "without rewrites_graph the fault would be taken for rounding";
    ::unsetenv("MEMO_PLANTED_FAULT");
    ::unsetenv("PYTHONPATH");
}

TEST(TorchWorker, DeclinesWhatItCannotRun) {
    {
        memo::builder b(test::reg());
        b.add("ReLU", {b.input({4}, dtype::float64)});
        const auto m = b.finish();
        const auto got = worker("torch").run(m, memo::make_inputs(m));
        EXPECT_EQ(got.status, memo::run_status::unsupported);
        EXPECT_NE(got.message.find("float32 values, not float64"), std::string::npos) << got.message;
    }
    {
        memo::builder b(test::reg());
        b.add("AveragePooling3D", {b.input({4, 4, 4, 2}, dtype::float16)});
        const auto m = b.finish();
        ASSERT_TRUE(memo::torch::supports(m));
        const auto got = worker("torch").run(m, memo::make_inputs(m));
        EXPECT_EQ(got.status, memo::run_status::unsupported) << got.message;
        EXPECT_NE(got.message.find("not implemented for 'Half'"), std::string::npos) << got.message;
        EXPECT_EQ(got.node, 1) << got.message;
    }
    {
        memo::layer_def mine = test::reg().at("ReLU");
        mine.name = "MyActivation";
        memo::builder b(test::reg());
        b.add("ReLU", {b.input({4})});
        memo::model m = b.finish();
        m.nodes.back().layer = &mine;
        const auto got = worker("torch").run(m, memo::make_inputs(m));
        EXPECT_EQ(got.status, memo::run_status::unsupported) << got.message;
        EXPECT_NE(got.message.find("no layer MyActivation"), std::string::npos) << got.message;
        EXPECT_EQ(got.node, 1) << got.message;
    }
}

// The worker is a worker process like any other: killed while it holds a request it is a crash
// verdict with its signal, past its time limit a timeout, and the next model starts a fresh one.
TEST(TorchWorker, DeathAndTimeOutAreVerdictsAndTheWorkerRestarts) {
    const auto& m = test::lenet();
    const auto in = memo::make_inputs(m);
    memo::torch::worker_runtime r(options_for("torch"));
    ASSERT_NO_FATAL_FAILURE(test::killed_worker_is_a_crash_and_restarts(r, m, in));

    // A limit no run meets: LeNet takes PyTorch 0.8 ms on a fast machine.
    r.set_time_limit(0.01);
    const auto late = r.run(m, in);
    EXPECT_EQ(late.status, memo::run_status::timeout) << late.message << " (" << late.ms << " ms)";
    // Past the limit the worker is killed and restarted; an answer already waiting when the
    // campaign's thread looks (it was descheduled, on a loaded machine) is a timeout all the same.
    EXPECT_TRUE(r.restarts() == 2U || late.message.starts_with("answered after")) << late.message;
}

// Every layer class gets a reproducer in PyTorch's own terms that shows a planted fault and exits
// 0 on the clean library (tests/data/planted_library/sitecustomize.py): for torch, every torch
// function's results off by 1 %; for torch-compile, what torch.compile returns off so, the eager
// run right (the reproducer holds the compiled run against the eager one). Each script imports
// PyTorch anew, twice a class, and the compiled ones compile: minutes, so it runs when
// MEMO_REPRODUCER_SWEEP names torch or torch-compile.
TEST(TorchReproducers, EveryLayerClassShowsAPlantedFaultAndPassesOnTheCleanLibrary) {
    const auto names = test::sweeps_asked({"torch", "torch-compile"});
    if (names.empty()) GTEST_SKIP() << "set MEMO_REPRODUCER_SWEEP=torch,torch-compile to run it";
    for (const auto& name : names) {
        SCOPED_TRACE(name);
        const auto r = test::sweep_reproducers({.fault = name == "torch" ? "torch-eager" : "torch-compile",
                                                .plant = {{"PYTHONPATH", MEMO_TEST_DATA_DIR "/planted_library"}},
                                                .runner = test::python(),
                                                .supports = [](const memo::model& m) { return static_cast<bool>(memo::torch::supports(m)); },
                                                .known = [](std::string_view c) { return known_findings.count(c) != 0; }},
                                               [&] { return memo::torch::worker_runtime(options_for(name)); });
        EXPECT_GE(r.classes, 40);
        EXPECT_TRUE(r.without.empty());
    }
}

}  // namespace test_pytorch_torch_worker_test
