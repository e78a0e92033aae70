// Reference kernels of the recurrent family against values worked out by hand, in closed form
// with std::tanh / sigmoid of literal numbers.
#include <cmath>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/tensors/inputs.hpp>

#include "../support.hpp"

namespace test_reference_rnn_test {

namespace {

using memo::tensor;
using param_list = std::initializer_list<std::pair<std::string_view, memo::value>>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double hard_sigmoid(double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }

struct one_layer {
    memo::model m;
    tensor out;
};

/// One layer of class `cls` over an input of per-sample shape `sample`, run on one sample `x`.
one_layer run_layer(std::string_view cls, std::initializer_list<std::int64_t> sample, std::vector<double> x, param_list ps,
                    memo::dtype model_type = memo::dtype::float64, std::optional<memo::dtype> precision = std::nullopt) {
    memo::builder b(test::reg());
    const int in = b.input(sample, model_type);
    b.add(cls, {in}, ps);
    one_layer r{b.finish(), {}};
    tensor input(memo::concrete(r.m[in].out, 1), model_type);
    EXPECT_EQ(static_cast<std::size_t>(input.size()), x.size());
    input.data = std::move(x);
    memo::reference::interpreter interp(precision);
    auto res = interp.run(r.m, std::span<const tensor>(&input, 1));
    EXPECT_TRUE(res.ok()) << res.message;
    if (res.ok()) r.out = res.outputs.at(0);
    return r;
}

void expect_values(const tensor& t, std::vector<std::int64_t> dims, std::vector<double> want, double tol = 1e-12) {
    ASSERT_EQ(t.dims, dims);
    ASSERT_EQ(t.data.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data[i], want[i], tol) << "element " << i;
}

/// A scalar LSTM cell (units 1, one feature): gates i, f, c, o with kernel k, recurrent u, bias b.
/// Returns h after each step of `xs`.
std::vector<double> scalar_lstm(const double* k, const double* u, const double* b, std::vector<double> xs) {
    double h = 0, c = 0;
    std::vector<double> hs;
    for (double x : xs) {
        auto z = [&](int g) { return k[g] * x + u[g] * h + b[g]; };
        const double i = sigmoid(z(0)), f = sigmoid(z(1)), g = std::tanh(z(2)), o = sigmoid(z(3));
        c = f * c + i * g;
        h = o * std::tanh(c);
        hs.push_back(h);
    }
    return hs;
}

// --- SimpleRNN ---

TEST(ReferenceRnn, SimpleRnnOnesTwoSteps) {
    // h1 = tanh(0.5), h2 = tanh(0.25 + h1): kernel and recurrent kernel are 1, bias 0.
    const double h1 = std::tanh(0.5), h2 = std::tanh(0.25 + h1);
    param_list ones = {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"return_sequences", true}};
    expect_values(run_layer("SimpleRNN", {2, 1}, {0.5, 0.25}, ones).out, {1, 2, 1}, {h1, h2});
    expect_values(run_layer("SimpleRNN", {2, 1}, {0.5, 0.25}, {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}}).out, {1, 1},
                  {h2});
}

TEST(ReferenceRnn, SimpleRnnGoBackwardsKeepsProcessingOrder) {
    // Reads 0.25 then 0.5: h1 = tanh(0.25), h2 = tanh(0.5 + h1); the sequence stays in that order.
    const double h1 = std::tanh(0.25), h2 = std::tanh(0.5 + h1);
    expect_values(
        run_layer("SimpleRNN", {2, 1}, {0.5, 0.25},
                  {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"go_backwards", true}, {"return_sequences", true}})
            .out,
        {1, 2, 1}, {h1, h2});
    expect_values(run_layer("SimpleRNN", {2, 1}, {0.5, 0.25},
                            {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"go_backwards", true}, {"return_state", true}})
                      .out,
                  {1, 1}, {h2});
}

