// The libraries that run memo's ONNX export in the Python worker (tools/onnx-worker): ONNX Runtime's
// PyPI release, OpenVINO and Apache TVM, each at two settings. Every layer class agrees with the
// reference and the other settings by the oracle's rounding rule (with the rounding each setting
// declares), is declined with the library's reason, or differs where the library is known to
// (listed with why); the worker tells its compiling apart; a reproducer in the library's own terms
// shows a planted fault and passes on the clean library; the worker's death is a crash verdict.
#include <memo/backends/onnxruntime/backend.hpp>
#include <memo/backends/onnxruntime/python_engines.hpp>
#include <memo/backends/reference/interpreter.hpp>
#include <memo/oracle/differential.hpp>

#include <signal.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/reproducer_sweep.hpp"
#include "../unit/support.hpp"

namespace test_onnx_engines_test {

namespace {

using memo::dtype;

/// Each backend as memo-fuzz names it: its engine, setting, and the rounding it declares.
const std::vector<memo::ort::python_engine>& engines() {
    static const auto all = memo::ort::python_engines();
    return all;
}

memo::ort::options options_for(const memo::ort::python_engine& e) {
    memo::ort::options o;
    o.name = e.name;
    o.optimize = e.setting;
    o.program = {test::python(), MEMO_SOURCE_DIR "/tools/onnx-worker/worker.py", "--engine", e.engine};
    // Importing TVM takes seconds on a busy machine; compiling a model takes a second or two.
    o.limits.startup_ms = 240000;
    o.limits.timeout_ms = 120000;
    o.rounding = e.rounding;
    return o;
}

memo::ort::runtime& worker(const memo::ort::python_engine& e) {
    static std::map<std::string, std::unique_ptr<memo::ort::runtime>> all;
    auto& r = all[e.name];
    if (!r) r = std::make_unique<memo::ort::runtime>(options_for(e));
    return *r;
}

const memo::ort::python_engine& named(std::string_view name) {
    return *std::find_if(engines().begin(), engines().end(), [&](const auto& e) { return e.name == name; });
}

/// Where a library differs from the reference (Keras 2.8's semantics) as this test found it, by
/// backend and class, each with why (docs/findings.md): a model of such a class may differ; any
/// other must agree.
const test::findings known_findings = [] {
    test::findings k;
    for (const char* tvm : {"tvm", "tvm-O0"})
        for (const char* cls : {"ELU", "Dense", "ThresholdedReLU"})  // Dense: with a selu activation
            k[std::string(tvm) + "/" + cls] =
                "tvm-relax-onnx-float16-elu-selu-thresholdedrelu: Relax's ONNX frontend builds float32 constants for float16 Elu, Selu, ThresholdedRelu";
    for (const char* ov : {"openvino", "openvino-bf16"})
        for (const char* cls : {"SimpleRNN"})
            k[std::string(ov) + "/" + cls] = "openvino-scan-state-reads-scan-input: a Scan body's Add(scan input, state) reads the scan input for the state";
    k["openvino-bf16/Conv2D"] =
        "openvino-bf16-dilated-conv-segfault: the CPU plugin's bf16 convolution with dilation 4 and an even kernel over a short axis segfaults";
    return k;
}();

}  // namespace

TEST(OnnxEngines, Installed) {
    for (const auto& e : engines()) {
        SCOPED_TRACE(e.name);
        memo::ort::runtime r(options_for(e));
        const auto m = memo::io::load_keras(MEMO_TEST_DATA_DIR "/memo/synthesized_models/lenet5-mnist_orig-simplified.json", test::reg());
        const auto got = r.run(m, memo::make_inputs(m));
        ASSERT_TRUE(got.ok()) << got.message << " (run scripts/setup.sh)";
        // Compiling is told apart from running: a session, a plugin's compile, a Relax build.
        EXPECT_GT(got.compile_ms, 0.0);
        EXPECT_LT(got.compile_ms, got.ms);
    }
}

// Every layer class of the registry, one random single-layer model each (of any dtype, as a
// campaign draws them), judged by the differential oracle over the reference and all six backends
// at once (their workers compile side by side): any culprit is a failure unless the class is a known
// finding of that backend, so each backend agrees with the reference and each library's two
// settings with each other; a decline is counted with the library's reason.
TEST(OnnxEngines, EveryLayerClassAgreesWithTheReferenceOrIsAKnownFinding) {
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
    memo::reference::interpreter truth(dtype::float64);
    std::vector<memo::executor*> xs{&ref};
    std::vector<test::lane> lanes;
    for (const auto& e : engines()) {
        xs.push_back(&worker(e));
        lanes.push_back({.name = e.name});
    }
    const auto by_the_oracle = [&](const memo::model& m, test::verdicts& said) {
        memo::oracle::differential diff(xs, truth, test::reg());  // afresh: no decline learnt from another class
        const auto v = diff.check(m);
        for (std::size_t k = 1; k < xs.size(); ++k) {
            const auto& seen = diff.observations().at(k).result;
            if (seen.status == memo::run_status::unsupported) said.declined(xs[k]->name(), 0, seen.message.substr(0, 90));
            else said.ran(xs[k]->name(), 0);
        }
        if (v.what == memo::oracle::kind::none) return;
        for (const auto& c : v.culprits) said.differs(c, std::string(memo::oracle::name_of(v.what)) + " " + v.message);
    };
    test::agree_with_reference(
        {.seed = 20261130, .lanes = lanes, .judge = by_the_oracle, .known = known_findings, .min_classes = 60, .print_agreeing_rows = false});
}

// The Python worker is a worker process like any other: killed, its run is a crash verdict and the
// next starts a fresh worker.
TEST(OnnxEngines, AKilledWorkerIsACrashAndTheNextRunStartsAnother) {
    const auto m = memo::io::load_keras(MEMO_TEST_DATA_DIR "/memo/synthesized_models/lenet5-mnist_orig-simplified.json", test::reg());
    const auto in = memo::make_inputs(m);
    auto& r = worker(named("openvino"));
    ASSERT_TRUE(r.run(m, in).ok());
    const pid_t first = r.worker_pid();
    ASSERT_GT(first, 0);
    ::kill(first, SIGKILL);
    const auto dead = r.run(m, in);
    EXPECT_EQ(dead.status, memo::run_status::crash) << dead.message;
    EXPECT_EQ(dead.signal, SIGKILL);
    const auto again = r.run(m, in);
    EXPECT_TRUE(again.ok()) << again.message;
    EXPECT_NE(r.worker_pid(), first);
}

// A reproducer in each library's own terms (the .onnx, an .npz and a Python script importing only
// the library and numpy) shows a planted fault (tests/data/planted_library/sitecustomize.py: the
// library's outputs 1 % off) and exits 0 on the clean library: over every layer class for the
// backends MEMO_REPRODUCER_SWEEP names, else over the first classes of each library.
TEST(OnnxEngineReproducers, ShowAPlantedFaultAndPassOnTheCleanLibrary) {
    const std::map<std::string, std::string> faults = {{"ort", "onnxruntime-outputs"}, {"openvino", "openvino-outputs"}, {"tvm", "tvm-outputs"}};
    const auto swept = test::sweeps_asked({"ort-py", "openvino", "tvm"});
    for (const char* name : {"ort-py", "openvino", "tvm"}) {
        SCOPED_TRACE(name);
        const auto& e = named(name);
        const bool all = std::find(swept.begin(), swept.end(), name) != swept.end();
        const auto r = test::sweep_reproducers({.fault = faults.at(e.engine),
                                                .plant = {{"PYTHONPATH", MEMO_TEST_DATA_DIR "/planted_library"}},
                                                .runner = test::python(),
                                                .supports = [](const memo::model&) { return true; },
                                                .known = [&](std::string_view cls) { return known_findings.count(e.name + "/" + std::string(cls)) > 0; },
                                                .max_classes = all ? 0 : 3},
                                               [&] { return memo::ort::runtime(options_for(e)); });
        EXPECT_GE(r.classes, all ? 40 : 3);
        EXPECT_TRUE(r.without.empty()) << r.without.size() << " classes, the first " << (r.without.empty() ? "" : r.without[0]);
    }
}

}  // namespace test_onnx_engines_test
