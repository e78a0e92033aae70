// Reference kernels of the conv and locally-connected families, against values worked out by hand
// on tiny inputs, and against naive formulas (written here, index by index) on drawn weights.
#include <memo/backends/reference/interpreter.hpp>
#include <memo/tensors/inputs.hpp>

#include "kernels.hpp"

namespace test_reference_conv_test {

namespace {

using memo::ints;
using memo::tensor;
using std::int64_t;
using test::kernels::make;
using test::kernels::one_layer;
using param_list = std::initializer_list<std::pair<std::string_view, memo::value>>;

/// The output on `x` in float64 unless told (`precision`; the model's dtypes when nullopt): these
/// tests' values are worked out exactly.
tensor run(const memo::model& m, const tensor& x, std::optional<memo::dtype> precision = memo::dtype::float64) { return test::kernels::run(m, x, precision); }

/// Inputs in [-1, 1) drawn from the model's seed.
tensor drawn_input(const memo::model& m, int64_t batch = 2) { return memo::make_inputs(m, {batch, -1.0, 1.0}).at(0); }

void expect_values(const tensor& t, const std::vector<int64_t>& dims, const std::vector<double>& values, double tol = 1e-12) {
    test::kernels::expect_values(t, dims, values, tol);
}

/// TensorFlow's "same" padding before the data: half the total, the odd one after.
int64_t same_pad(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d) { return std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - in, 0) / 2; }

/// Moves axis 1 to the end: (b, c, h, w) -> (b, h, w, c), for tensors of rank 3 or 4.
tensor channels_last(const tensor& x) {
    std::vector<int64_t> d = x.dims;
    const int64_t b = d[0], c = d[1], inner = x.size() / (b * c);
    d.erase(d.begin() + 1);
    d.push_back(c);
    tensor out(d, x.type);
    for (int64_t i = 0; i < b; ++i)
        for (int64_t k = 0; k < c; ++k)
            for (int64_t s = 0; s < inner; ++s) out[(i * inner + s) * c + k] = x[(i * c + k) * inner + s];
    return out;
}

}  // namespace

// ---- Conv1D by hand ----

TEST(ReferenceConv1D, OnesKernelSumsEachWindowPlusBias) {
    // x = 1 2 3 4, k = 2, kernel ones, bias 1: (1+2)+1, (2+3)+1, (3+4)+1.
    const auto m = one_layer("Conv1D", {4, 1}, {{"filters", 1}, {"kernel_size", ints{2}}, {"kernel_initializer", "Ones"}, {"bias_initializer", "Ones"}});
    expect_values(run(m, make({1, 4, 1}, {1, 2, 3, 4})), {1, 3, 1}, {4, 6, 8});
}

TEST(ReferenceConv1D, SameWithStride2PutsTheOddPadAfter) {
    // x = 1..5, k = 3, s = 2: out = ceil(5/2) = 3, total pad = (3-1)*2 + 3 - 5 = 2, one before:
    // windows [0 1 2], [2 3 4], [4 5 0] -> 3, 9, 9.
    const auto m =
        one_layer("Conv1D", {5, 1}, {{"filters", 1}, {"kernel_size", ints{3}}, {"strides", ints{2}}, {"padding", "same"}, {"kernel_initializer", "Ones"}});
    expect_values(run(m, make({1, 5, 1}, {1, 2, 3, 4, 5})), {1, 3, 1}, {3, 9, 9});
}

TEST(ReferenceConv1D, CausalPadsOnlyBefore) {
    // k = 2 pads one zero before: [0 1], [1 2], [2 3], [3 4] -> 1, 3, 5, 7.
    const auto m = one_layer("Conv1D", {4, 1}, {{"filters", 1}, {"kernel_size", ints{2}}, {"padding", "causal"}, {"kernel_initializer", "Ones"}});
    expect_values(run(m, make({1, 4, 1}, {1, 2, 3, 4})), {1, 4, 1}, {1, 3, 5, 7});
    // dilation 2 pads (2-1)*2 = 2 zeros: out[i] = x[i-2] + x[i] -> 1, 2, 1+3, 2+4.
    const auto d = one_layer("Conv1D", {4, 1},
                             {{"filters", 1}, {"kernel_size", ints{2}}, {"padding", "causal"}, {"dilation_rate", ints{2}}, {"kernel_initializer", "Ones"}});
    expect_values(run(d, make({1, 4, 1}, {1, 2, 3, 4})), {1, 4, 1}, {1, 2, 4, 6});
}