TEST(ReferenceRnn, SimpleRnnBiasReluAndSoftmaxOverUnits) {
    // relu, all weights 1: step 1 relu(1 - 3 + 1) = 0, step 2 relu(0.5 + 0.25 + 1 + 0) = 1.75; without bias 0 and 0.75.
    param_list with_bias = {{"units", 1},
                            {"activation", "relu"},
                            {"kernel_initializer", "Ones"},
                            {"recurrent_initializer", "Ones"},
                            {"bias_initializer", "Ones"},
                            {"return_sequences", true}};
    expect_values(run_layer("SimpleRNN", {2, 2}, {1, -3, 0.5, 0.25}, with_bias).out, {1, 2, 1}, {0.0, 1.75});
    expect_values(run_layer("SimpleRNN", {2, 2}, {1, -3, 0.5, 0.25},
                            {{"units", 1},
                             {"activation", "relu"},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"use_bias", false},
                             {"return_sequences", true}})
                      .out,
                  {1, 2, 1}, {0.0, 0.75});
    // softmax over the 2 units of x W with W = I and no recurrence: softmax(1, 2) = (1, e) / (1 + e).
    const double e = std::exp(1.0);
    expect_values(run_layer("SimpleRNN", {1, 2}, {1, 2},
                            {{"units", 2}, {"activation", "softmax"}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Zeros"}})
                      .out,
                  {1, 2}, {1 / (1 + e), e / (1 + e)});
}

// --- LSTM ---

TEST(ReferenceRnn, LstmGateOrderIfco) {
    // kernel = I (4x4) routes feature g to gate g; recurrent kernel and bias 0.
    // c1 = sigmoid(.1) tanh(.3), h1 = sigmoid(.4) tanh(c1); c2 = sigmoid(-.6) c1 + sigmoid(.5) tanh(.7), h2 = sigmoid(-.8) tanh(c2).
    const std::vector<double> x{0.1, 0.2, 0.3, 0.4, 0.5, -0.6, 0.7, -0.8};
    const double c1 = sigmoid(0.1) * std::tanh(0.3), h1 = sigmoid(0.4) * std::tanh(c1);
    const double c2 = sigmoid(-0.6) * c1 + sigmoid(0.5) * std::tanh(0.7), h2 = sigmoid(-0.8) * std::tanh(c2);
    expect_values(
        run_layer(
            "LSTM", {2, 4}, x,
            {{"units", 1}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Zeros"}, {"unit_forget_bias", false}, {"return_sequences", true}})
            .out,
        {1, 2, 1}, {h1, h2});
    // unit_forget_bias: the forget gate's bias is 1, so f2 = sigmoid(-.6 + 1).
    const double c2f = sigmoid(0.4) * c1 + sigmoid(0.5) * std::tanh(0.7);
    expect_values(run_layer("LSTM", {2, 4}, x, {{"units", 1}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Zeros"}}).out, {1, 1},
                  {sigmoid(-0.8) * std::tanh(c2f)});
}

TEST(ReferenceRnn, LstmRecurrentPath) {
    // All weights 1, bias 0: z1 = .5; c1 = s(z1) tanh(z1), h1 = s(z1) tanh(c1); z2 = -.25 + h1; c2 = s(z2) c1 + s(z2) tanh(z2), h2 = s(z2) tanh(c2).
    const double z1 = 0.5, c1 = sigmoid(z1) * std::tanh(z1), h1 = sigmoid(z1) * std::tanh(c1);
    const double z2 = -0.25 + h1, c2 = sigmoid(z2) * c1 + sigmoid(z2) * std::tanh(z2), h2 = sigmoid(z2) * std::tanh(c2);
    expect_values(
        run_layer("LSTM", {2, 1}, {0.5, -0.25}, {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"unit_forget_bias", false}})
            .out,
        {1, 1}, {h2});
    // activation None is linear, recurrent_activation hard_sigmoid: c1 = hs(z1) z1, h1 = hs(z1) c1, c2 = hs(z2)(c1 + z2), h2 = hs(z2) c2.
    const double lc1 = hard_sigmoid(z1) * z1, lh1 = hard_sigmoid(z1) * lc1, lz2 = -0.25 + lh1;
    const double lc2 = hard_sigmoid(lz2) * (lc1 + lz2), lh2 = hard_sigmoid(lz2) * lc2;
    expect_values(run_layer("LSTM", {2, 1}, {0.5, -0.25},
                            {{"units", 1},
                             {"activation", memo::none},
                             {"recurrent_activation", "hard_sigmoid"},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false},
                             {"return_sequences", true}})
                      .out,
                  {1, 2, 1}, {lh1, lh2});
}

TEST(ReferenceRnn, LstmGoBackwards) {
    // Reads -.25 then .5 (all weights 1, no bias): z1 = -.25, z2 = .5 + h1.
    const double z1 = -0.25, c1 = sigmoid(z1) * std::tanh(z1), h1 = sigmoid(z1) * std::tanh(c1);
    const double z2 = 0.5 + h1, c2 = sigmoid(z2) * c1 + sigmoid(z2) * std::tanh(z2), h2 = sigmoid(z2) * std::tanh(c2);
    expect_values(run_layer("LSTM", {2, 1}, {0.5, -0.25},
                            {{"units", 1},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"use_bias", false},
                             {"go_backwards", true},
                             {"return_sequences", true}})
                      .out,
                  {1, 2, 1}, {h1, h2});
}

// --- GRU ---

const std::vector<double> gru_x{0.1, 0.2, 0.3, 0.4, -0.5, 0.6};

TEST(ReferenceRnn, GruResetAfter) {
    // kernel = I routes feature g to gate z, r, h; recurrent kernel 1; both bias rows 1.
    // z = s(x_z + 1 + h + 1), r = s(x_r + 1 + h + 1), h~ = tanh(x_h + 1 + r (h + 1)), h' = z h + (1 - z) h~.
    auto step = [](double h, double xz, double xr, double xh) {
        const double z = sigmoid(xz + 1 + h + 1), r = sigmoid(xr + 1 + h + 1), hh = std::tanh(xh + 1 + r * (h + 1));
        return z * h + (1 - z) * hh;
    };
    const double h1 = step(0, 0.1, 0.2, 0.3), h2 = step(h1, 0.4, -0.5, 0.6);
    expect_values(
        run_layer(
            "GRU", {2, 3}, gru_x,
            {{"units", 1}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Ones"}, {"bias_initializer", "Ones"}, {"return_sequences", true}})
            .out,
        {1, 2, 1}, {h1, h2});
    // Without bias: z = s(x_z + h), r = s(x_r + h), h~ = tanh(x_h + r h).
    auto plain = [](double h, double xz, double xr, double xh) {
        const double z = sigmoid(xz + h), r = sigmoid(xr + h), hh = std::tanh(xh + r * h);
        return z * h + (1 - z) * hh;
    };
    const double p1 = plain(0, 0.1, 0.2, 0.3), p2 = plain(p1, 0.4, -0.5, 0.6);
    expect_values(
        run_layer("GRU", {2, 3}, gru_x, {{"units", 1}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Ones"}, {"use_bias", false}}).out, {1, 1},
        {p2});
}

TEST(ReferenceRnn, GruResetBefore) {
    // One bias row: z = s(x_z + h + 1), r = s(x_r + h + 1), h~ = tanh(x_h + (r h) 1 + 1).
    auto step = [](double h, double xz, double xr, double xh) {
        const double z = sigmoid(xz + h + 1), r = sigmoid(xr + h + 1), hh = std::tanh(xh + r * h + 1);
        return z * h + (1 - z) * hh;
    };
    const double h1 = step(0, 0.1, 0.2, 0.3), h2 = step(h1, 0.4, -0.5, 0.6);
    expect_values(run_layer("GRU", {2, 3}, gru_x,
                            {{"units", 1},
                             {"kernel_initializer", "Identity"},
                             {"recurrent_initializer", "Ones"},
                             {"bias_initializer", "Ones"},
                             {"reset_after", false},
                             {"return_sequences", true}})
                      .out,
                  {1, 2, 1}, {h1, h2});
}

TEST(ReferenceRnn, GruDrawnWeightsKeepBiasRowsApart) {
    // units 1, one feature, every weight drawn (he_uniform) so the two bias rows differ; with kernel k,
    // recurrent u, input bias b and recurrent bias rb (reset_after):
    // z = s(k0 x + b0 + u0 h + rb0), r = s(k1 x + b1 + u1 h + rb1), h~ = tanh(k2 x + b2 + r (u2 h + rb2)).
    const std::vector<double> x{0.7, -0.3, 0.4};
    for (bool after : {true, false}) {
        auto r = run_layer("GRU", {3, 1}, x,
                           {{"units", 1},
                            {"kernel_initializer", "he_uniform"},
                            {"recurrent_initializer", "he_uniform"},
                            {"bias_initializer", "he_uniform"},
                            {"reset_after", after},
                            {"return_sequences", true}});
        const auto w = memo::weights_of(r.m, r.m.outputs[0]);
        ASSERT_EQ(w[2].value.size(), after ? 6 : 3);
        const double* k = w[0].value.data.data();
        const double* u = w[1].value.data.data();
        const double* b = w[2].value.data.data();
        const double rb[3] = {after ? b[3] : 0, after ? b[4] : 0, after ? b[5] : 0};
        ASSERT_NE(b[0], 0.0);
        std::vector<double> want;
        double h = 0;
        for (double xt : x) {
            const double z = sigmoid(k[0] * xt + b[0] + u[0] * h + rb[0]), rr = sigmoid(k[1] * xt + b[1] + u[1] * h + rb[1]);
            // reset_after=false: h~ = tanh(k2 x + b2 + (r h) u2)
            const double hh = after ? std::tanh(k[2] * xt + b[2] + rr * (u[2] * h + rb[2])) : std::tanh(k[2] * xt + b[2] + rr * h * u[2]);
            h = z * h + (1 - z) * hh;
            want.push_back(h);
        }
        expect_values(r.out, {1, 3, 1}, want);
    }
}

TEST(ReferenceRnn, GruUnitsMixThroughRecurrentKernel) {
    // units 2, reset_after=false, kernel 0, recurrent kernel 1 (2x6), bias 1: both units equal, each sums both.
    // Step 1: h1 = (1 - s(1)) tanh(1). Step 2: z = r = s(2 h1 + 1), h~ = tanh(2 r h1 + 1), h2 = z h1 + (1 - z) h~.
    const double g1 = (1 - sigmoid(1.0)) * std::tanh(1.0), z2 = sigmoid(2 * g1 + 1), g2 = z2 * g1 + (1 - z2) * std::tanh(2 * z2 * g1 + 1);
    expect_values(
        run_layer("GRU", {2, 1}, {3.0, -2.0},
                  {{"units", 2}, {"kernel_initializer", "Zeros"}, {"recurrent_initializer", "Ones"}, {"bias_initializer", "Ones"}, {"reset_after", false}})
            .out,
        {1, 2}, {g2, g2});
    // go_backwards with kernel 1 (1x6), recurrent 0, no bias: the last step read is x = 3 (time 0):
    // z = s(3), h~ = tanh(3), h = z h_prev + (1 - z) h~ where h_prev = (1 - s(-2)) tanh(-2) after reading -2.
    const double hp = (1 - sigmoid(-2.0)) * std::tanh(-2.0), h = sigmoid(3.0) * hp + (1 - sigmoid(3.0)) * std::tanh(3.0);
    expect_values(run_layer("GRU", {2, 1}, {3.0, -2.0},
                            {{"units", 2}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Zeros"}, {"use_bias", false}, {"go_backwards", true}})
                      .out,
                  {1, 2}, {h, h});
}

// --- TimeDistributed(ReLU) ---

TEST(ReferenceRnn, TimeDistributedRelu) {
    expect_values(run_layer("TimeDistributed", {2, 2}, {-1, 2, 0.5, -0.25}, {}).out, {1, 2, 2}, {0, 2, 0.5, 0});
    expect_values(run_layer("TimeDistributed", {1, 2, 2}, {-3, 0, 4, -0.5}, {}).out, {1, 1, 2, 2}, {0, 0, 4, 0});
}

// --- Bidirectional(LSTM) ---

TEST(ReferenceRnn, BidirectionalMergeModes) {
    // Keras' default weights (glorot, orthogonal, forget bias 1): the expected values use the drawn
    // scalars in the closed-form scalar LSTM; the backward LSTM reads the reversed sequence.
    const std::vector<double> x{0.2, -0.4, 0.6};
    auto run = [&](memo::value mode, bool sequences) {
        return run_layer("Bidirectional", {3, 1}, x, {{"units", 1}, {"merge_mode", mode}, {"return_sequences", sequences}});
    };
    auto directions = [&](const memo::model& m) {
        const auto w = memo::weights_of(m, m.outputs[0]);
        EXPECT_EQ(w.size(), 6u);
        EXPECT_EQ(w[3].name, "backward_kernel");
        EXPECT_EQ(w[2].value.data, (std::vector<double>{0, 1, 0, 0}));
        auto fwd = scalar_lstm(w[0].value.data.data(), w[1].value.data.data(), w[2].value.data.data(), x);
        auto bwd = scalar_lstm(w[3].value.data.data(), w[4].value.data.data(), w[5].value.data.data(), {x[2], x[1], x[0]});
        return std::pair{fwd, bwd};
    };
    {
        auto r = run("concat", false);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 2}, {f[2], b[2]});
    }
    {
        auto r = run("sum", false);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 1}, {f[2] + b[2]});
    }
    {
        auto r = run(memo::none, false);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 1}, {f[2]});
    }
    {
        // Time t pairs the forward state after x[0..t] with the backward state after x[t..2], i.e. b[2 - t].
        auto r = run("concat", true);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 3, 2}, {f[0], b[2], f[1], b[1], f[2], b[0]});
    }
    {
        auto r = run("mul", true);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 3, 1}, {f[0] * b[2], f[1] * b[1], f[2] * b[0]});
    }
    {
        auto r = run("ave", true);
        auto [f, b] = directions(r.m);
        expect_values(r.out, {1, 3, 1}, {(f[0] + b[2]) / 2, (f[1] + b[1]) / 2, (f[2] + b[0]) / 2});
    }
}

