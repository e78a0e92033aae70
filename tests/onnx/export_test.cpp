// ONNX export: every layer class exports, passes ONNX's checker and strict shape inference with
// memo's shapes, and runs on ONNX Runtime (the real worker) within tolerance of the reference
// interpreter; MEMO's ten seed models too. Export then import gives back the same structure.
#include <memo/backends/onnxruntime/backend.hpp>
#include <memo/backends/reference/interpreter.hpp>
#include <memo/onnx/import.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"
#include "../unit/workers.hpp"

namespace test_onnx_export_test {

namespace {

using test::describe;
using test::relative_error;

using memo::dtype;

std::string worker_script() { return MEMO_SOURCE_DIR "/tools/ort-worker/worker.js"; }

memo::ort::runtime& ort() {
    static memo::ort::runtime r({.worker = worker_script()});
    return r;
}

std::vector<std::filesystem::path> seed_files() {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(MEMO_TEST_DATA_DIR "/memo/synthesized_models"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST(OnnxExport, GraphIsNamedAndTyped) {
    const auto m = memo::io::load_keras(seed_files().front().string(), test::reg());
    memo::onnx::exporter ex;
    auto x = ex.to_onnx(m, {.batch = 3});
    EXPECT_EQ(x.proto.opset_import(0).version(), memo::onnx::opset);
    ASSERT_EQ(x.proto.graph().output_size(), static_cast<int>(m.outputs.size()));
    EXPECT_EQ(x.proto.graph().output(0).name(), "out0");
    EXPECT_EQ(x.proto.graph().input(0).name(), "in0");
    EXPECT_EQ(x.proto.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 3);
    EXPECT_EQ(x.values.size(), m.size());
    EXPECT_TRUE(memo::onnx::check(x, m).ok()) << memo::onnx::check(x, m).message;
}

TEST(OnnxExport, ShapeDisagreementIsReportedWithTheNode) {
    auto m = memo::io::load_keras(seed_files().front().string(), test::reg());
    memo::onnx::exporter ex;
    // A lowering that gets one dimension wrong: ONNX's inference must see it, at that node.
    ex.set("Flatten", [](memo::onnx::call& c) { return c.g.op("Reshape", {c.in[0], c.g.ints({c.out[0], c.out[1] + 1, -1})}); });
    int flatten = -1;  // the first Flatten: where ONNX's shapes and memo's part
    for (std::size_t i = 0; i < m.size() && flatten < 0; ++i)
        if (m.nodes[i].layer->name == "Flatten") flatten = static_cast<int>(i);
    ASSERT_GE(flatten, 0);
    auto x = ex.to_onnx(m);
    const auto c = memo::onnx::check(x, m);
    EXPECT_EQ(c.what, memo::onnx::check_result::kind::shape) << c.message;
    EXPECT_EQ(c.node, flatten) << c.message;
}

TEST(OnnxExport, SeedModelsRunOnOnnxRuntimeLikeTheReference) {
    ASSERT_TRUE(memo::ort::installed(worker_script())) << "run scripts/setup.sh: onnxruntime-node is not installed";
    memo::reference::interpreter ref;
    for (const auto& f : seed_files()) {
        SCOPED_TRACE(f.filename().string());
        const auto m = memo::io::load_keras(f.string(), test::reg());
        const auto in = memo::make_inputs(m);
        const auto got = ort().run(m, in);
        ASSERT_TRUE(got.ok()) << got.message;
        const auto want = ref.run(m, in, {});
        ASSERT_TRUE(want.ok()) << want.message;
        EXPECT_LE(relative_error(got.outputs.at(0), want.outputs.at(0)), 1e-4);
    }
}

TEST(OnnxExport, EveryNodeAndTeacherForcing) {
    memo::reference::interpreter ref;
    const auto m = memo::io::load_keras(seed_files()[4].string(), test::reg());  // LeNet-5
    const auto in = memo::make_inputs(m);
    const auto every = ort().run(m, in, {true, {}, {}});
    ASSERT_TRUE(every.ok()) << every.message;
    ASSERT_EQ(every.outputs.size(), m.size());
    const auto truth = ref.run(m, in, {true, {}, dtype::float64});
    ASSERT_TRUE(truth.ok());
    // Forced with the float64 truth rounded to float32: every node sees the same inputs.
    auto fed = truth.outputs;
    for (auto& t : fed)
        for (auto& v : t.data) v = memo::round_to(dtype::float32, v);
    const auto forced = ort().run(m, in, {true, fed, {}});
    ASSERT_TRUE(forced.ok()) << forced.message;
    ASSERT_EQ(forced.outputs.size(), m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(forced.outputs[i].dims, every.outputs[i].dims) << i;
        EXPECT_LE(relative_error(forced.outputs[i], truth.outputs[i]), 1e-5) << "node " << i;
    }
    // ONNX Runtime runs models in their own dtypes only.
    EXPECT_EQ(ort().run(m, in, {false, {}, dtype::float64}).status, memo::run_status::unsupported);
}

// Abs, Square, StopGradient and ScaleShift lower to Abs, Mul(x, x), Identity and Add(Mul(x, scale),
// shift), with a bfloat16 node's product rounded to bfloat16 (it computes in float32). In float32
// and float64 ONNX Runtime gives the reference's values bit for bit: signed zeros, NaN, infinities,
// and ScaleShift's product rounded before the shift. Its 16-bit values are not compared: its CPU
// kernels compute float16 in float32, and it drops a float32 -> 16-bit -> float32 pair of Casts
// (microsoft/onnxruntime#9915), so neither dtype is rounded where the model says.
TEST(OnnxExport, ElementwiseLayersLowerToTheirOpsAndMatchTheReference) {
    const double qnan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const std::vector<double> values{-0.0, 0.0, qnan, -inf, inf, -2.5, 1 + 3 * 0x1p-7, 1 + 0x1p-12, 300};
    const std::vector<std::string> scale_shift{"Mul", "Add"}, rounded{"Mul", "Cast", "Cast", "Add"};
    const std::tuple<const char*, std::vector<std::pair<std::string_view, memo::value>>, std::vector<std::string>> cases[] = {
        {"Abs", {}, {"Abs"}},
        {"Square", {}, {"Mul"}},
        {"StopGradient", {}, {"Identity"}},
        {"ScaleShift", {{"scale", 1 + 3 * 0x1p-7}, {"shift", -1.0}}, scale_shift},
        {"ScaleShift", {{"scale", 1 + 0x1p-12}, {"shift", -1.0}}, scale_shift},
        {"ScaleShift", {{"scale", -1.0}, {"shift", -0x1p-10}}, scale_shift},
        {"ScaleShift", {{"scale", 0.0}, {"shift", 0.5}}, scale_shift},
    };
    memo::reference::interpreter ref;
    memo::onnx::exporter ex;
    int compared = 0;
    for (dtype t : {dtype::float64, dtype::float32, dtype::bfloat16, dtype::float16}) {
        for (const auto& [cls, params, ops] : cases) {
            memo::builder b(test::reg());
            const int y = b.add(cls, {b.input({static_cast<std::int64_t>(values.size())}, t)});
            memo::model m = b.finish();
            for (const auto& [k, v] : params) m.nodes[static_cast<std::size_t>(y)].set(k, v);
            SCOPED_TRACE(describe(m));
            // The node's own ops, without the casts to and from its compute dtype at its edges.
            const auto onnx = ex.to_onnx(m);
            std::vector<std::string> seen;
            for (const auto& n : onnx.proto.graph().node())
                if (n.name().starts_with(memo::onnx::node_scope(1)) && n.op_type() != "Constant") seen.push_back(n.op_type());
            if (t == dtype::bfloat16) seen.pop_back();  // the cast of the output back to bfloat16
            EXPECT_EQ(seen, t == dtype::bfloat16 && ops == scale_shift ? rounded : ops);
            if (t != dtype::float32 && t != dtype::float64) continue;
            memo::tensor x(std::vector<std::int64_t>{1, static_cast<std::int64_t>(values.size())}, t);
            x.data = values;
            const std::vector<memo::tensor> in{x};
            const auto got = ort().run(m, in);
            ASSERT_TRUE(got.ok()) << got.message;
            const auto want = ref.run(m, in, {});
            ASSERT_TRUE(want.ok()) << want.message;
            const auto &g = got.outputs.at(0).data, &w = want.outputs.at(0).data;
            ASSERT_EQ(g.size(), w.size());
            for (std::size_t i = 0; i < w.size(); ++i) {
                if (std::isnan(w[i])) {
                    EXPECT_TRUE(std::isnan(g[i])) << "element " << i << " is " << g[i];
                    continue;
                }
                EXPECT_EQ(g[i], w[i]) << "element " << i << " (" << values[i] << ")";
                EXPECT_EQ(std::signbit(g[i]), std::signbit(w[i])) << "element " << i << " (" << values[i] << ")";
            }
            ++compared;
        }
    }
    EXPECT_EQ(compared, 2 * 7);
}

// Every layer class of the registry, 8 random single-layer models each, in the dtypes the models
// draw (float32, float64, float16): export, check, run on ONNX Runtime in the model's dtype and
// compare with the reference in the same dtype. A kernel ONNX Runtime lacks for a dtype is counted,
// not failed.
TEST(OnnxExport, EveryLayerClassExportsChecksAndAgreesWithTheReference) {
    memo::onnx::exporter ex;
    // The reference rounds each node's output to its dtype; ONNX Runtime accumulates in its own
    // order: a few units of the dtype's rounding, or 1e-9 in float64, plus the model's own
    // amplification, bounded as the torch tests bound it.
    const auto within = [](dtype type) {
        return test::tolerance{.floor = type == dtype::float64 ? 1e-9 : type == dtype::float32 ? 1e-4 : 2e-2, .drift_times = 100};
    };
    test::agree_with_reference({.seed = 20261122,
                                .models_per_class = 8,
                                .before =
                                    [&](const memo::model& m) {
                                        auto x = ex.to_onnx(m);
                                        const auto c = memo::onnx::check(x, m);
                                        ASSERT_TRUE(c.ok()) << c.message;
                                    },
                                .lanes = {{.name = "ort", .run = test::runs_on(ort())}},
                                .steps = {{.within = within}},
                                .runs_per_decline = 4});
}

TEST(OnnxExport, ExportThenImportGivesTheSameStructure) {
    memo::onnx::exporter ex;
    for (const auto& f : seed_files()) {
        const auto m = memo::io::load_keras(f.string(), test::reg());
        const auto back = memo::onnx::from_onnx_bytes(ex.to_onnx(m).bytes(), test::reg(), f.filename().string());
        EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m)) << f.filename();
    }
    memo::rng r(5);
    for (const auto& L : test::reg()) {
        if (L.arity.max == 0) continue;
        const auto m = test::random_layer_model(L, r);
        ASSERT_TRUE(m);
        const auto back = memo::onnx::from_onnx_bytes(ex.to_onnx(*m).bytes(), test::reg(), std::string(L.name));
        EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(*m)) << L.name;
    }
}

// The Node.js worker is a worker process like any other: killed while it holds a request it is a crash verdict with
// its signal, past its time limit a timeout, and the next model starts a fresh worker.
TEST(OnnxRuntimeWorker, DeathAndTimeOutAreVerdictsAndTheWorkerRestarts) {
    const auto m = memo::io::load_keras(seed_files()[4].string(), test::reg());  // LeNet-5
    const auto in = memo::make_inputs(m);
    memo::ort::runtime r({.worker = worker_script()});
    ASSERT_NO_FATAL_FAILURE(test::killed_worker_is_a_crash_and_restarts(r, m, in));

    memo::ort::runtime slow({.worker = worker_script(), .limits = {.timeout_ms = 1, .memory_mb = 4096}});
    for (int k = 0; k < 2; ++k) {  // each run starts a worker that cannot answer within 1 ms
        const auto late = slow.run(m, in);
        EXPECT_EQ(late.status, memo::run_status::timeout) << late.message;
    }
    EXPECT_EQ(slow.restarts(), 2U);
}

// A model the exporter cannot lower is declined (unsupported), not an error of the library.
TEST(OnnxRuntimeWorker, DeclinesWhatItCannotRun) {
    auto m = memo::io::load_keras(seed_files()[4].string(), test::reg());
    memo::ort::runtime r({.worker = worker_script()});
    r.exporter().set("Flatten", [](memo::onnx::call&) -> std::string { throw memo::error("no lowering"); });
    const auto in = memo::make_inputs(m);
    EXPECT_EQ(r.run(m, in).status, memo::run_status::unsupported);
}

// ONNX's shape inference disagreeing with memo's shapes is a run status of its own, `invalid`, and
// the oracle's verdict `shape`, localised to the node, with no peer needed to see it.
TEST(OnnxRuntimeWorker, ShapeDisagreementIsAShapeVerdictAtTheNode) {
    const auto m = memo::io::load_keras(seed_files()[4].string(), test::reg());  // LeNet-5
    int flatten = -1;                                                            // the first Flatten: where ONNX's shapes and memo's part
    for (std::size_t i = 0; i < m.size() && flatten < 0; ++i)
        if (m.nodes[i].layer->name == "Flatten") flatten = static_cast<int>(i);
    ASSERT_GE(flatten, 0);
    memo::ort::runtime r({.worker = worker_script()});
    // A lowering with a wrong shape rule: what a disagreement between ONNX and memo looks like.
    r.exporter().set("Flatten", [](memo::onnx::call& c) { return c.g.op("Reshape", {c.in[0], c.g.ints({c.out[0], c.out[1] / 2, -1})}); });
    const auto in = memo::make_inputs(m);
    const auto got = r.run(m, in);
    EXPECT_EQ(got.status, memo::run_status::invalid) << got.message;
    EXPECT_EQ(got.node, flatten) << got.message;
    EXPECT_NE(got.message.find("ONNX shape inference"), std::string::npos) << got.message;

    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};

