// Keras 3 (its Python worker, tools/keras-worker) on TensorFlow, JAX and PyTorch, eager and
// compiled by XLA, as libraries under test: every layer class each runs agrees with the reference
// interpreter within float32 tolerance, or differs where Keras 3 is known to (listed below with
// why); what it lacks is declined with its reason; every node's output and teacher forcing come
// back one per node; the worker's death and time-out are verdicts.
#include <memo/backends/keras/backend.hpp>
#include <memo/backends/reference/interpreter.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"
#include "../unit/workers.hpp"

namespace test_keras_keras_test {

namespace {

using test::relative_error;

using memo::dtype;

memo::keras3::options options_for(const std::string& name) {
    memo::keras3::options o;
    o.python = test::python();
    o.worker = MEMO_SOURCE_DIR "/tools/keras-worker/worker.py";
    o.name = name;
    o.jit = name.ends_with("-xla");
    o.backend = name.starts_with("keras-tensorflow") ? "tensorflow" : name.starts_with("keras-jax") ? "jax" : "torch";
    o.limits.startup_ms = 120000;
    o.limits.timeout_ms = 60000;
    return o;
}

memo::keras3::runtime& keras(const std::string& name) {
    static std::map<std::string, std::unique_ptr<memo::keras3::runtime>> all;
    auto& r = all[name];
    if (!r) r = std::make_unique<memo::keras3::runtime>(options_for(name));
    return *r;
}

/// Where Keras 3 differs from Keras 2.8's semantics (the reference's), as this test found it: a
/// random model of these classes may differ from the reference for that reason; a model of any
/// other class must agree.
const test::findings known_findings = {
    {"LayerNormalization", "keras-torch: an axis other than the last fails (torch's layer_norm is given the wrong normalized_shape)"},
    {"AveragePooling2D", "keras-torch: uneven 'same' padding counts replicated edges in (keras-torch-avgpool-same-replicate)"},
    {"AveragePooling3D", "keras-torch: uneven 'same' padding counts replicated edges in (keras-torch-avgpool-same-replicate)"},
    {"Softmax", "keras-tensorflow: oneDNN's softmax refuses more than 5 dimensions where TensorFlow turns oneDNN on (tensorflow-onednn-softmax-rank6)"},
};

}  // namespace

TEST(KerasBackend, Installed) {
    for (const char* n : {"keras-tensorflow", "keras-jax", "keras-torch"}) ASSERT_EQ(memo::keras3::unavailable(options_for(n)), "") << "run scripts/setup.sh";
}

// Every layer class of the registry, 2 random single-layer float32 models each, on each Keras
// backend eager and on XLA, against the reference in float32. A model Keras declines is counted,
// not failed; a difference is a failure unless the class is a known finding.
TEST(KerasBackend, EveryLayerClassAgreesWithTheReferenceOrIsAKnownFinding) {
    std::vector<test::lane> lanes;
    for (const char* b : {"keras-tensorflow", "keras-jax", "keras-torch", "keras-tensorflow-xla", "keras-jax-xla"})
        lanes.push_back({.name = b, .run = test::runs_on(keras(b))});
    test::agree_with_reference({.seed = 20261128,
                                .models_per_class = 2,
                                .draws_per_class = 60,
                                .takes = [](const memo::model& m) { return memo::keras3::supports(m) && m.nodes.back().type == dtype::float32; },
                                .lanes = lanes,
                                .known = known_findings,
                                .min_classes = 60});
}

// MEMO's seed models run like the reference; every node's output and teacher forcing (each layer
// fed the given tensors) come back one per node.
TEST(KerasBackend, EveryNodeAndTeacherForcing) {
    std::vector<test::lane> lanes;
    for (const char* b : {"keras-tensorflow", "keras-torch", "keras-jax-xla"}) lanes.push_back({.name = b, .run = test::runs_on(keras(b))});
    test::every_node_and_teacher_forcing(lanes);
}

// JAX's eager run compiles each layer once for all layers that compute the same function: a Dense
// that differs from one run before only in its initializers, regularizer and constraint (which the
// worker's keras3_dialect sets aside: memo sets every weight) runs that one's code, nothing
// compiled, with its own weights.
TEST(KerasBackend, LayersThatDifferInInertParametersShareJaxsCodeAndKeepTheirWeights) {
    memo::reference::interpreter ref;
    const auto dense = [](std::initializer_list<std::pair<std::string_view, memo::value>> p) {
        memo::builder b(test::reg());
        const int x = b.add("InputLayer", {}, {{"shape", memo::ints{7}}, {"dtype", "float32"}});
        b.add("Dense", {x}, p);
        b.seed(3);
        return b.finish();
    };
    const auto first = dense({{"units", std::int64_t{5}}, {"kernel_initializer", "glorot_uniform"}});
    const auto second = dense({{"units", std::int64_t{5}},
                               {"kernel_initializer", "Ones"},
                               {"bias_initializer", "RandomNormal"},
                               {"kernel_regularizer", "l2"},
                               {"kernel_constraint", "NonNeg"}});
    const auto other = dense({{"units", std::int64_t{5}}, {"kernel_initializer", "Ones"}, {"use_bias", false}});
    auto& jax = keras("keras-jax");
    for (const auto* m : {&first, &second, &other}) {
        const auto in = memo::make_inputs(*m);
        const auto got = jax.run(*m, in);
        ASSERT_TRUE(got.ok()) << got.message;
        const auto truth = ref.run(*m, in, {false, {}, dtype::float64});
        EXPECT_LE(relative_error(got.outputs[0], truth.outputs[0]), 1e-5);
        if (m == &second) {
            EXPECT_EQ(got.compile_ms, 0.0);  // first's code
        }
        if (m == &other) {
            EXPECT_GT(got.compile_ms, 0.0);  // no bias: a function of its own
        }
    }
}

// What Keras 3 lacks is declined with the reason before anything is sent: a class it dropped.
TEST(KerasBackend, DeclinesWhatItLacks) {
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{6, 4}}, {"dtype", "float32"}});
    b.add("ThresholdedReLU", {x}, {});
    b.seed(1);
    const auto m = b.finish();
    const auto got = keras("keras-torch").run(m, memo::make_inputs(m));
    EXPECT_EQ(got.status, memo::run_status::unsupported);
    EXPECT_NE(got.message.find("Keras 3 has no layer ThresholdedReLU"), std::string::npos) << got.message;
}