// --- ConvLSTM ---

/// The ConvLSTM update of one position from pre-activation z (every gate the same), hard_sigmoid and tanh.
std::pair<double, double> hs_cell(double z, double c) {
    const double g = hard_sigmoid(z), c2 = g * c + g * std::tanh(z);
    return {g * std::tanh(c2), c2};
}

TEST(ReferenceRnn, ConvLstm1DOneWideKernel) {
    // kernel 1, filters 1, all weights 1, no forget bias: each position is its own scalar cell with z = x + h.
    const std::vector<double> x{0.5, -1, 2, 0.25, 0.75, -0.5};  // (time 2, length 3, channels 1)
    std::vector<double> want(6), last(3), back(6);
    for (int p = 0; p < 3; ++p) {
        auto [h1, c1] = hs_cell(x[p], 0);
        auto [h2, c2] = hs_cell(x[3 + p] + h1, c1);
        want[p] = h1, want[3 + p] = h2, last[p] = h2;
        auto [b1, d1] = hs_cell(x[3 + p], 0);  // go_backwards reads time 1 first
        back[p] = b1, back[3 + p] = hs_cell(x[p] + b1, d1).first;
    }
    param_list seq = {{"filters", 1},
                      {"kernel_size", memo::ints{1}},
                      {"kernel_initializer", "Ones"},
                      {"recurrent_initializer", "Ones"},
                      {"unit_forget_bias", false},
                      {"return_sequences", true}};
    expect_values(run_layer("ConvLSTM1D", {2, 3, 1}, x, seq).out, {1, 2, 3, 1}, want);
    expect_values(
        run_layer(
            "ConvLSTM1D", {2, 3, 1}, x,
            {{"filters", 1}, {"kernel_size", memo::ints{1}}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"unit_forget_bias", false}})
            .out,
        {1, 3, 1}, last);
    expect_values(run_layer("ConvLSTM1D", {2, 3, 1}, x,
                            {{"filters", 1},
                             {"kernel_size", memo::ints{1}},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false},
                             {"return_sequences", true},
                             {"go_backwards", true}})
                      .out,
                  {1, 2, 3, 1}, back);
}

