// TensorFlow.js (tfjs-layers 4.22 on its cpu and wasm kernels, the real Node.js worker) as a
// library under test: every layer class it runs agrees with the reference interpreter within
// float32 tolerance, or differs where tfjs is known to (its findings, listed below with why);
// what it lacks is declined with its reason; a layer it shapes otherwise is a shape verdict at
// that layer; the worker's death and time-out are verdicts.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/backends/tfjs/backend.hpp>

#include <string>
#include <vector>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"
#include "../unit/workers.hpp"

namespace test_tfjs_tfjs_test {

namespace {

using test::describe;

using memo::dtype;

std::string worker_script() { return MEMO_SOURCE_DIR "/tools/tfjs-worker/worker.js"; }

memo::tfjs::runtime& tfjs(const std::string& kernels) {
    static memo::tfjs::runtime cpu({.worker = worker_script()});
    static memo::tfjs::runtime wasm({.worker = worker_script(), .kernels = "wasm", .name = "tfjs-wasm"});
    return kernels == "wasm" ? wasm : cpu;
}

/// Where tfjs 4.22 differs from Keras' semantics (the reference's), each a row of docs/findings.md:
/// a random model of these classes may differ from the reference for that reason; a model of any
/// other class must agree. (What tfjs-layers lacks, such as keepdims, is declined, not listed.)
const test::findings known_findings = {
    {"ReLU", "ignores negative_slope and threshold (tfjs-relu-threshold-ignored)"},
    {"BatchNormalization", "another channel's statistics for an axis other than the last (tfjs-batchnorm-axis)"},
    {"UpSampling2D", "bilinear without half-pixel centres (tfjs-upsampling2d-bilinear)"},
    {"Conv2DTranspose", "ignores its dilation rate (tfjs-layers-dilation-ignored)"},
    {"Conv3DTranspose", "ignores its dilation rate; wasm's kernel is wrong for strides above 1 (tfjs-wasm-conv3d-transpose)"},
    {"SeparableConv2D", "channels_first adds the bias and the activation before its transpose (tfjs-layers-separableconv2d-channels-first-bias)"},
    {"Concatenate", "a negative axis other than -1 concatenates along the last (tfjs-layers-concatenate-negative-axis)"},
    {"Conv1D", "channels_first returns channels last (tfjs-layers-conv1d-channels-first)"},
    {"Conv2D", "wasm: 'same' padding where the last window stops short of the edge (tfjs-wasm-conv-same-padding-zeros)"},
    {"DepthwiseConv2D", "ignores its dilation rate (tfjs-layers-dilation-ignored); wasm's 'same' padding as Conv2D's"},
    {"Conv3D", "'same' padding with strides above the kernel (tfjs-pool3d-same-stride)"},
    {"AveragePooling3D", "'same' padding with strides above the window (tfjs-pool3d-same-stride)"},
    {"MaxPooling3D", "'same' padding with strides above the window (tfjs-pool3d-same-stride); wasm: all-negative windows (tfjs-wasm-maxpool3d-negative)"},
    {"ConvLSTM2D", "strides above 1 with 'same' padding (wasm: tfjs-wasm-conv-same-padding-zeros)"},
};

}  // namespace

TEST(TfjsBackend, Installed) { ASSERT_TRUE(memo::tfjs::installed(worker_script())) << "run scripts/setup.sh: the tfjs worker is not installed"; }

// Every layer class of the registry that tfjs runs, 4 random single-layer float32 models each, on
// both kernel sets, against the reference in float32. A model tfjs declines (a class, setting or
// dtype it lacks) is counted, not failed; a difference is a failure unless the class is one of
// tfjs' known findings.
TEST(TfjsBackend, EveryLayerClassAgreesWithTheReferenceOrIsAKnownFinding) {
    test::agree_with_reference(
        {.seed = 20261126,
         .models_per_class = 4,
         .draws_per_class = 60,
         .takes = [](const memo::model& m) { return static_cast<bool>(memo::tfjs::supports(m)); },
         .lanes = {{.name = "tfjs", .run = test::runs_on(tfjs("cpu"))}, {.name = "tfjs-wasm", .run = test::runs_on(tfjs("wasm")), .table = "tfjs"}},
         .known = known_findings,
         .min_classes = 40});
}

// MEMO's seed models that tfjs takes run like the reference; every node's output and teacher
// forcing (each layer fed the given tensors) come back one per node.
TEST(TfjsBackend, EveryNodeAndTeacherForcing) {
    test::every_node_and_teacher_forcing({{.name = "tfjs", .run = test::runs_on(tfjs("cpu"))}, {.name = "tfjs-wasm", .run = test::runs_on(tfjs("wasm"))}});
}

// What tfjs lacks is declined with the reason, at the node: a dtype, a class, a setting.
TEST(TfjsBackend, DeclinesWhatItLacks) {
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{6, 4}}, {"dtype", "float16"}});
    b.add("ReLU", {x}, {});
    b.seed(1);
    const auto half = b.finish();
    const auto got = tfjs("cpu").run(half, memo::make_inputs(half));
    EXPECT_EQ(got.status, memo::run_status::unsupported);
    EXPECT_NE(got.message.find("float32 only"), std::string::npos) << got.message;

    memo::builder c(test::reg());
    const int y = c.add("InputLayer", {}, {{"shape", memo::ints{6, 4}}, {"dtype", "float32"}});
    c.add("ELU", {y}, {{"alpha", 0.5}});
    c.seed(2);
    EXPECT_FALSE(memo::tfjs::supports(c.finish()));

    // Flatten of a (batch, n) input: tfjs asks for rank 3 and up, so the model is declined before
    // it is sent, not learnt as "Flatten in float32" (which would decline every Flatten after it).
    for (const auto& shape : {memo::ints{6}, memo::ints{6, 4}}) {
        memo::builder d(test::reg());
        const int z = d.add("InputLayer", {}, {{"shape", shape}, {"dtype", "float32"}});
        d.add("Flatten", {z}, {});
        d.seed(3);
        const auto flat = d.finish();
        const auto ok = memo::tfjs::supports(flat);
        EXPECT_EQ(bool(ok), shape.size() > 1) << describe(flat);
        if (shape.size() > 1) {
            EXPECT_EQ(tfjs("cpu").run(flat, memo::make_inputs(flat)).status, memo::run_status::ok);
        }
    }
}