TEST(ReferenceConv1D, DilationSpreadsTheTaps) {
    // valid, k = 2, d = 2: out[i] = x[i] + x[i+2] over 1..5 -> 4, 6, 8.
    const auto m = one_layer("Conv1D", {5, 1}, {{"filters", 1}, {"kernel_size", ints{2}}, {"dilation_rate", ints{2}}, {"kernel_initializer", "Ones"}});
    expect_values(run(m, make({1, 5, 1}, {1, 2, 3, 4, 5})), {1, 3, 1}, {4, 6, 8});
}

TEST(ReferenceConv1D, IdentityKernelMapsChannelsToFilters) {
    // k = 1, kernel (1, 2, 3) viewed as the 2x3 identity: filter f copies channel f, filter 2 is 0;
    // then relu clips the negative channel.
    const auto m = one_layer("Conv1D", {2, 2},
                             {{"filters", 3}, {"kernel_size", ints{1}}, {"kernel_initializer", "Identity"}, {"activation", "relu"}, {"use_bias", false}});
    expect_values(run(m, make({1, 2, 2}, {1, -2, 3, 4})), {1, 2, 3}, {1, 0, 0, 3, 4, 0});
}

TEST(ReferenceConv1D, Float16AccumulatesInFloat) {
    // 2048 + 1 + 1 = 2050 is a half; summed in half, 2048 + 1 would round back to 2048 twice.
    const auto m = one_layer("Conv1D", {3, 1}, {{"filters", 1}, {"kernel_size", ints{3}}, {"kernel_initializer", "Ones"}}, memo::dtype::float16);
    const tensor y = run(m, make({1, 3, 1}, {2048, 1, 1}), std::nullopt);
    EXPECT_EQ(y.type, memo::dtype::float16);
    expect_values(y, {1, 1, 1}, {2050});
    // bfloat16 has 8 significant bits: 2050 rounds to 2048.
    expect_values(run(m, make({1, 3, 1}, {2048, 1, 1}), memo::dtype::bfloat16), {1, 1, 1}, {2048});
}

// ---- Conv2D/3D ----

namespace {

/// out[b,i,j,f] = bias[f] + sum_{p,q,c} x[b, i*s + p*d - pad_h, j*s + q*d - pad_w, c] * k[p,q,c,f].
std::vector<double> naive_conv2d(const tensor& x, const tensor& k, const tensor* bias, int64_t oh, int64_t ow, int64_t s, int64_t d, bool same) {
    const int64_t B = x.dims[0], H = x.dims[1], W = x.dims[2], C = x.dims[3], KH = k.dims[0], KW = k.dims[1], F = k.dims[3];
    const int64_t ph = same ? same_pad(H, oh, KH, s, d) : 0, pw = same ? same_pad(W, ow, KW, s, d) : 0;
    std::vector<double> out;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
                for (int64_t f = 0; f < F; ++f) {
                    double sum = bias ? (*bias)[f] : 0.0;
                    for (int64_t p = 0; p < KH; ++p)
                        for (int64_t q = 0; q < KW; ++q) {
                            const int64_t r = i * s + p * d - ph, c2 = j * s + q * d - pw;
                            if (r < 0 || r >= H || c2 < 0 || c2 >= W) continue;
                            for (int64_t c = 0; c < C; ++c) sum += x[((b * H + r) * W + c2) * C + c] * k[((p * KW + q) * C + c) * F + f];
                        }
                    out.push_back(sum);
                }
    return out;
}

}  // namespace