TEST(ReferenceRnn, ConvLstm1DStridesAndEvenRecurrentKernel) {
    // kernel 2, strides 2, valid, over length 5: z_0 = x0 + x1, z_1 = x2 + x3 (x4 unread). The recurrent
    // conv (kernel 2, stride 1, same) pads its one extra zero after: it adds h_p + h_{p+1}.
    const std::vector<double> x{0.1, 0.2, -0.3, 0.4, 9, 0.5, -0.6, 0.7, 0.8, 9};  // (time 2, length 5, channels 1)
    auto [a1, ac] = hs_cell(0.1 + 0.2, 0);
    auto [b1, bc] = hs_cell(-0.3 + 0.4, 0);
    const double a2 = hs_cell(0.5 - 0.6 + a1 + b1, ac).first, b2 = hs_cell(0.7 + 0.8 + b1, bc).first;
    expect_values(run_layer("ConvLSTM1D", {2, 5, 1}, x,
                            {{"filters", 1},
                             {"kernel_size", memo::ints{2}},
                             {"strides", memo::ints{2}},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false},
                             {"return_sequences", true}})
                      .out,
                  {1, 2, 2, 1}, {a1, b1, a2, b2});
}

TEST(ReferenceRnn, ConvLstm1DSamePaddingAndDilation) {
    // kernel 3, same, one step: z_p = x_{p-1} + x_p + x_{p+1} with zeros outside.
    const double s0 = 0.5 - 1, s1 = 0.5 - 1 + 2, s2 = -1 + 2;
    expect_values(run_layer("ConvLSTM1D", {1, 3, 1}, {0.5, -1, 2},
                            {{"filters", 1},
                             {"kernel_size", memo::ints{3}},
                             {"padding", "same"},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false}})
                      .out,
                  {1, 3, 1}, {hs_cell(s0, 0).first, hs_cell(s1, 0).first, hs_cell(s2, 0).first});
    // kernel 2, dilation 2, valid, length 4: z_0 = x0 + x2, z_1 = x1 + x3.
    expect_values(run_layer("ConvLSTM1D", {1, 4, 1}, {0.5, -1, 2, 0.25},
                            {{"filters", 1},
                             {"kernel_size", memo::ints{2}},
                             {"dilation_rate", memo::ints{2}},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false}})
                      .out,
                  {1, 2, 1}, {hs_cell(2.5, 0).first, hs_cell(-0.75, 0).first});
}