// A layer tfjs shapes otherwise than Keras is an invalid run at that layer, and the oracle's shape
// verdict names it: tfjs-layers' DepthwiseConv2D takes the dilation rate it documents and ignores
// it (docs/findings.md), so its output shape is the undilated one.
TEST(TfjsBackend, ShapeDisagreementIsAShapeVerdictAtTheLayer) {
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{7, 7, 1}}, {"dtype", "float32"}});
    const int g = b.add("DepthwiseConv2D", {x}, {{"kernel_size", memo::ints{3, 3}}, {"dilation_rate", memo::ints{2, 2}}});
    b.add("Flatten", {g}, {});
    b.seed(3);
    const auto m = b.finish();
    const auto got = tfjs("cpu").run(m, memo::make_inputs(m));
    EXPECT_EQ(got.status, memo::run_status::invalid) << got.message;
    EXPECT_EQ(got.node, g) << got.message;

    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};

    memo::reference::interpreter truth(dtype::float64);
    std::vector<memo::executor*> xs{&ref, &tfjs("wasm")};
    memo::oracle::differential diff(xs, truth, test::reg());
    const auto v = diff.check(m);
    EXPECT_EQ(v.what, memo::oracle::kind::shape);
    EXPECT_EQ(v.culprits, std::vector<std::string>{"tfjs-wasm"});
    EXPECT_EQ(v.node, g);
}

