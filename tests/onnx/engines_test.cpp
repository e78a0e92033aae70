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

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

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
const std::map<std::string, std::string, std::less<>> known_findings = [] {
    std::map<std::string, std::string, std::less<>> k;
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
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()}, truth{memo::reference::interpreter(dtype::float64)};
    std::vector<memo::executor*> xs{&ref};
    for (const auto& e : engines()) xs.push_back(&worker(e));
    memo::rng r(20261130);
    struct row {
        int runs = 0, declined = 0, differ = 0;
        std::string why;
    };
    std::map<std::string, std::map<std::string, row>> table;  // backend -> class -> row
    for (const auto& L : test::reg()) {
        if (L.arity.max == 0) continue;
        const auto m = test::random_layer_model(L, r);
        ASSERT_TRUE(m) << L.name;
        SCOPED_TRACE(test::describe(*m));
        const std::string cls(L.name);
        memo::oracle::differential diff(xs, truth, test::reg());  // afresh: no decline learnt from another class
        const auto v = diff.check(*m);
        for (std::size_t k = 1; k < xs.size(); ++k) {
            const auto& seen = diff.observations().at(k).result;
            row& t = table[std::string(xs[k]->name())][cls];
            if (seen.status == memo::run_status::unsupported) {
                ++t.declined;
                t.why = seen.message.substr(0, 90);
            } else ++t.runs;
        }
        if (v.what == memo::oracle::kind::none) continue;
        for (const auto& c : v.culprits) {
            if (c != "reference") ++table[c][cls].differ;
            if (!known_findings.count(c + "/" + cls)) ADD_FAILURE() << c << ": " << memo::oracle::name_of(v.what) << " " << v.message;
        }
    }
    for (const auto& e : engines()) {
        std::printf("\n%s\n%-26s %5s %5s %6s  %s\n", e.name.c_str(), "layer", "runs", "decl", "differ", "declined because / known finding");
        int runs = 0, differ = 0, declined = 0, classes = 0;
        for (const auto& [name, t] : table[e.name]) {
            const auto it = known_findings.find(e.name + "/" + name);
            if (t.declined || t.differ)
                std::printf("%-26s %5d %5d %6d  %s\n", name.c_str(), t.runs, t.declined, t.differ,
                            t.declined                               ? t.why.c_str()
                            : it != known_findings.end() && t.differ ? it->second.c_str()
                                                                     : "");
            runs += t.runs;
            differ += t.differ;
            declined += t.declined;
            classes += t.runs > 0;
        }
        std::printf("%s: %d layer classes run, %d runs judged, %d differ (each a known finding), %d declined; the others agree\n", e.name.c_str(), classes,
                    runs, differ, declined);
        EXPECT_GE(classes, 60) << e.name;
    }
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