TEST(ReferenceConv2D, MatchesTheNaiveFormulaOnDrawnWeights) {
    struct conf {
        int64_t stride, dilation;
        const char* padding;
    };
    for (const conf c : {conf{2, 1, "same"}, conf{1, 2, "valid"}, conf{1, 2, "same"}, conf{3, 1, "valid"}}) {
        SCOPED_TRACE(std::string(c.padding) + " s" + std::to_string(c.stride) + " d" + std::to_string(c.dilation));
        const auto m = one_layer("Conv2D", {5, 6, 2},
                                 {{"filters", 3},
                                  {"kernel_size", ints{3, 2}},
                                  {"strides", ints{c.stride, c.stride}},
                                  {"padding", c.padding},
                                  {"dilation_rate", ints{c.dilation, c.dilation}},
                                  {"bias_initializer", "RandomUniform"}});
        const auto w = memo::weights_of(m, 1);
        ASSERT_EQ(w.size(), 2u);
        const tensor x = drawn_input(m);
        const tensor y = run(m, x);
        const auto& out = m.nodes[1].out;
        expect_values(y, memo::concrete(out, 2),
                      naive_conv2d(x, w[0].value, &w[1].value, out[1], out[2], c.stride, c.dilation, c.padding == std::string("same")));
    }
}

TEST(ReferenceConv2D, ChannelsFirstIsTheTransposeOfChannelsLast) {
    // Same seed and node index: the same kernel (kh, kw, in, filters) and bias in both layouts.
    const auto last = one_layer(
        "Conv2D", {4, 5, 2}, {{"filters", 3}, {"kernel_size", ints{2, 3}}, {"padding", "same"}, {"strides", ints{2, 1}}, {"bias_initializer", "RandomNormal"}});
    const auto first = one_layer("Conv2D", {2, 4, 5},
                                 {{"filters", 3},
                                  {"kernel_size", ints{2, 3}},
                                  {"padding", "same"},
                                  {"strides", ints{2, 1}},
                                  {"bias_initializer", "RandomNormal"},
                                  {"data_format", "channels_first"}});
    const tensor x_first = drawn_input(first);
    const tensor y_first = run(first, x_first), y_last = run(last, channels_last(x_first));
    ASSERT_EQ(y_first.dims, (std::vector<int64_t>{2, 3, 2, 5}));
    expect_values(channels_last(y_first), y_last.dims, y_last.data);
}

TEST(ReferenceConv3D, SamePaddingCountsTheWindowsThatFit) {
    // 2x2x2 ones, k = 2, same: total pad 1 per axis, after. Index 0 sees 2 elements on its axis,
    // index 1 sees 1; out = product over axes: (0,0,0) -> 8, (0,1,1) -> 2, (1,1,1) -> 1.
    const auto m = one_layer("Conv3D", {2, 2, 2, 1}, {{"filters", 1}, {"kernel_size", ints{2, 2, 2}}, {"padding", "same"}, {"kernel_initializer", "Ones"}});
    expect_values(run(m, make({1, 2, 2, 2, 1}, std::vector<double>(8, 1.0))), {1, 2, 2, 2, 1}, {8, 4, 4, 2, 4, 2, 2, 1});
}

// ---- Depthwise and separable ----

TEST(ReferenceDepthwiseConv1D, OutputChannelIsChannelTimesMultiplierPlusM) {
    // k = 1, 3 channels, dm = 2: kernel (1, 3, 2) viewed as the 3x2 identity: k[c=0,m=0] = k[c=1,m=1] = 1.
    // Output channel c*2 + m: 0 <- x0, 3 <- x1, the rest 0.
    const auto m = one_layer("DepthwiseConv1D", {2, 3},
                             {{"kernel_size", ints{1}}, {"depth_multiplier", 2}, {"depthwise_initializer", "Identity"}, {"bias_initializer", "Zeros"}});
    expect_values(run(m, make({1, 2, 3}, {1, 2, 3, 4, 5, 6})), {1, 2, 6}, {1, 0, 0, 2, 0, 0, 4, 0, 0, 5, 0, 0});
}