// A Keras option tfjs-layers does not have, and would ignore without a word, is a decline at its
// layer, not a shape bug.
TEST(TfjsBackend, AKerasOptionTfjsLacksIsDeclined) {
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{5, 5, 3}}, {"dtype", "float32"}});
    const int g = b.add("GlobalAveragePooling2D", {x}, {{"keepdims", true}});
    b.add("Flatten", {g}, {});
    b.seed(3);
    const auto m = b.finish();
    const auto got = tfjs("cpu").run(m, memo::make_inputs(m));
    EXPECT_EQ(got.status, memo::run_status::unsupported) << got.message;
    EXPECT_EQ(got.node, g) << got.message;
    EXPECT_NE(got.message.find("no keepdims"), std::string::npos) << got.message;
}

// The worker is a worker process like any other: killed while it holds a request it is a crash
// verdict with its signal, past its time limit a timeout, and the next model starts a fresh one.
TEST(TfjsWorker, DeathAndTimeOutAreVerdictsAndTheWorkerRestarts) {
    const auto& m = test::lenet();
    const auto in = memo::make_inputs(m);
    memo::tfjs::runtime r({.worker = worker_script()});
    ASSERT_NO_FATAL_FAILURE(test::killed_worker_is_a_crash_and_restarts(r, m, in));

    memo::tfjs::runtime slow({.worker = worker_script(), .limits = {.timeout_ms = 1, .memory_mb = 4096}});
    const auto late = slow.run(m, in);
    EXPECT_EQ(late.status, memo::run_status::timeout) << late.message;
    EXPECT_EQ(slow.restarts(), 1U);
}

// tfjs' model.predict disposes a tensor too early when a layer reads it twice and another layer
// reads it after (a finding): an error of the library's running of the whole graph, while each
// layer applied alone runs. So it has no layer to blame, and one signature whatever the model.
TEST(TfjsBackend, PredictOfATensorReadTwiceIsAnError) {
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{4}}, {"dtype", "float32"}});
    const int d = b.add("Dense", {x}, {{"units", std::int64_t{4}}});
    const int a = b.add("Add", {d, d}, {});
    b.add("Add", {a, d}, {});
    b.seed(4);
    const auto m = b.finish();
    const auto in = memo::make_inputs(m);
    const auto got = tfjs("cpu").run(m, in);
    EXPECT_EQ(got.status, memo::run_status::error) << got.message;
    EXPECT_TRUE(got.whole_graph);
    const auto every = tfjs("cpu").run(m, in, {true, {}, {}});
    EXPECT_TRUE(every.ok()) << every.message;

    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};

    memo::reference::interpreter truth(dtype::float64);
    std::vector<memo::executor*> xs{&ref, &tfjs("cpu")};
    memo::oracle::differential diff(xs, truth, test::reg());
    const auto v = diff.check(m);
    EXPECT_EQ(v.what, memo::oracle::kind::crash);
    EXPECT_EQ(v.node, -1);
    EXPECT_TRUE(memo::oracle::signature(v, m).starts_with("unlocalised-")) << memo::oracle::signature(v, m);
}

// Every layer class tfjs runs gets a reproducer in tfjs' own terms that shows a fault where one is
// planted (every tfjs-layers layer's outputs off by 1 %, tests/data/planted_library/node_planted.js)
// and exits 0 on the clean library: the script is the model as tfjs builds it, whatever its class.
TEST(TfjsReproducers, EveryLayerClassShowsAPlantedFaultAndPassesOnTheCleanLibrary) {
    const auto r = test::sweep_reproducers({.fault = "tfjs-layers",
                                            .plant = {{"NODE_OPTIONS", "--require " MEMO_TEST_DATA_DIR "/planted_library/node_planted.js"}},
                                            .runner = "NODE_PATH='" MEMO_SOURCE_DIR "/tools/tfjs-worker/node_modules' node",
                                            .supports = [](const memo::model& m) { return static_cast<bool>(memo::tfjs::supports(m)); },
                                            .known = [](std::string_view c) { return known_findings.count(c) != 0; }},
                                           [] { return memo::tfjs::runtime({.worker = worker_script()}); });
    EXPECT_GE(r.classes, 40);
    EXPECT_TRUE(r.without.empty());
}

}  // namespace test_tfjs_tfjs_test
