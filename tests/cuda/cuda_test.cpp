// The CUDA backend. On every machine: its plan and its own kernels, run on the host (host.hpp),
// against the reference interpreter for every layer class it claims, and its contract (declines
// with reasons, every-node and forced runs). With a GPU: the same models on the device (cuDNN,
// cuBLAS and the kernels launched), and a worker that survives a planted illegal address.
#include <memo/backends/cuda/backend.hpp>
#include <memo/backends/isolate.hpp>
#include <memo/backends/reference/interpreter.hpp>
#include <memo/reduce/reduce.hpp>
#include <memo/tensors/inputs.hpp>
#include <memo/zoo/zoo.hpp>

#include <cmath>
#include <cstdio>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/support.hpp"

namespace {

using test::describe;
using test::relative_error;

using memo::dtype;

/// The classes of the registry the backend has a lowering for.
std::vector<const memo::layer_def*> claimed() {
    std::vector<const memo::layer_def*> r;
    for (const auto& L : test::reg())
        if (L.arity.max != 0 && memo::cuda::lowerings().contains(L.name)) r.push_back(&L);
    return r;
}

/// Keras' activations that cuDNN's recurrent cells compute (half of the recurrent models drawn
/// get them: a random draw rarely does).
void cudnn_activations(memo::model& m) {
    for (auto& n : m.nodes) {
        auto set = [&](std::string_view name, memo::value v) {
            if (const int i = n.layer->param_index(name); i >= 0) n.params[static_cast<std::size_t>(i)] = std::move(v);
        };
        if (n.layer->name != "LSTM" && n.layer->name != "GRU" && n.layer->name != "SimpleRNN") continue;
        set("activation", std::string("tanh"));
        set("recurrent_activation", std::string("sigmoid"));
        set("reset_after", true);
    }
}

/// Every claimed class on random single-layer models, in float64 and float32, against the
/// reference: float64 within 1e-9 (the host) or 1e-7 (cuDNN's and cuBLAS's other summation
/// orders), float32 within what float32 rounding of the inputs moves the result (at least 1e-4).
/// Then the 16-bit types: against the reference in the same type, within fifty times the type's
/// rounding (both accumulate in float and round each layer's output), or what rounding the inputs
/// to the type moves the float64 result; overflows are left out.
void every_class_agrees(memo::cuda::backend& b, int models_per_class, double f64_bound) {
    const auto sixteen_bits = [](dtype p) { return test::tolerance{.floor = 50 * memo::unit_roundoff(p), .drift_times = 100, .drift_seed = 11}; };
    test::agree_with_reference(
        {.seed = 20261126,
         .models_per_class = models_per_class,
         .classes = [](const memo::layer_def& L) { return memo::cuda::lowerings().contains(L.name); },
         .prepare =
             [](memo::model& m, int draw) {
                 for (auto& n : m.nodes) n.type = dtype::float32;  // the dtypes it claims: run by precision below
                 if (draw % 2 == 0) cudnn_activations(m);
             },
         .lanes = {{.name = std::string(b.name()), .run = test::runs_on(b)}},
         .steps = {{.label = "f64", .precision = dtype::float64, .within = test::always({.floor = f64_bound}), .decline = test::on_decline::ends_model},
                   {.label = "f32", .precision = dtype::float32, .within = test::always({.floor = 1e-4, .drift_times = 100})},
                   {.label = "f16", .precision = dtype::float16, .within = sixteen_bits, .skip_non_finite = true},
                   {.label = "bf16", .precision = dtype::bfloat16, .within = sixteen_bits, .skip_non_finite = true}},
         .every_class_compared = true});
}

/// One layer of class `cls` with its defaults on an input of per-sample dims `in`.
/// MEMO's ten seed models, reduced, where the backend runs them: every node's output in float64
/// and the model's outputs in float32 against the reference (many layers in a row, layouts
/// changing between them).
void zoo_agrees(memo::cuda::backend& b, double f64_bound) {
    memo::reference::interpreter ref;
    int ran = 0;
    for (auto name : memo::zoo::names()) {
        const auto m = memo::reduce(memo::zoo::build(name)).reduced;
        if (!b.supports(m)) {
            std::printf("%-30s not run: %s\n", std::string(name).c_str(), b.supports(m).reason().c_str());
            continue;
        }
        SCOPED_TRACE(std::string(name));
        const auto inputs = memo::make_inputs(m);
        memo::run_options every;
        every.every_node = true;
        every.precision = dtype::float64;
        const auto want = ref.run(m, inputs, every);
        const auto got = b.run(m, inputs, every);
        ASSERT_TRUE(want.ok()) << want.message;
        ASSERT_TRUE(got.ok()) << got.message;
        double worst = 0;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const double e = relative_error(got.outputs.at(i), want.outputs.at(i));
            worst = std::max(worst, e);
            EXPECT_LE(e, f64_bound) << "node " << i << " " << m.nodes[i].layer->name;
        }
        const auto want32 = ref.run(m, inputs, {});
        const auto got32 = b.run(m, inputs, {});
        ASSERT_TRUE(want32.ok() && got32.ok()) << got32.message;
        const double e32 = relative_error(got32.outputs.at(0), want32.outputs.at(0));
        EXPECT_LE(e32, 1e-3) << "float32";
        std::printf("%-30s %3zu nodes  max-rel-f64 %9.3g  max-rel-f32 %9.3g\n", std::string(name).c_str(), m.size(), worst, e32);
        ++ran;
    }
    EXPECT_GE(ran, 6);
}