TEST(ReferenceDepthwiseConv1D, OnesSumEachChannelSeparately) {
    // Channels 1 2 3 and 10 20 30, k = 2, dm = 2, bias 1: channel 0 -> 3+1, 5+1 twice; channel 1 -> 31, 51 twice.
    const auto m = one_layer("DepthwiseConv1D", {3, 2},
                             {{"kernel_size", ints{2}}, {"depth_multiplier", 2}, {"depthwise_initializer", "Ones"}, {"bias_initializer", "Ones"}});
    expect_values(run(m, make({1, 3, 2}, {1, 10, 2, 20, 3, 30})), {1, 2, 4}, {4, 4, 31, 31, 6, 6, 51, 51});
}

TEST(ReferenceDepthwiseConv2D, MatchesTheNaiveFormulaOnDrawnWeights) {
    const auto m =
        one_layer("DepthwiseConv2D", {5, 4, 3},
                  {{"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}, {"padding", "same"}, {"depth_multiplier", 2}, {"bias_initializer", "RandomUniform"}});
    const auto w = memo::weights_of(m, 1);
    const tensor x = drawn_input(m), y = run(m, x);
    const int64_t H = 5, W = 4, C = 3, DM = 2, OH = 3, OW = 2;
    ASSERT_EQ(y.dims, (std::vector<int64_t>{2, OH, OW, C * DM}));
    const int64_t ph = same_pad(H, OH, 3, 2, 1), pw = same_pad(W, OW, 3, 2, 1);
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < OH; ++i)
            for (int64_t j = 0; j < OW; ++j)
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t q = 0; q < DM; ++q) {
                        double sum = w[1].value[c * DM + q];
                        for (int64_t p = 0; p < 3; ++p)
                            for (int64_t r = 0; r < 3; ++r) {
                                const int64_t h = i * 2 + p - ph, v = j * 2 + r - pw;
                                if (h >= 0 && h < H && v >= 0 && v < W) sum += x[((b * H + h) * W + v) * C + c] * w[0].value[((p * 3 + r) * C + c) * DM + q];
                            }
                        EXPECT_NEAR(y[(((b * OH + i) * OW + j) * C + c) * DM + q], sum, 1e-12);
                    }
}

TEST(ReferenceSeparableConv1D, OnesAreDepthwiseSumsThenAPointwiseSum) {
    // Channels 1 2 3 and 10 20 30, k = 2: depthwise 3 5 | 30 50; dm = 2 doubles each; pointwise
    // ones sums them: (3+3+30+30), (5+5+50+50).
    const auto m =
        one_layer("SeparableConv1D", {3, 2},
                  {{"filters", 1}, {"kernel_size", ints{2}}, {"depth_multiplier", 2}, {"depthwise_initializer", "Ones"}, {"pointwise_initializer", "Ones"}});
    expect_values(run(m, make({1, 3, 2}, {1, 10, 2, 20, 3, 30})), {1, 2, 1}, {66, 110});
}

TEST(ReferenceSeparableConv2D, IsDepthwiseThenPointwiseOnDrawnWeights) {
    const auto m = one_layer("SeparableConv2D", {4, 5, 2},
                             {{"filters", 3},
                              {"kernel_size", ints{2, 2}},
                              {"dilation_rate", ints{2, 1}},
                              {"padding", "same"},
                              {"depth_multiplier", 2},
                              {"bias_initializer", "RandomUniform"},
                              {"data_format", "channels_last"}});
    const auto w = memo::weights_of(m, 1);
    ASSERT_EQ(w.size(), 3u);
    const tensor x = drawn_input(m), y = run(m, x);
    const int64_t H = 4, W = 5, C = 2, DM = 2, F = 3;
    ASSERT_EQ(y.dims, (std::vector<int64_t>{2, H, W, F}));
    const int64_t ph = same_pad(H, H, 2, 1, 2), pw = same_pad(W, W, 2, 1, 1);
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < H; ++i)
            for (int64_t j = 0; j < W; ++j) {
                std::vector<double> mid(static_cast<std::size_t>(C * DM), 0.0);
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t q = 0; q < DM; ++q)
                        for (int64_t p = 0; p < 2; ++p)
                            for (int64_t r = 0; r < 2; ++r) {
                                const int64_t h = i + 2 * p - ph, v = j + r - pw;
                                if (h >= 0 && h < H && v >= 0 && v < W)
                                    mid[static_cast<std::size_t>(c * DM + q)] += x[((b * H + h) * W + v) * C + c] * w[0].value[((p * 2 + r) * C + c) * DM + q];
                            }
                for (int64_t f = 0; f < F; ++f) {
                    double sum = w[2].value[f];
                    for (int64_t k = 0; k < C * DM; ++k) sum += mid[static_cast<std::size_t>(k)] * w[1].value[k * F + f];
                    EXPECT_NEAR(y[((b * H + i) * W + j) * F + f], sum, 1e-12);
                }
            }
}