TEST(ReferenceRnn, ConvLstm2DChannelsFirstLayout) {
    // (time 1, channels 2, 1, 2), 1x1 kernel of ones, 2 filters: z = x_c0 + x_c1 at each position,
    // both filters equal; output (filters, 1, 2) is filter-major.
    const double h0 = hs_cell(0.5 + 0.25, 0).first, h1 = hs_cell(-1.0 + 3.0, 0).first;
    expect_values(run_layer("ConvLSTM2D", {1, 2, 1, 2}, {0.5, -1, 0.25, 3},
                            {{"filters", 2},
                             {"kernel_size", memo::ints{1, 1}},
                             {"data_format", "channels_first"},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"},
                             {"unit_forget_bias", false}})
                      .out,
                  {1, 2, 1, 2}, {h0, h1, h0, h1});
    // The same in channels_last: (time 1, 1, 2, channels 2) gives (1, 2, filters).
    expect_values(
        run_layer(
            "ConvLSTM2D", {1, 1, 2, 2}, {0.5, 0.25, -1, 3},
            {{"filters", 2}, {"kernel_size", memo::ints{1, 1}}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}, {"unit_forget_bias", false}})
            .out,
        {1, 1, 2, 2}, {h0, h0, h1, h1});
}

TEST(ReferenceRnn, ConvLstm3DTanhActivations) {
    // 1x1x1 kernel, 1 filter, sigmoid gates, forget bias 1 (unit_forget_bias), two steps at each of 2 positions.
    auto cell = [](double z, double c, double& h) {
        c = sigmoid(z + 1) * c + sigmoid(z) * std::tanh(z);
        h = sigmoid(z) * std::tanh(c);
        return c;
    };
    std::vector<double> want;
    for (auto [x1, x2] : {std::pair{0.3, -0.2}, std::pair{-0.7, 0.9}}) {
        double h = 0;
        const double c = cell(x1, 0, h);
        cell(x2 + h, c, h);
        want.push_back(h);
    }
    expect_values(run_layer("ConvLSTM3D", {2, 1, 1, 2, 1}, {0.3, -0.7, -0.2, 0.9},
                            {{"filters", 1},
                             {"kernel_size", memo::ints{1, 1, 1}},
                             {"recurrent_activation", "sigmoid"},
                             {"kernel_initializer", "Ones"},
                             {"recurrent_initializer", "Ones"}})
                      .out,
                  {1, 1, 1, 2, 1}, want);
}

