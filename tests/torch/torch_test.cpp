// The libtorch backend: layers checked by hand, the run contract (teacher forcing, precision,
// failures as values), and every layer class of the registry against the reference interpreter
// on random single-layer models.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/backends/torch/backend.hpp>
#include <memo/tensors/inputs.hpp>

#include <cmath>
#include <stdexcept>

#include "../unit/agreement.hpp"
#include "../unit/compare.hpp"
#include "../unit/support.hpp"

namespace {

using test::describe;

using memo::dtype;

memo::torch::backend& torch_backend() {
    static memo::torch::backend b;
    return b;
}

memo::tensor make(std::vector<std::int64_t> dims, std::vector<double> values, dtype t = dtype::float32) {
    memo::tensor x(std::move(dims), t);
    x.data = std::move(values);
    return x;
}

/// The one output of a single-input model run on `x`.
memo::tensor run_one(const memo::model& m, const memo::tensor& x, memo::run_options o = {}) {
    const memo::tensor in[1] = {x};
    auto r = torch_backend().run(m, in, o);
    EXPECT_TRUE(r.ok()) << r.message;
    return r.ok() ? r.outputs.at(0) : memo::tensor{};
}

}  // namespace

static_assert(memo::backend<memo::torch::backend>);

TEST(TorchBackend, NamesItselfAndSupportsEveryRegisteredClass) {
    EXPECT_EQ(torch_backend().name(), "torch");
    memo::rng r(7);
    for (const auto& L : test::reg()) {
        if (L.arity.max == 0) continue;
        const auto m = test::random_layer_model(L, r);
        ASSERT_TRUE(m) << L.name;
        EXPECT_TRUE(torch_backend().supports(*m)) << L.name;
    }
}

TEST(TorchBackend, SupportsNamesTheFirstClassWithoutAnOp) {
    memo::layer_def mine = test::reg().at("ReLU");
    mine.name = "MyActivation";
    memo::builder b(test::reg());
    b.add("ReLU", {b.input({4})});
    memo::model m = b.finish();
    m.nodes.back().layer = &mine;
    const auto ok = torch_backend().supports(m);
    ASSERT_FALSE(ok);
    EXPECT_NE(ok.reason().find("MyActivation"), std::string::npos) << ok.reason();
    const memo::tensor in[1] = {make({1, 4}, {1, 2, 3, 4})};
    memo::torch::backend own;
    EXPECT_EQ(own.run(m, in, {}).status, memo::run_status::unsupported);
    own.set("MyActivation", [](const memo::torch::call& c) { return c.in[0] * 2.0; });
    const auto r = own.run(m, in, {});
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.outputs[0].data, (std::vector<double>{2, 4, 6, 8}));
}