// ---- Transposed convs ----

TEST(ReferenceConv2DTranspose, Stride2ByHand) {
    // x = 1 2 along width, k = 3, s = 2, kernel ones: each input i adds to outputs 2i .. 2i+2.
    // valid: out = 2*2 + (3-2) = 5: [1, 1, 1+2, 2, 2].
    auto layer = [](const char* padding, memo::value output_padding) {
        return one_layer("Conv2DTranspose", {1, 2, 1},
                         {{"filters", 1},
                          {"kernel_size", ints{1, 3}},
                          {"strides", ints{1, 2}},
                          {"padding", padding},
                          {"output_padding", output_padding},
                          {"kernel_initializer", "Ones"}});
    };
    const tensor x = make({1, 1, 2, 1}, {1, 2});
    expect_values(run(layer("valid", memo::none), x), {1, 1, 5, 1}, {1, 1, 3, 2, 2});
    // same: out = 2*2 = 4; the forward conv on 4 pads (2-1)*2 + 3 - 4 = 1 after, none before, so
    // the transpose keeps outputs 0..3 of the valid one: [1, 1, 3, 2].
    expect_values(run(layer("same", memo::none), x), {1, 1, 4, 1}, {1, 1, 3, 2});
    // valid with output_padding 1: out = (2-1)*2 + 3 + 1 = 6, the extra position gets nothing.
    expect_values(run(layer("valid", ints{0, 1}), x), {1, 1, 6, 1}, {1, 1, 3, 2, 2, 0});
    // same with output_padding 0: out = (2-1)*2 + 3 - 2*1 + 0 = 3; the forward conv on 3 pads
    // (2-1)*2 + 3 - 3 = 2, one before, dropping the first output of the valid one: [1, 3, 2].
    expect_values(run(layer("same", ints{0, 0}), x), {1, 1, 3, 1}, {1, 3, 2});
}