// --- Half precision ---

TEST(ReferenceRnn, Float16AndBfloat16) {
    // The SimpleRNN and LSTM cases above, in 16-bit types: inputs are exact, the results round.
    const double h2 = std::tanh(0.25 + std::tanh(0.5));
    param_list ones = {{"units", 1}, {"kernel_initializer", "Ones"}, {"recurrent_initializer", "Ones"}};
    const auto f16 = run_layer("SimpleRNN", {2, 1}, {0.5, 0.25}, ones, memo::dtype::float16);
    EXPECT_EQ(f16.out.type, memo::dtype::float16);
    expect_values(f16.out, {1, 1}, {h2}, 2e-3);
    expect_values(run_layer("SimpleRNN", {2, 1}, {0.5, 0.25}, ones, memo::dtype::float64, memo::dtype::bfloat16).out, {1, 1}, {h2}, 1e-2);
    const double c1 = sigmoid(0.1) * std::tanh(0.3), h1 = sigmoid(0.4) * std::tanh(c1);
    const double c2 = sigmoid(-0.6) * c1 + sigmoid(0.5) * std::tanh(0.7);
    expect_values(
        run_layer(
            "LSTM", {2, 4}, {0.1, 0.2, 0.3, 0.4, 0.5, -0.6, 0.7, -0.8},
            {{"units", 1}, {"kernel_initializer", "Identity"}, {"recurrent_initializer", "Zeros"}, {"unit_forget_bias", false}, {"return_sequences", true}},
            memo::dtype::float32, memo::dtype::float16)
            .out,
        {1, 2, 1}, {h1, sigmoid(-0.8) * std::tanh(c2)}, 2e-3);
}