TEST(TorchBackend, DenseWithOnesWeights) {
    // Every unit: 1 * 1 + 2 * 1 + 3 * 1 + bias 1 = 7; the second sample 4 + 5 + 6 + 1 = 16.
    memo::builder b(test::reg());
    b.add("Dense", {b.input({3})}, {{"units", 2}, {"kernel_initializer", "Ones"}, {"bias_initializer", "Ones"}});
    const memo::model m = b.finish();
    const auto x = make({2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_EQ(run_one(m, x).data, (std::vector<double>{7, 7, 16, 16}));
    memo::run_options o;
    o.precision = dtype::bfloat16;  // ATen's CPU matmul exists for bfloat16, and 7 and 16 are bfloat16 values
    const auto y = run_one(m, x, o);
    EXPECT_EQ(y.type, dtype::bfloat16);
    EXPECT_EQ(y.data, (std::vector<double>{7, 7, 16, 16}));
}

TEST(TorchBackend, Conv2DSamePaddingPutsTheExtraPadAfter) {
    // 3x3 input 1..9, 2x2 ones kernel, stride 1: TF pads 0 before and 1 after on each axis, so
    // out[i][j] = x[i][j] + x[i][j+1] + x[i+1][j] + x[i+1][j+1] with zeros past the edge:
    // 1+2+4+5=12, 2+3+5+6=16, 3+6=9 / 4+5+7+8=24, 28, 6+9=15 / 7+8=15, 8+9=17, 9.
    {
        memo::builder b(test::reg());
        b.add("Conv2D", {b.input({3, 3, 1})}, {{"filters", 1}, {"kernel_size", memo::ints{2, 2}}, {"padding", "same"}, {"kernel_initializer", "Ones"}});
        const auto y = run_one(b.finish(), make({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
        EXPECT_EQ(y.dims, (std::vector<std::int64_t>{1, 3, 3, 1}));
        EXPECT_EQ(y.data, (std::vector<double>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
    }
    // 4x4 input 1..16, 3x3 ones kernel, stride 2: out 2x2, total pad (2-1)*2+3-4 = 1, all after.
    // Windows rows/cols {0,1,2} and {2,3}: (1+2+3)+(5+6+7)+(9+10+11)=54, (3+4)+(7+8)+(11+12)=45,
    // (9+10+11)+(13+14+15)=72, 11+12+15+16=54.
    {
        memo::builder b(test::reg());
        b.add("Conv2D", {b.input({4, 4, 1})},
              {{"filters", 1}, {"kernel_size", memo::ints{3, 3}}, {"strides", memo::ints{2, 2}}, {"padding", "same"}, {"kernel_initializer", "Ones"}});
        std::vector<double> x(16);
        for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = i + 1;
        EXPECT_EQ(run_one(b.finish(), make({1, 4, 4, 1}, x)).data, (std::vector<double>{54, 45, 72, 54}));
    }
}

TEST(TorchBackend, SamePoolingCountsOnlyRealElements) {
    // 3x3 input 1..9, pool 2, stride 2, "same": out 2x2, one pad row and column after.
    // Average: (1+2+4+5)/4=3, (3+6)/2=4.5, (7+8)/2=7.5, 9/1=9. Max: 5, 6, 8, 9.
    const auto x = make({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    for (const char* cls : {"AveragePooling2D", "MaxPooling2D"}) {
        memo::builder b(test::reg());
        b.add(cls, {b.input({3, 3, 1})}, {{"pool_size", memo::ints{2, 2}}, {"padding", "same"}});
        const auto y = run_one(b.finish(), x);
        EXPECT_EQ(y.data, std::string(cls) == "MaxPooling2D" ? (std::vector<double>{5, 6, 8, 9}) : (std::vector<double>{3, 4.5, 7.5, 9})) << cls;
    }
    // A window longer than the input (3 over 1 on the first axis): "same" pads one on each side
    // and each output averages its one real element. ATen's avg_pool3d rejects such an input
    // even with padding, so the backend pads it itself.
    memo::builder b(test::reg());
    b.add("AveragePooling3D", {b.input({1, 2, 2, 1})}, {{"pool_size", memo::ints{3, 1, 1}}, {"strides", memo::ints{1, 1, 1}}, {"padding", "same"}});
    EXPECT_EQ(run_one(b.finish(), make({1, 1, 2, 2, 1}, {1, 2, 3, 4})).data, (std::vector<double>{1, 2, 3, 4}));
}

TEST(TorchBackend, Conv2DTransposeMatchesTFPlacement) {
    const auto x = make({1, 2, 2, 1}, {1, 2, 3, 4});
    // Stride 2, 2x2 ones kernel, valid: each input fills its own 2x2 block of the 4x4 output.
    {
        memo::builder b(test::reg());
        b.add("Conv2DTranspose", {b.input({2, 2, 1})},
              {{"filters", 1}, {"kernel_size", memo::ints{2, 2}}, {"strides", memo::ints{2, 2}}, {"kernel_initializer", "Ones"}});
        EXPECT_EQ(run_one(b.finish(), x).data, (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    }
    // Stride 1, 2x2 ones kernel, same: output 2x2, pad_before 0, so out[i][j] sums x[i-a][j-b] for
    // a, b in {0, 1}: 1, 1+2=3 / 1+3=4, 1+2+3+4=10 (the full 3x3 transpose cropped at the end).
    {
        memo::builder b(test::reg());
        b.add("Conv2DTranspose", {b.input({2, 2, 1})},
              {{"filters", 1}, {"kernel_size", memo::ints{2, 2}}, {"padding", "same"}, {"kernel_initializer", "Ones"}});
        EXPECT_EQ(run_one(b.finish(), x).data, (std::vector<double>{1, 3, 4, 10}));
    }
}

TEST(TorchBackend, UpSamplingRepeatsExactlyForLargeFactors) {
    // ATen's legacy nearest (index floor(o * in/out) in float) picks the wrong source for some
    // factors (length 2 by 41: o = 41 maps to 0); Keras repeats each element `size` times.
    memo::builder b(test::reg());
    b.add("UpSampling1D", {b.input({2, 1})}, {{"size", 41}});
    const auto y = run_one(b.finish(), make({1, 2, 1}, {1, 2}));
    std::vector<double> want(41, 1.0);
    want.resize(82, 2.0);
    EXPECT_EQ(y.data, want);
}

TEST(TorchBackend, ThresholdedReLUIsXTimesItsMask) {
    // Keras computes x * cast(x > theta): -inf and NaN give NaN, where at::threshold gives 0 for -inf.
    memo::builder b(test::reg());
    b.add("ThresholdedReLU", {b.input({4})}, {{"theta", 1.0}});
    const auto y = run_one(b.finish(), make({1, 4}, {-std::numeric_limits<double>::infinity(), std::nan(""), 0.5, 2}));
    ASSERT_EQ(y.size(), 4);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], 0.0);
    EXPECT_EQ(y[3], 2.0);
}

TEST(TorchBackend, MissingHalfKernelIsUnsupportedNotAnError) {
    memo::builder b(test::reg());
    // libtorch 2.13's CPU has float16 convolutions (1.13's had not), but no float16 3-D average pooling.
    b.add("AveragePooling3D", {b.input({4, 4, 4, 2}, dtype::float16)}, {});
    const memo::model m = b.finish();
    const auto in = memo::make_inputs(m);
    const auto r = torch_backend().run(m, in, {});
    EXPECT_EQ(r.status, memo::run_status::unsupported) << r.message;
    EXPECT_NE(r.message.find("Half"), std::string::npos) << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
}

TEST(TorchBackend, ExceptionsBecomeErrorsWithTheirFirstLine) {
    memo::builder b(test::reg());
    b.add("ReLU", {b.input({4})});
    const memo::model m = b.finish();
    const memo::tensor in[1] = {make({1, 4}, {1, 2, 3, 4})};
    memo::torch::backend own;
    own.set("ReLU", [](const memo::torch::call&) -> at::Tensor { throw std::runtime_error("boom\nsecond line"); });
    auto r = own.run(m, in, {});
    EXPECT_EQ(r.status, memo::run_status::error);
    EXPECT_EQ(r.message, "node 1 (ReLU): boom");
    own.set("ReLU", [](const memo::torch::call& c) { return c.in[0].reshape({2, 2}); });
    r = own.run(m, in, {});
    EXPECT_EQ(r.status, memo::run_status::error);
    EXPECT_NE(r.message.find("output dims 2x2"), std::string::npos) << r.message;
    r = own.run(m, {}, {});
    EXPECT_EQ(r.status, memo::run_status::error);
}

// Abs, Square, StopGradient and ScaleShift give the reference's values bit for bit in each dtype
// torch runs them in: signed zeros, NaN, infinities, and ScaleShift's product rounded to the dtype
// before the shift (1 + 3 * 2^-7 squared is 1 + 6 * 2^-7 + 9 * 2^-14 exactly, and bfloat16 drops
// the last term; 1 + 2^-12 squared drops 2^-24 in float32). StopGradient is a copy of its own.
TEST(TorchBackend, ElementwiseLayersMatchTheReferenceBitForBit) {
    const double qnan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const std::vector<double> values{-0.0, 0.0, qnan, -inf, inf, -2.5, 1 + 3 * 0x1p-7, 1 + 0x1p-12, 300};
    const std::pair<const char*, std::vector<std::pair<std::string_view, memo::value>>> cases[] = {
        {"Abs", {}},
        {"Square", {}},
        {"StopGradient", {}},
        {"ScaleShift", {{"scale", 1 + 3 * 0x1p-7}, {"shift", -1.0}}},
        {"ScaleShift", {{"scale", 1 + 0x1p-12}, {"shift", -1.0}}},
        {"ScaleShift", {{"scale", -1.0}, {"shift", -0x1p-10}}},
        {"ScaleShift", {{"scale", 0.0}, {"shift", 0.5}}},
    };
    memo::reference::interpreter ref;
    int compared = 0;
    for (dtype t : {dtype::float64, dtype::float32, dtype::bfloat16, dtype::float16}) {
        for (const auto& [cls, params] : cases) {
            memo::builder b(test::reg());
            const int x = b.input({static_cast<std::int64_t>(values.size())}, t);
            const int y = b.add(cls, {x});
            memo::model m = b.finish();
            for (const auto& [k, v] : params) m.nodes[static_cast<std::size_t>(y)].set(k, v);
            SCOPED_TRACE(describe(m) + std::string(name_of(t)));
            const memo::tensor in[1] = {make({1, static_cast<std::int64_t>(values.size())}, values, t)};
            const auto got = torch_backend().run(m, in, {});
            if (got.status == memo::run_status::unsupported && t == dtype::float16) continue;  // a CPU kernel libtorch lacks
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
    EXPECT_GE(compared, 3 * 7);
    // StopGradient's op returns a tensor of its own, not the input's storage.
    memo::builder b(test::reg());
    b.add("StopGradient", {b.input({3})});
    const memo::model m = b.finish();
    const at::Tensor x = at::arange(3, at::kFloat).reshape({1, 3});
    const memo::torch::call c{{m.nodes.back()}, std::span<const at::Tensor>(&x, 1), {}, {1, 3}};
    const at::Tensor y = memo::torch::detail::builtin_ops().at("StopGradient")(c);
    EXPECT_TRUE(at::equal(y, x));
    EXPECT_NE(y.data_ptr(), x.data_ptr());
    EXPECT_FALSE(y.requires_grad());
}

TEST(TorchBackend, EveryNodeTeacherForcingAndPrecision) {
    // Input -> Dense(2, ones, no bias) -> ReLU. Forced, ReLU reads the given Dense output
    // (-1, 3) rather than Dense's own (3, 3).
    memo::builder b(test::reg());
    const int d = b.add("Dense", {b.input({2})}, {{"units", 2}, {"use_bias", false}, {"kernel_initializer", "Ones"}});
    b.add("ReLU", {d});
    const memo::model m = b.finish();
    const memo::tensor in[1] = {make({1, 2}, {1, 2})};
    memo::run_options every;
    every.every_node = true;
    auto r = torch_backend().run(m, in, every);
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.outputs.size(), 3u);
    EXPECT_EQ(r.outputs[1].data, (std::vector<double>{3, 3}));
    EXPECT_EQ(r.outputs[2].data, (std::vector<double>{3, 3}));

    const std::vector<memo::tensor> forced{make({1, 2}, {1, 2}), make({1, 2}, {-1, 3}), make({1, 2}, {0, 0})};
    memo::run_options o;
    o.forced = forced;
    o.precision = dtype::float64;
    r = torch_backend().run(m, in, o);
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.outputs.size(), 3u);
    EXPECT_EQ(r.outputs[2].data, (std::vector<double>{0, 3}));
    for (const auto& t : r.outputs) EXPECT_EQ(t.type, dtype::float64);

    // An input of 0.1 stays 0.1 in float64 and rounds to float32 otherwise.
    const memo::tensor tenth[1] = {make({1, 2}, {0.1, 0.1})};
    memo::run_options f64;
    f64.precision = dtype::float64;
    EXPECT_EQ(torch_backend().run(m, tenth, f64).outputs[0].data[0], 0.2);
    EXPECT_EQ(torch_backend().run(m, tenth, {}).outputs[0].data[0], static_cast<double>(0.1f + 0.1f));
}

// Every layer class: random single-layer models on torch and on the reference interpreter, in
// float64 within 1e-9 and in float32 within 1e-4 or a hundred times what float32 rounding of the
// inputs alone moves the float64 result (a float32 run of an ill-conditioned model, an exponential
// recurrence, drifts further in any implementation); then in the model's own dtypes (float16 for
// some): ok with values of the dtype, or unsupported.
TEST(TorchBackend, EveryLayerClassAgreesWithTheReference) {
    test::agree_with_reference(
        {.seed = 20240611,
         .models_per_class = 10,
         .lanes = {{.name = "torch", .run = test::runs_on(torch_backend())}},
         .steps =
             {{.label = "f64", .precision = dtype::float64, .within = test::always({.floor = 1e-9}), .decline = test::on_decline::fails},
              {.label = "f32", .precision = dtype::float32, .within = test::always({.floor = 1e-4, .drift_times = 100}), .decline = test::on_decline::fails},
              {.label = "own dtypes", .within = {}}},
         .record_classes = {"classes_compared", "classes_only_on_torch"}});
}