TEST(ReferenceConv2DTranspose, MatchesTheGatherFormulaOnDrawnWeights) {
    // out[b, o, f] = bias[f] + sum over i, t with i*s + t*d - pad = o (per axis) of x[b, i, c] * k[t, f, c],
    // pad being the forward conv's (from the output size to the input size).
    struct conf {
        const char* format;
        const char* padding;
        int64_t stride, dilation;
        memo::value output_padding;
    };
    for (const conf& cf :
         {conf{"channels_last", "same", 2, 1, memo::none}, conf{"channels_first", "same", 2, 1, memo::none}, conf{"channels_last", "same", 1, 2, memo::none},
          conf{"channels_last", "valid", 2, 1, ints{1, 0}}, conf{"channels_first", "valid", 1, 2, memo::none}}) {
        SCOPED_TRACE(std::string(cf.format) + " " + cf.padding + " s" + std::to_string(cf.stride) + " d" + std::to_string(cf.dilation));
        const bool first = std::string(cf.format) == "channels_first";
        const int64_t H = 3, W = 2, C = 2, F = 3, KH = 3, KW = 2, S = cf.stride, D = cf.dilation;
        const param_list params = {{"filters", F},
                                   {"kernel_size", ints{KH, KW}},
                                   {"strides", ints{S, S}},
                                   {"dilation_rate", ints{D, D}},
                                   {"padding", cf.padding},
                                   {"output_padding", cf.output_padding},
                                   {"bias_initializer", "RandomUniform"},
                                   {"data_format", cf.format}};
        const auto m = first ? one_layer("Conv2DTranspose", {C, H, W}, params) : one_layer("Conv2DTranspose", {H, W, C}, params);
        const auto w = memo::weights_of(m, 1);
        const tensor xin = drawn_input(m), y = run(m, xin);
        const tensor x = first ? channels_last(xin) : xin, yl = first ? channels_last(y) : y;
        const int64_t OH = yl.dims[1], OW = yl.dims[2];
        ASSERT_EQ(yl.dims, (std::vector<int64_t>{2, OH, OW, F}));
        const bool same = std::string(cf.padding) == "same";
        const int64_t ph = same ? same_pad(OH, H, KH, S, D) : 0, pw = same ? same_pad(OW, W, KW, S, D) : 0;
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow)
                    for (int64_t f = 0; f < F; ++f) {
                        double sum = w[1].value[f];
                        for (int64_t i = 0; i < H; ++i)
                            for (int64_t j = 0; j < W; ++j)
                                for (int64_t p = 0; p < KH; ++p)
                                    for (int64_t q = 0; q < KW; ++q)
                                        if (i * S + p * D - ph == oh && j * S + q * D - pw == ow)
                                            for (int64_t c = 0; c < C; ++c)
                                                sum += x[((b * H + i) * W + j) * C + c] * w[0].value[((p * KW + q) * F + f) * C + c];
                        EXPECT_NEAR(yl[((b * OH + oh) * OW + ow) * F + f], sum, 1e-12);
                    }
    }
}

TEST(ReferenceConv3DTranspose, Stride2ByHand) {
    // As Conv2DTranspose's same case along the last axis: [1, 1, 3, 2], plus bias 1.
    const auto m = one_layer("Conv3DTranspose", {1, 1, 2, 1},
                             {{"filters", 1},
                              {"kernel_size", ints{1, 1, 3}},
                              {"strides", ints{1, 1, 2}},
                              {"padding", "same"},
                              {"kernel_initializer", "Ones"},
                              {"bias_initializer", "Ones"}});
    expect_values(run(m, make({1, 1, 1, 2, 1}, {1, 2})), {1, 1, 1, 4, 1}, {2, 2, 4, 3});
}

// ---- LocallyConnected ----

TEST(ReferenceLocallyConnected1D, EachPositionHasItsOwnKernel) {
    // x = 1 2 3 4, k = 2: kernel (3 positions, 2 taps, 6 filters) viewed as the 6x6 identity, so
    // position o's filter 2o + t copies x[o + t]: rows [1 2 0 0 0 0], [0 0 2 3 0 0], [0 0 0 0 3 4].
    const auto m = one_layer("LocallyConnected1D", {4, 1}, {{"filters", 6}, {"kernel_size", ints{2}}, {"kernel_initializer", "Identity"}});
    expect_values(run(m, make({1, 4, 1}, {1, 2, 3, 4})), {1, 3, 6}, {1, 2, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 3, 4});
}

TEST(ReferenceLocallyConnected1D, FeaturesAreTapMajorForChannelsLastChannelMajorForChannelsFirst) {
    // One position (k = 2 over length 2), 2 channels, filters 4, identity kernel (4, 4): filter j copies feature j.
    // channels_last features: (t0 c0, t0 c1, t1 c0, t1 c1); channels_first: (c0 t0, c0 t1, c1 t0, c1 t1).
    const auto last = one_layer("LocallyConnected1D", {2, 2}, {{"filters", 4}, {"kernel_size", ints{2}}, {"kernel_initializer", "Identity"}});
    expect_values(run(last, make({1, 2, 2}, {1, 10, 2, 20})), {1, 1, 4}, {1, 10, 2, 20});
    const auto first = one_layer("LocallyConnected1D", {2, 2},
                                 {{"filters", 4}, {"kernel_size", ints{2}}, {"kernel_initializer", "Identity"}, {"data_format", "channels_first"}});
    expect_values(run(first, make({1, 2, 2}, {1, 2, 10, 20})), {1, 4, 1}, {1, 2, 10, 20});
}

