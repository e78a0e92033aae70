// PyTorch (its Python worker, tools/torch-worker) eager and compiled by torch.compile (Inductor)
// as a library under test: every layer class agrees with the reference interpreter within float32
// tolerance, or differs where PyTorch is known to (listed below with why); what the worker cannot
// carry or PyTorch lacks is declined with its reason; every node's output and teacher forcing come
// back one per node; the worker's death and time-out are verdicts.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/backends/torch/worker.hpp>
#include <memo/oracle/differential.hpp>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>

#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"

namespace test_pytorch_torch_worker_test {

namespace {

using test::describe;
using test::relative_error;

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

const memo::model& lenet() {
    static const auto m = memo::io::load_keras(MEMO_TEST_DATA_DIR "/memo/synthesized_models/lenet5-mnist_orig-simplified.json", test::reg());
    return m;
}

/// Where PyTorch differs from Keras 2.8's semantics (the reference's), as this test found it, each
/// with why: a random model of these classes may differ from the reference for that reason; a
/// model of any other class must agree. None today, eager or compiled.
const std::map<std::string, std::string, std::less<>> known_findings = {};

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
    constexpr int models_per_class = 2;
    const std::vector<std::string> backends{"torch", "torch-compile"};
    memo::reference::interpreter ref;
    memo::rng r(20261203);
    struct row {
        int runs = 0, declined = 0, differ = 0;
        double worst = 0, ms = 0;
        std::string why;
    };
    std::map<std::string, std::map<std::string, row>> table;  // backend -> class -> row
    std::map<std::string, bool> undrawn;
    auto compare = [&](const std::string& b, const memo::model& m) {
        SCOPED_TRACE(b + ": " + describe(m));
        const auto in = memo::make_inputs(m);
        const auto want = ref.run(m, in, {});
        ASSERT_TRUE(want.ok()) << want.message;
        row& t = table[b][std::string(m.nodes.back().layer->name)];
        const auto start = std::chrono::steady_clock::now();
        const auto got = worker(b).run(m, in);
        t.ms = std::max(t.ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        if (got.status == memo::run_status::unsupported) {
            ++t.declined;
            t.why = got.message;
            return;
        }
        const double e = got.ok() ? relative_error(got.outputs.at(0), want.outputs.at(0)) : std::numeric_limits<double>::infinity();
        ++t.runs;
        t.worst = std::max(t.worst, e);
        if (e <= 1e-4) return;
        double drift = 0;
        if (got.ok()) {
            const auto truth = ref.run(m, in, {false, {}, dtype::float64});
            drift = test::input_rounding_drift(ref, m, in, truth.outputs.at(0), memo::unit_roundoff(dtype::float32), 7);
            if (e <= 100 * drift) return;
        }
        ++t.differ;
        if (!known_findings.count(m.nodes.back().layer->name))
            ADD_FAILURE() << "differs from the reference: " << memo::name_of(got.status) << " " << got.message << ", error " << e
                          << " (float32 rounding of the inputs moves the float64 result by " << drift << ")";
    };
    for (const auto& L : test::reg()) {
        if (L.arity.max == 0) continue;
        std::vector<memo::model> drawn;
        for (int k = 0; k < 60 && static_cast<int>(drawn.size()) < models_per_class; ++k) {
            auto m = test::random_layer_model(L, r);
            ASSERT_TRUE(m) << L.name;
            if (memo::torch::supports(*m) && m->nodes.back().type == dtype::float32) drawn.push_back(std::move(*m));
        }
        if (drawn.empty()) {
            undrawn[std::string(L.name)] = true;
            continue;
        }
        for (const auto& m : drawn) compare("torch", m);
        const auto elements = [](const memo::model& m) { return m.nodes.front().out.elements(); };
        compare("torch-compile", *std::min_element(drawn.begin(), drawn.end(), [&](const auto& a, const auto& b) { return elements(a) < elements(b); }));
    }
    for (const auto& b : backends) {
        std::printf("\n%s\n%-26s %5s %5s %6s %10s %9s  %s\n", b.c_str(), "layer", "runs", "decl", "differ", "max error", "max ms",
                    "declined because / known finding");
        int runs = 0, differ = 0, declined = 0, classes = 0;
        double ms = 0;
        for (const auto& [name, t] : table[b]) {
            const auto it = known_findings.find(name);
            std::printf("%-26s %5d %5d %6d %10.2e %9.0f  %s\n", name.c_str(), t.runs, t.declined, t.differ, t.worst, t.ms,
                        t.declined                               ? t.why.c_str()
                        : it != known_findings.end() && t.differ ? it->second.c_str()
                                                                 : "");
            runs += t.runs;
            differ += t.differ;
            declined += t.declined;
            classes += t.runs > 0;
            ms += t.ms;
        }
        std::printf("%s: %d layer classes run, %d runs compared, %d differ (each a known finding), %d declined; slowest run of each class %.0f ms in all\n",
                    b.c_str(), classes, runs, differ, declined, ms);
        EXPECT_GE(classes, 70) << b;
    }
    for (const auto& [name, _] : undrawn) std::printf("no float32 model drawn of %s\n", name.c_str());
}

// MEMO's seed models run like the reference; every node's output and teacher forcing (each layer
// fed the given tensors) come back one per node, eagerly whether or not the worker compiles.
TEST(TorchWorker, EveryNodeAndTeacherForcing) {
    memo::reference::interpreter ref;
    const auto& m = lenet();
    const auto in = memo::make_inputs(m);
    const auto truth = ref.run(m, in, {true, {}, dtype::float64});
    ASSERT_TRUE(truth.ok());
    auto fed = truth.outputs;
    for (auto& t : fed)
        for (auto& v : t.data) v = memo::round_to(dtype::float32, v);
    for (const char* b : {"torch", "torch-compile"}) {
        SCOPED_TRACE(b);
        const auto plain = worker(b).run(m, in);
        ASSERT_TRUE(plain.ok()) << plain.message;
        ASSERT_EQ(plain.outputs.size(), m.outputs.size());
        EXPECT_LE(relative_error(plain.outputs[0], truth.outputs[static_cast<std::size_t>(m.outputs[0])]), 1e-4);
        const auto every = worker(b).run(m, in, {true, {}, {}});
        ASSERT_TRUE(every.ok()) << every.message;
        ASSERT_EQ(every.outputs.size(), m.size());
        const auto forced = worker(b).run(m, in, {true, fed, {}});
        ASSERT_TRUE(forced.ok()) << forced.message;
        ASSERT_EQ(forced.outputs.size(), m.size());
        for (std::size_t i = 0; i < m.size(); ++i) {
            EXPECT_EQ(every.outputs[i].dims, truth.outputs[i].dims) << i;
            EXPECT_LE(relative_error(every.outputs[i], truth.outputs[i]), 1e-4) << "node " << i;
            EXPECT_LE(relative_error(forced.outputs[i], truth.outputs[i]), 1e-5) << "node " << i;
        }
        EXPECT_EQ(worker(b).run(m, in, {false, {}, dtype::float64}).status, memo::run_status::unsupported);
    }
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
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()}, truth{memo::reference::interpreter(dtype::float64)};
    std::vector<memo::executor*> xs{&ref, &faulty};
    memo::oracle::differential diff(xs, truth, test::reg());
    const auto v = diff.check(lenet());
    ASSERT_EQ(v.what, memo::oracle::kind::inconsistency) << v.message;
    EXPECT_TRUE(v.whole_graph);
    EXPECT_LT(v.node, 0);
    EXPECT_EQ(v.culprits, std::vector<std::string>{"torch-compile"});
    EXPECT_NE(v.message.find("rewritten graph"), std::string::npos) << v.message;
    faulty.set_rewrites_graph(false);
    EXPECT_FALSE(diff.check(lenet())) << "without rewrites_graph the fault would be taken for rounding";
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
    const auto& m = lenet();
    const auto in = memo::make_inputs(m);
    memo::torch::worker_runtime r(options_for("torch"));
    ASSERT_TRUE(r.run(m, in).ok());
    const pid_t first = r.worker_pid();
    ASSERT_GT(first, 0);
    ::kill(first, SIGKILL);
    r.submit(m, in, {});
    const auto dead = r.collect();
    EXPECT_EQ(dead.status, memo::run_status::crash) << dead.message;
    EXPECT_EQ(dead.signal, SIGKILL);
    EXPECT_EQ(r.restarts(), 1U);
    const auto again = r.run(m, in);
    EXPECT_TRUE(again.ok()) << again.message;
    EXPECT_NE(r.worker_pid(), first);

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