// --- Sweep ---

/// Multiply-adds of one run, roughly: input elements x kernel taps x gate outputs x (features + units).
double cost(const memo::model& m) {
    const memo::node& n = m[m.outputs[0]];
    const memo::shape& in = m[n.inputs[0]].out;
    double c = 1;
    for (int i = 1; i < in.rank(); ++i) c *= static_cast<double>(in[i]);
    const memo::reference::params p{n};
    const double u = p.has("units") ? static_cast<double>(p.integer("units")) : p.has("filters") ? static_cast<double>(p.integer("filters")) : 1;
    if (p.has("kernel_size"))
        for (auto k : p.ints("kernel_size", in.rank() - 3)) c *= static_cast<double>(k);
    return c * 8 * u * (static_cast<double>(in.back()) + u);
}

/// Whether every activation of the node is bounded, so that outputs of finite inputs stay finite.
bool bounded(const memo::node& n) {
    const memo::reference::params p{n};
    for (auto name : {"activation", "recurrent_activation"}) {
        if (!p.has(name)) continue;
        const auto a = memo::reference::detail::rnn::act_of(p, name);
        if (a != "tanh" && a != "sigmoid" && a != "hard_sigmoid" && a != "softsign" && a != "softmax") return false;
    }
    return true;
}

TEST(ReferenceRnn, SweepRandomSingleLayerModels) {
    memo::rng r(0x5eed2);
    memo::reference::interpreter interp;
    int classes = 0;
    for (const auto& L : test::reg()) {
        if (L.fam != memo::family::rnn) continue;
        ++classes;
        int ran = 0;
        for (int draw = 0; draw < 300 && ran < 10; ++draw) {
            auto m = test::random_single_layer_model(L, r);
            ASSERT_TRUE(m) << L.name;
            if (cost(*m) > 2e7) continue;  // keep the unit test quick; small models cover the same code
            const auto inputs = memo::make_inputs(*m, {.samples = 2});
            const auto res = interp.run(*m, inputs);
            ASSERT_TRUE(res.ok()) << L.name << ": " << res.message;
            const memo::node& n = (*m)[m->outputs[0]];
            EXPECT_EQ(res.outputs[0].dims, memo::concrete(n.out, 2)) << L.name;
            if (bounded(n)) {
                EXPECT_FALSE(res.outputs[0].has_non_finite()) << L.name;
            }
            ++ran;
        }
        EXPECT_GE(ran, 5) << L.name;
    }
    EXPECT_EQ(classes, 8);
}