TEST(ReferenceLocallyConnected2D, MatchesKerasLocalConvOnDrawnWeights) {
    // Keras' backend.local_conv: position o = (i, j) takes the input slice at (i*s, j*s), flattened
    // in the input's layout, times kernel[o]; bias (oh, ow, f) is reshaped to the output's layout.
    for (const char* format : {"channels_last", "channels_first"}) {
        SCOPED_TRACE(format);
        const bool first = std::string(format) == "channels_first";
        const int64_t H = 5, W = 4, C = 2, F = 3, KH = 2, KW = 3, S = 2, OH = 2, OW = 1;
        const auto m =
            first
                ? one_layer(
                      "LocallyConnected2D", {C, H, W},
                      {{"filters", F}, {"kernel_size", ints{KH, KW}}, {"strides", ints{S, S}}, {"bias_initializer", "RandomUniform"}, {"data_format", format}})
                : one_layer("LocallyConnected2D", {H, W, C},
                            {{"filters", F}, {"kernel_size", ints{KH, KW}}, {"strides", ints{S, S}}, {"bias_initializer", "RandomUniform"}});
        const auto w = memo::weights_of(m, 1);
        ASSERT_EQ(w[0].value.dims, (std::vector<int64_t>{OH * OW, KH * KW * C, F}));
        const tensor x = drawn_input(m), y = run(m, x);
        ASSERT_EQ(y.dims, first ? (std::vector<int64_t>{2, F, OH, OW}) : (std::vector<int64_t>{2, OH, OW, F}));
        auto at = [&](int64_t b, int64_t h, int64_t v, int64_t c) { return first ? x[((b * C + c) * H + h) * W + v] : x[((b * H + h) * W + v) * C + c]; };
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j)
                    for (int64_t f = 0; f < F; ++f) {
                        const int64_t o = i * OW + j, out_flat = first ? (f * OH + i) * OW + j : (i * OW + j) * F + f;
                        double sum = w[1].value[out_flat];  // the reshaped bias: flat element for flat element
                        for (int64_t p = 0; p < KH; ++p)
                            for (int64_t q = 0; q < KW; ++q)
                                for (int64_t c = 0; c < C; ++c) {
                                    const int64_t feature = first ? (c * KH + p) * KW + q : (p * KW + q) * C + c;
                                    sum += at(b, i * S + p, j * S + q, c) * w[0].value[(o * KH * KW * C + feature) * F + f];
                                }
                        EXPECT_NEAR(y[b * OH * OW * F + out_flat], sum, 1e-12);
                    }
    }
}

// ---- Every class on random models ----

TEST(ReferenceConvSweep, RandomSingleLayerModelsGiveTheInferredShape) {
    memo::rng r(20240611);
    memo::reference::interpreter interp;
    for (const char* cls : {"Conv1D", "Conv2D", "Conv3D", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D", "DepthwiseConv2D", "Conv2DTranspose",
                            "Conv3DTranspose", "LocallyConnected1D", "LocallyConnected2D"}) {
        for (int k = 0; k < 10; ++k) {
            const auto m = test::random_single_layer_model(test::reg().at(cls), r);
            ASSERT_TRUE(m) << cls;
            const auto inputs = memo::make_inputs(*m);
            const auto res = interp.run(*m, inputs);
            ASSERT_TRUE(res.ok()) << cls << ": " << res.message;
            const auto& node = m->nodes.back();
            ASSERT_EQ(res.outputs.at(0).dims, memo::concrete(node.out, 2)) << cls;
            EXPECT_EQ(res.outputs[0].type, node.type) << cls;
            // exponential can overflow on large sums; every other activation keeps finite sums finite.
            if (memo::as_str(node.param("activation")) != "exponential") {
                EXPECT_FALSE(res.outputs[0].has_non_finite()) << cls;
            }
        }
    }
}

}  // namespace test_reference_conv_test