// The worker is a worker process like any other: killed while it holds a request it is a crash
// verdict with its signal, past its time limit a timeout, and the next model starts a fresh one.
TEST(KerasWorker, DeathAndTimeOutAreVerdictsAndTheWorkerRestarts) {
    const auto& m = test::lenet();
    const auto in = memo::make_inputs(m);
    memo::keras3::runtime r(options_for("keras-torch"));
    ASSERT_NO_FATAL_FAILURE(test::killed_worker_is_a_crash_and_restarts(r, m, in));

    r.set_time_limit(0.01);  // a limit no run meets, however fast the machine
    const auto late = r.run(m, in);
    EXPECT_EQ(late.status, memo::run_status::timeout) << late.message;
    // Past the limit the worker is killed and restarted; an answer already waiting when the
    // campaign's thread looks (it was descheduled, on a loaded machine) is a timeout all the same.
    EXPECT_TRUE(r.restarts() == 2U || late.message.starts_with("answered after")) << late.message;
}

// The worker tells memo when it compiles (tools/frames.py, fd 5) and how long it did: a compiled
// run whose compiling is past compiling's own limit is declined as compiling too long, however
// long the run's limit; with room to compile, the same run goes through.
TEST(KerasWorker, CompilingPastItsLimitIsDeclined) {
    const auto& m = test::lenet();
    const auto in = memo::make_inputs(m);
    auto o = options_for("keras-jax-xla");
    o.limits.compile_ms = 1;
    memo::keras3::runtime r(o);
    const auto declined = r.run(m, in);
    EXPECT_EQ(declined.status, memo::run_status::unsupported) << declined.message;
    EXPECT_NE(declined.message.find("compiles too long"), std::string::npos) << declined.message;
    o.limits.compile_ms = 60000;
    memo::keras3::runtime roomy(o);
    const auto ran = roomy.run(m, in);
    EXPECT_TRUE(ran.ok()) << ran.message;
    EXPECT_GT(ran.compile_ms, 0.0);
}

// Every layer class gets a reproducer in Keras' own terms that shows a fault planted in every
// keras.layers class (outputs off by 1 %, tests/data/planted_library/sitecustomize.py) and exits 0
// on the clean library, on each Keras backend named in MEMO_REPRODUCER_SWEEP (keras-torch, say).
// Each script imports Keras anew (2 to 6 s), twice a class: some ten minutes a backend, so it runs
// when asked for, not in every test run.
TEST(KerasReproducers, EveryLayerClassShowsAPlantedFaultAndPassesOnTheCleanLibrary) {
    const auto names = test::sweeps_asked({"keras-tensorflow", "keras-jax", "keras-torch", "keras-tensorflow-xla", "keras-jax-xla"});
    if (names.empty()) GTEST_SKIP() << "set MEMO_REPRODUCER_SWEEP=keras-torch (or another Keras backend) to run it";
    for (const auto& name : names) {
        SCOPED_TRACE(name);
        const auto r = test::sweep_reproducers({.fault = "keras-layers",
                                                .plant = {{"PYTHONPATH", MEMO_TEST_DATA_DIR "/planted_library"}},
                                                .runner = MEMO_SOURCE_DIR "/.venv/bin/python",
                                                .supports = [](const memo::model&) { return true; },
                                                .known = [](std::string_view c) { return known_findings.count(c) != 0; }},
                                               [&] { return memo::keras3::runtime(options_for(name)); });
        EXPECT_GE(r.classes, 40);
        EXPECT_TRUE(r.without.empty());
    }
}

}  // namespace test_keras_keras_test