// The oracle's rounding measure shakes a recurrence's state (detail::shake_state) by a unit of its
// own magnitude at every step, with one sign per state value. Float32 LSTMs with softplus
// activation and softsign gates whose state grows chaotically to 1e9 over hundreds of steps (found
// among 20,000 random ones) part from float64 by up to their whole scale; the shaken float64 run
// parts at least a sixteenth as far (the oracle's slack is 16 times it). Shaking the activations
// alone moved them by 1e-5 of that, and a campaign took the float32 drift for a fault. A calm LSTM
// still moves by no more than rounding.
TEST(ReferenceRnn, ShakenStateShowsAChaoticRecurrencesFloat32Drift) {
    auto max_diff = [](const tensor& a, const tensor& b) {
        double d = 0;
        for (std::size_t i = 0; i < a.data.size(); ++i) d = std::max(d, std::abs(a.data[i] - b.data[i]));
        return d;
    };
    auto scale = [](const tensor& a) {
        double s = 0;
        for (double x : a.data) s = std::max(s, std::abs(x));
        return s;
    };
    struct lstm_case {
        std::uint64_t seed;
        std::int64_t steps, features, units;
        const char *act, *gates;
        bool chaotic;
    };
    for (const auto& c : {lstm_case{1376, 603, 1, 5, "softplus", "softsign", true}, lstm_case{523, 657, 1, 4, "softplus", "softsign", true},
                          lstm_case{1099, 455, 1, 4, "softplus", "softsign", true}, lstm_case{1311, 420, 1, 6, "softplus", "softsign", true},
                          lstm_case{7, 50, 3, 4, "tanh", "sigmoid", false}}) {
        memo::builder b(test::reg());
        b.add("LSTM", {b.input({c.steps, c.features}, memo::dtype::float32)},
              {{"units", c.units}, {"activation", c.act}, {"recurrent_activation", c.gates}, {"return_sequences", false}});
        auto m = b.finish();
        m.seed = c.seed;
        const auto x = memo::make_inputs(m, {.samples = 2, .varied = true});
        memo::reference::interpreter own, truth(memo::dtype::float64);
        constexpr double shaking = 1;  // units of roundoff
        const auto f32 = own.run(m, x), f64 = truth.run(m, x), shaken = truth.run_shaken(m, x, {}, shaking);
        ASSERT_TRUE(f32.ok() && f64.ok() && shaken.ok()) << c.seed;
        const double s = scale(f64.outputs[0]), drift = max_diff(f32.outputs[0], f64.outputs[0]), moved = max_diff(shaken.outputs[0], f64.outputs[0]);
        if (c.chaotic) {
            EXPECT_GT(drift, 0.01 * s) << c.seed << ": no longer a chaotic case";
            EXPECT_GE(16 * moved, drift) << c.seed << ": scale " << s;
        } else {
            EXPECT_LE(moved, 1e-5 * s) << c.seed;
        }
    }
}

// A saturated gate's complement is its rounding alone: a bfloat16 GRU with softsign gates, relu
// activation and a kernel of ones, fed 1e6, has z = softsign(1.7e7) = 1 - 6e-8, so (1 - z) *
// relu(1.7e7) is 1 in float64 and 0 once z rounds to 1 in bfloat16. The shaken float64 run moves
// each gate by a unit of its own magnitude (detail::shake_gate), and so the output by far more than
// the bfloat16 run parts from float64: the oracle leaves the node unjudged. Shaking activations
// by their formulas' constant moved softsign by nothing, and a campaign took the reference's
// bfloat16 rounding against ONNX Runtime's for a fault.
TEST(ReferenceRnn, ShakenGatesShowASaturatedGatesRounding) {
    memo::builder b(test::reg());
    b.add("GRU", {b.input({1, 17}, memo::dtype::bfloat16)},
          {{"units", 1}, {"activation", "relu"}, {"recurrent_activation", "softsign"}, {"kernel_initializer", "Ones"}});
    const auto m = b.finish();
    tensor x(memo::concrete(m[0].out, 1), memo::dtype::bfloat16);
    std::fill(x.data.begin(), x.data.end(), 1e6);
    const std::vector<tensor> in{x};
    memo::reference::interpreter own, truth(memo::dtype::float64);
    constexpr double shaking = 1;  // units of roundoff
    const auto bf16 = own.run(m, in), f64 = truth.run(m, in), shaken = truth.run_shaken(m, in, {}, shaking);
    ASSERT_TRUE(bf16.ok() && f64.ok() && shaken.ok());
    const double exact = f64.outputs[0].data.at(0);
    EXPECT_NEAR(exact, 1.0, 1e-6);
    EXPECT_EQ(bf16.outputs[0].data.at(0), 0.0);
    EXPECT_GT(std::abs(shaken.outputs[0].data.at(0) - exact), 100.0);  // 2^-8 of 1.7e7
}

}  // namespace

}  // namespace test_reference_rnn_test