    memo::reference::interpreter truth(dtype::float64);
    std::vector<memo::executor*> xs{&ref, &r};
    memo::oracle::differential diff(xs, truth, test::reg());
    const auto v = diff.check(m);
    EXPECT_EQ(v.what, memo::oracle::kind::shape);
    EXPECT_EQ(v.culprits, std::vector<std::string>{"ort"});
    EXPECT_EQ(v.node, flatten);
    EXPECT_EQ(v.layer, "Flatten");
}

// ONNX node names carry the model node they lower ("n12/Conv_5"), so ONNX Runtime's errors name it:
// a kernel missing for a dtype is declined at that node, and the oracle learns the decline.
TEST(OnnxRuntimeWorker, ErrorsNameTheModelNode) {
    EXPECT_EQ(memo::onnx::node_of("Could not find an implementation for Conv(11) node with name 'n12/Conv_5'"), 12);
    EXPECT_EQ(memo::onnx::node_of("Name:'n7/scan_3/MatMul_2' Status Message: x"), 7);
    EXPECT_EQ(memo::onnx::node_of("no node here, 'name'"), -1);
    // ONNX Runtime's LSTM kernel takes no float64 ("LSTM operator does not support double yet").
    memo::builder b(test::reg());
    const int x = b.add("InputLayer", {}, {{"shape", memo::ints{5, 3}}, {"dtype", "float64"}});
    const int y = b.add("LSTM", {x}, {{"units", std::int64_t{4}}, {"activation", "tanh"}, {"recurrent_activation", "sigmoid"}});
    b.seed(3);
    const auto m = b.finish();
    memo::ort::runtime r({.worker = worker_script()});
    const auto got = r.run(m, memo::make_inputs(m));
    EXPECT_EQ(got.status, memo::run_status::unsupported) << got.message;
    EXPECT_EQ(got.node, y) << got.message;
}

// Every layer class gets a reproducer in ONNX Runtime's own terms (the .onnx and a Node script)
// that shows a fault where one is planted (every output of a session off by 1 %,
// tests/data/planted_library/node_planted.js) and exits 0 on the clean library.
TEST(OnnxRuntimeReproducers, EveryLayerClassShowsAPlantedFaultAndPassesOnTheCleanLibrary) {
    const auto r = test::sweep_reproducers({.fault = "ort-outputs",
                                            .plant = {{"NODE_OPTIONS", "--require " MEMO_TEST_DATA_DIR "/planted_library/node_planted.js"}},
                                            .runner = "NODE_PATH='" MEMO_SOURCE_DIR "/tools/ort-worker/node_modules' node",
                                            .supports = [](const memo::model&) { return true; },
                                            .known = [](std::string_view) { return false; }},
                                           [] { return memo::ort::runtime({.worker = worker_script()}); });
    EXPECT_GE(r.classes, 40);
    EXPECT_TRUE(r.without.empty());
}

}  // namespace test_onnx_export_test