memo::model single(std::string_view cls, std::initializer_list<std::int64_t> in) {
    memo::builder b(test::reg());
    b.add(cls, {b.input(in)});
    return b.finish();
}

/// Runs one request through an executor.
memo::run_result run(memo::executor& e, const memo::model& m, const std::vector<memo::tensor>& in) {
    e.submit(m, in, {});
    return e.collect();
}

memo::cuda::backend host_backend() {
    memo::cuda::options o;
    o.name = "cuda-host";
    o.on_host = true;
    return memo::cuda::backend(o);
}

}  // namespace

static_assert(memo::backend<memo::cuda::backend>);

// First: a worker must be forked before this process starts CUDA itself (as memo-fuzz's campaign
// process never does), and gtest runs the tests of a program in the order they are defined.
TEST(CudaWorker, SurvivesAPlantedIllegalAddress) {
    if (!memo::cuda::device_present()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
    auto make = [] {
        memo::cuda::options o;
        o.exit_on_fatal = true;
        o.plant_illegal_address = "Softmax";
        return memo::cuda::backend(o);
    };
    memo::isolated<memo::cuda::backend> w(make, test::reg());
    const auto bad = single("Softmax", {5});
    const auto good = single("ReLU", {5});
    auto r = run(w, bad, memo::make_inputs(bad));
    EXPECT_EQ(r.status, memo::run_status::crash) << r.message;
    EXPECT_NE(r.message.find("illegal memory access"), std::string::npos) << r.message;
    EXPECT_EQ(r.node, 1) << r.message;
    std::printf("planted: %s: %s\n", std::string(memo::name_of(r.status)).c_str(), r.message.c_str());
    r = run(w, good, memo::make_inputs(good));
    EXPECT_TRUE(r.ok()) << r.message;
    EXPECT_GE(w.restarts(), 1u);
}

TEST(CudaHost, EveryClaimedClassAgreesWithTheReference) {
    auto b = host_backend();
    every_class_agrees(b, 8, 1e-9);
}

TEST(CudaHost, ReducedZooModelsAgreeWithTheReference) {
    auto b = host_backend();
    zoo_agrees(b, 1e-9);
}

TEST(CudaHost, ClaimsMostOfTheRegistryAndDeclinesTheRestWithTheReason) {
    std::vector<std::string_view> lacking;
    for (const auto& L : test::reg())
        if (L.arity.max != 0 && !memo::cuda::lowerings().contains(L.name)) lacking.push_back(L.name);
    std::printf("cuda claims %zu classes; lacks: %s\n", claimed().size(), test::listed(lacking).c_str());
    EXPECT_GE(claimed().size(), 55u);
    ASSERT_FALSE(lacking.empty());
    memo::rng r(3);
    const auto m = test::random_layer_model(test::reg().at(lacking.front()), r);
    ASSERT_TRUE(m);
    auto b = host_backend();
    const auto ok = b.supports(*m);
    ASSERT_FALSE(ok);
    EXPECT_NE(ok.reason().find(std::string(lacking.front())), std::string::npos) << ok.reason();
    EXPECT_EQ(b.run(*m, memo::make_inputs(*m), {}).status, memo::run_status::unsupported);
}

TEST(CudaHost, DeclinesMixedTypesAndCellsCudnnLacksWithTheReason) {
    auto b = host_backend();
    auto m = single("ReLU", {4});
    m.nodes.back().type = dtype::float16;
    const auto ok = b.supports(m);
    ASSERT_FALSE(ok);
    EXPECT_NE(ok.reason().find("mixes"), std::string::npos) << ok.reason();
    memo::builder lb(test::reg());
    lb.add("LSTM", {lb.input({5, 3})}, {{"units", 4}, {"activation", "softsign"}});
    const auto lstm = lb.finish();
    const auto r = b.run(lstm, memo::make_inputs(lstm), {});
    // Known from the parameters before any run: supports() says so, and a run names no node (a
    // campaign would otherwise learn every LSTM as declined).
    EXPECT_FALSE(b.supports(lstm));
    EXPECT_EQ(r.status, memo::run_status::unsupported);
    EXPECT_NE(r.message.find("softsign"), std::string::npos) << r.message;
    EXPECT_EQ(r.node, -1);
}

TEST(CudaHost, EveryMergeModeLayoutAndInterpolationAgreesWithTheReference) {
    // The cases a random draw may miss: Bidirectional's every merge mode with and without
    // sequences, LocallyConnected and bilinear upsampling in both data formats, ConvLSTM's
    // layouts and directions, Dot normalized.
    std::vector<memo::model> models;
    for (const char* mode : {"concat", "sum", "mul", "ave", ""})
        for (bool seq : {false, true}) {
            memo::builder b(test::reg());
            b.add("Bidirectional", {b.input({6, 3})},
                  {{"merge_mode", *mode ? memo::value(std::string(mode)) : memo::value(memo::none_t{})}, {"units", 4}, {"return_sequences", seq}});
            models.push_back(b.finish());
        }
    for (const char* format : {"channels_last", "channels_first"}) {
        const bool first = std::string_view(format) == "channels_first";
        memo::builder l1(test::reg());
        l1.add("LocallyConnected1D", {first ? l1.input({3, 7}) : l1.input({7, 3})},
               {{"filters", 2}, {"kernel_size", memo::ints{3}}, {"strides", memo::ints{2}}, {"data_format", format}});
        models.push_back(l1.finish());
        memo::builder l2(test::reg());
        l2.add("LocallyConnected2D", {first ? l2.input({2, 5, 6}) : l2.input({5, 6, 2})},
               {{"filters", 3}, {"kernel_size", memo::ints{2, 3}}, {"strides", memo::ints{1, 2}}, {"data_format", format}, {"activation", "tanh"}});
        models.push_back(l2.finish());
        memo::builder u(test::reg());
        u.add("UpSampling2D", {first ? u.input({2, 3, 4}) : u.input({3, 4, 2})},
              {{"size", memo::ints{3, 2}}, {"interpolation", "bilinear"}, {"data_format", format}});
        models.push_back(u.finish());
    }
    // ConvLSTM step by step: channels_first, backwards, an even kernel ("same": the state padded
    // unevenly), the sequence returned; and channels_last, strided, the last state.
    memo::builder cl2(test::reg());
    cl2.add("ConvLSTM2D", {cl2.input({3, 2, 5, 4})},
            {{"filters", 3},
             {"kernel_size", memo::ints{2, 2}},
             {"padding", "same"},
             {"data_format", "channels_first"},
             {"go_backwards", true},
             {"return_sequences", true}});
    models.push_back(cl2.finish());
    memo::builder cl1(test::reg());
    cl1.add("ConvLSTM1D", {cl1.input({4, 7, 2})}, {{"filters", 2}, {"kernel_size", memo::ints{3}}, {"strides", memo::ints{2}}, {"activation", "relu"}});
    models.push_back(cl1.finish());
    for (bool sequence : {false, true}) {
        memo::builder d(test::reg());
        const int x = sequence ? d.input({3, 5}) : d.input({5}), y = sequence ? d.input({4, 5}) : d.input({5});
        d.add("Dot", {x, y}, {{"normalize", true}});
        models.push_back(d.finish());
    }
    memo::reference::interpreter ref;
    auto b = host_backend();
    for (const auto& m : models) {
        SCOPED_TRACE(describe(m));
        ASSERT_TRUE(b.supports(m)) << b.supports(m).reason();
        const auto inputs = memo::make_inputs(m);
        memo::run_options o;
        o.precision = dtype::float64;
        const auto want = ref.run(m, inputs, o);
        const auto got = b.run(m, inputs, o);
        ASSERT_TRUE(want.ok() && got.ok()) << want.message << got.message;
        EXPECT_LE(relative_error(got.outputs.at(0), want.outputs.at(0)), 1e-12);
    }
}

TEST(CudaHost, LongRowsAreSummedAsAccuratelyAsTheReference) {
    // A float32 LayerNormalization over 22,230 values near 3 (a Flatten of a Conv2D, as a GPU
    // campaign met it): summed one value after another in float, the row's mean was off by enough
    // to move the normalised output by 1 %. The kernels' long sums run in double (kernels::sum_t).
    const std::int64_t n = 22230;
    memo::tensor x({2, n});
    for (std::int64_t i = 0; i < x.size(); ++i) x[i] = 3.0 + 0.01 * std::sin(0.37 * static_cast<double>(i));
    memo::builder lb(test::reg());
    lb.add("LayerNormalization", {lb.input({n})}, {{"epsilon", 1e-3}});
    memo::builder gb(test::reg());
    gb.add("GlobalAveragePooling1D", {gb.input({n, 1})});
    memo::reference::interpreter ref;
    auto b = host_backend();
    for (auto m : {lb.finish(), gb.finish()}) {
        SCOPED_TRACE(describe(m));
        memo::tensor in = x;
        in.dims = memo::concrete(m.nodes[0].out, 2);
        const memo::tensor inputs[1] = {in};
        const auto want = ref.run(m, inputs, {});
        const auto got = b.run(m, inputs, {});
        ASSERT_TRUE(want.ok() && got.ok()) << got.message;
        EXPECT_LE(relative_error(got.outputs.at(0), want.outputs.at(0)), 1e-5);
    }
}

TEST(CudaHost, SamePaddingPutsTheExtraPadAfter) {
    // A 2x2 kernel of ones, stride 1, "same" on 3x3: TF pads 0 before and 1 after on each axis, so
    // the bottom-right output sees only the bottom-right input.
    memo::builder cb(test::reg());
    cb.add("Conv2D", {cb.input({3, 3, 1})},
           {{"filters", 1},
            {"kernel_size", memo::ints{2, 2}},
            {"padding", "same"},
            {"kernel_initializer", "Ones"},
            {"use_bias", false},
            {"activation", "linear"}});
    const auto m = cb.finish();
    memo::tensor x({1, 3, 3, 1});
    for (int i = 0; i < 9; ++i) x[i] = i + 1;
    auto b = host_backend();
    const memo::tensor in[1] = {x};
    const auto r = b.run(m, in, {});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.outputs.at(0).data, (std::vector<double>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
}

TEST(CudaHost, EveryNodeAndForcedRunsMatchTheReference) {
    memo::builder bb(test::reg());
    const int x = bb.input({6, 6, 3});
    const int c = bb.add("Conv2D", {x}, {{"filters", 4}, {"kernel_size", memo::ints{3, 3}}, {"padding", "same"}});
    const int p = bb.add("MaxPooling2D", {c});
    const int f = bb.add("Flatten", {p});
    bb.add("Dense", {f}, {{"units", 5}, {"activation", "softmax"}});
    const memo::model m = bb.finish();
    const auto inputs = memo::make_inputs(m);
    memo::reference::interpreter ref;
    auto b = host_backend();
    memo::run_options every;
    every.every_node = true;
    const auto want = ref.run(m, inputs, every);
    const auto got = b.run(m, inputs, every);
    ASSERT_TRUE(want.ok() && got.ok()) << got.message;
    ASSERT_EQ(got.outputs.size(), m.size());
    for (std::size_t i = 0; i < m.size(); ++i) EXPECT_LE(relative_error(got.outputs[i], want.outputs[i]), 1e-5) << "node " << i;
    memo::run_options forced;
    forced.forced = want.outputs;
    const auto fwant = ref.run(m, inputs, forced);
    const auto fgot = b.run(m, inputs, forced);
    ASSERT_TRUE(fwant.ok() && fgot.ok()) << fgot.message;
    for (std::size_t i = 0; i < m.size(); ++i) EXPECT_LE(relative_error(fgot.outputs[i], fwant.outputs[i]), 1e-5) << "node " << i;
}

TEST(CudaHost, WithoutAGpuARunIsAnErrorWithCudasText) {
    if (memo::cuda::device_present()) GTEST_SKIP() << "this machine has a GPU";
    const auto m = single("ReLU", {4});
    memo::cuda::backend b;
    const auto r = b.run(m, memo::make_inputs(m), {});
    // Without a GPU the device code fails to start CUDA: an error with CUDA's text, not a crash.
    EXPECT_EQ(r.status, memo::run_status::error);
    EXPECT_FALSE(r.message.empty());
    std::printf("without a GPU: %s\n", r.message.c_str());
}

TEST(CudaDevice, EveryClaimedClassAgreesWithTheReference) {
    if (!memo::cuda::device_present()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
    memo::cuda::backend b;
    every_class_agrees(b, 20, 1e-7);
}

TEST(CudaDevice, ReducedZooModelsAgreeWithTheReference) {
    if (!memo::cuda::device_present()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
    memo::cuda::backend b;
    zoo_agrees(b, 1e-7);
}

TEST(CudaDevice, OutOfMemoryIsAVerdictAndTheNextRunWorks) {
    if (!memo::cuda::device_present()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
    // One input value padded to 8193^3 float32 values (2.2 TB): more than any GPU holds, while the
    // host holds only the input.
    memo::builder pb(test::reg());
    pb.add("ZeroPadding3D", {pb.input({1, 1, 1, 1})}, {{"padding", memo::ints{4096, 4096, 4096, 4096, 4096, 4096}}});
    const auto huge = pb.finish();
    memo::cuda::backend b;
    const auto r = b.run(huge, memo::make_inputs(huge), {});
    EXPECT_EQ(r.status, memo::run_status::memory) << r.message;
    EXPECT_NE(r.message.find("cudaMalloc"), std::string::npos) << r.message;
    std::printf("out of device memory: %s: %s\n", std::string(memo::name_of(r.status)).c_str(), r.message.c_str());
    const auto good = single("ReLU", {5});
    const auto next = b.run(good, memo::make_inputs(good), {});
    EXPECT_TRUE(next.ok()) << next.message;
}

TEST(CudaDevice, Tf32KeepsFloat32sRange) {
    if (!memo::cuda::device_present()) GTEST_SKIP() << "no NVIDIA GPU on this machine";
    // TF32 rounds float32's operands to float16's mantissa but keeps float32's exponent: inputs of
    // 1e5, past float16's largest value, stay finite, within what float16's rounding allows.
    memo::cuda::options o;
    o.name = "cuda-tf32";
    o.tf32 = true;
    memo::cuda::backend b(o);
    memo::reference::interpreter ref;
    std::vector<memo::model> models;
    models.push_back(single("LSTM", {4, 3}));
    models.push_back(single("Dense", {6}));
    models.push_back(single("Conv2D", {5, 5, 2}));
    for (const auto& m : models) {
        SCOPED_TRACE(describe(m));
        auto inputs = memo::make_inputs(m);
        for (auto& t : inputs)
            for (auto& v : t.data) v *= 1e5;
        const auto want = ref.run(m, inputs, {});
        const auto got = b.run(m, inputs, {});
        ASSERT_TRUE(want.ok() && got.ok()) << got.message;
        EXPECT_FALSE(got.outputs.at(0).has_non_finite());
        const double e = relative_error(got.outputs.at(0), want.outputs.at(0));
        std::printf("tf32 on inputs of 1e5: %-8s max-rel %.3g\n", std::string(m.nodes.back().layer->name).c_str(), e);
        EXPECT_LE(e, 2e-2);
    }
}
