// Reference kernels of the pooling family, against values worked out by hand on tiny inputs.
#include <cmath>
#include <limits>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/tensors/inputs.hpp>

#include "kernels.hpp"

namespace test_reference_pool_test {

namespace {

using memo::ints;
using memo::tensor;
using std::int64_t;
using test::kernels::make;
using test::kernels::one_layer;

/// The output on `x` in float64 unless told (`precision`; the model's dtypes when nullopt): these
/// tests' values are worked out exactly.
tensor run(const memo::model& m, const tensor& x, std::optional<memo::dtype> precision = memo::dtype::float64) { return test::kernels::run(m, x, precision); }

void expect_values(const tensor& t, const std::vector<int64_t>& dims, const std::vector<double>& values, double tol = 1e-12) {
    test::kernels::expect_values(t, dims, values, tol);
}

}  // namespace

TEST(ReferenceMaxPooling1D, ValidStridesDefaultToPoolSize) {
    // pool 2, strides None = 2, length 5: windows [1 5], [2 4]; the 3 is left over.
    const auto m = one_layer("MaxPooling1D", {5, 1}, {{"pool_size", ints{2}}});
    expect_values(run(m, make({1, 5, 1}, {1, 5, 2, 4, 3})), {1, 2, 1}, {5, 4});
}

TEST(ReferenceMaxPooling1D, SameIgnoresThePadding) {
    // pool 2, stride 2, length 5: out 3, total pad 2*2 + 2 - 5 = 1, after. Windows [-1 -5], [-2 -4], [-3]:
    // the pad is not a 0, so the last max is -3.
    const auto m = one_layer("MaxPooling1D", {5, 1}, {{"pool_size", ints{2}}, {"padding", "same"}});
    expect_values(run(m, make({1, 5, 1}, {-1, -5, -2, -4, -3})), {1, 3, 1}, {-1, -2, -3});
}

TEST(ReferenceMaxPooling1D, NaNInAWindowGivesNaN) {
    const auto m = one_layer("MaxPooling1D", {4, 1}, {{"pool_size", ints{2}}});
    const tensor y = run(m, make({1, 4, 1}, {1, std::numeric_limits<double>::quiet_NaN(), 3, 4}));
    ASSERT_EQ(y.dims, (std::vector<int64_t>{1, 2, 1}));
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 4);
}

TEST(ReferenceAveragePooling1D, SameDividesByTheRealElements) {
    // pool 2, stride 2 over 1..5: windows [1 2], [3 4], [5 pad] -> 1.5, 3.5, 5/1.
    const auto m = one_layer("AveragePooling1D", {5, 1}, {{"pool_size", ints{2}}, {"padding", "same"}});
    expect_values(run(m, make({1, 5, 1}, {1, 2, 3, 4, 5})), {1, 3, 1}, {1.5, 3.5, 5});
    // pool 3, stride 1 over 1..4: total pad 2, one each side: [pad 1 2] -> 3/2, [1 2 3] -> 2, [2 3 4] -> 3, [3 4 pad] -> 7/2.
    const auto s1 = one_layer("AveragePooling1D", {4, 1}, {{"pool_size", ints{3}}, {"strides", ints{1}}, {"padding", "same"}});
    expect_values(run(s1, make({1, 4, 1}, {1, 2, 3, 4})), {1, 4, 1}, {1.5, 2, 3, 3.5});
}

TEST(ReferenceAveragePooling1D, Float16AccumulatesInFloat) {
    // (2048 + 1 + 1) / 3 = 683.33 -> 683.5 in half (spacing 0.5); summed in half it would be 2048 / 3 -> 682.5.
    const auto m = one_layer("AveragePooling1D", {3, 1}, {{"pool_size", ints{3}}}, memo::dtype::float16);
    expect_values(run(m, make({1, 3, 1}, {2048, 1, 1}), std::nullopt), {1, 1, 1}, {683.5});
}

TEST(ReferenceAveragePooling2D, ValidStride1) {
    // 3x3 of 1..9, pool 2x2, stride 1: (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4, 6, 7.
    const auto m = one_layer("AveragePooling2D", {3, 3, 1}, {{"pool_size", ints{2, 2}}, {"strides", ints{1, 1}}});
    expect_values(run(m, make({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})), {1, 2, 2, 1}, {3, 4, 6, 7});
}

TEST(ReferenceMaxPooling2D, ChannelsFirstPoolsEachChannelPlane) {
    // channel 0 [[1 2] [3 4]], channel 1 [[8 7] [6 5]]; bfloat16 holds these exactly.
    const auto m = one_layer("MaxPooling2D", {2, 2, 2}, {{"pool_size", ints{2, 2}}, {"data_format", "channels_first"}});
    expect_values(run(m, make({1, 2, 2, 2}, {1, 2, 3, 4, 8, 7, 6, 5}), memo::dtype::bfloat16), {1, 2, 1, 1}, {4, 8});
}

TEST(ReferencePooling3D, MaxAndAverageOverACube) {
    // 2x2x2 of 1..8 on channel 0 and 10..80 on channel 1 (interleaved, channels_last).
    std::vector<double> x;
    for (int i = 1; i <= 8; ++i) x.insert(x.end(), {double(i), 10.0 * i});
    const auto mx = one_layer("MaxPooling3D", {2, 2, 2, 2}, {{"pool_size", ints{2, 2, 2}}});
    expect_values(run(mx, make({1, 2, 2, 2, 2}, x)), {1, 1, 1, 1, 2}, {8, 80});
    const auto avg = one_layer("AveragePooling3D", {2, 2, 2, 2}, {{"pool_size", ints{2, 2, 2}}});
    expect_values(run(avg, make({1, 2, 2, 2, 2}, x)), {1, 1, 1, 1, 2}, {4.5, 45});
    // same, pool 2, stride 1 on a 2-cube: the window at (1,1,1) holds only element 8.
    const auto same = one_layer("AveragePooling3D", {2, 2, 2, 2}, {{"pool_size", ints{2, 2, 2}}, {"strides", ints{1, 1, 1}}, {"padding", "same"}});
    const tensor y = run(same, make({1, 2, 2, 2, 2}, x));
    ASSERT_EQ(y.dims, (std::vector<int64_t>{1, 2, 2, 2, 2}));
    EXPECT_DOUBLE_EQ(y[0], 4.5);   // (0,0,0) sees the whole cube
    EXPECT_DOUBLE_EQ(y[14], 8);    // (1,1,1) channel 0
    EXPECT_DOUBLE_EQ(y[12], 7.5);  // (1,1,0) sees elements 7 and 8
}

TEST(ReferenceGlobalPooling, AverageAndMaxWithAndWithoutKeepdims) {
    // (3, 2): channel 0 = 1 2 3, channel 1 = 10 -20 30.
    const tensor x = make({1, 3, 2}, {1, 10, 2, -20, 3, 30});
    expect_values(run(one_layer("GlobalAveragePooling1D", {3, 2}, {}), x), {1, 2}, {2, 20.0 / 3});
    expect_values(run(one_layer("GlobalAveragePooling1D", {3, 2}, {{"keepdims", true}}), x), {1, 1, 2}, {2, 20.0 / 3});
    expect_values(run(one_layer("GlobalMaxPooling1D", {3, 2}, {{"keepdims", true}}), x), {1, 1, 2}, {3, 30});
    // channels_first (2, 3): channel 0 = 1 10 2, channel 1 = -20 3 30.
    const tensor xf = make({1, 2, 3}, {1, 10, 2, -20, 3, 30});
    expect_values(run(one_layer("GlobalMaxPooling1D", {2, 3}, {{"data_format", "channels_first"}, {"keepdims", true}}), xf), {1, 2, 1}, {10, 30});
}

TEST(ReferenceGlobalPooling, TwoAndThreeDimensionalChannelsFirst) {
    // (2 channels, 2, 2): channel 0 = 1 2 3 4, channel 1 = -1 -2 -3 -4.
    const tensor x = make({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
    expect_values(run(one_layer("GlobalMaxPooling2D", {2, 2, 2}, {{"data_format", "channels_first"}, {"keepdims", true}}), x), {1, 2, 1, 1}, {4, -1});
    expect_values(run(one_layer("GlobalAveragePooling2D", {2, 2, 2}, {{"data_format", "channels_first"}}), x), {1, 2}, {2.5, -2.5});
    // The same values as a (2, 1, 2, 2) volume.
    const tensor v = make({1, 2, 1, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
    expect_values(run(one_layer("GlobalAveragePooling3D", {2, 1, 2, 2}, {{"data_format", "channels_first"}, {"keepdims", true}}), v), {1, 2, 1, 1, 1},
                  {2.5, -2.5});
    expect_values(run(one_layer("GlobalMaxPooling3D", {2, 1, 2, 2}, {{"data_format", "channels_first"}}), v), {1, 2}, {4, -1});
}

TEST(ReferencePoolSweep, RandomSingleLayerModelsGiveTheInferredShape) {
    memo::rng r(7031);
    memo::reference::interpreter interp;
    for (const char* cls : {"MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "GlobalMaxPooling1D",
                            "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D"}) {
        for (int k = 0; k < 10; ++k) {
            const auto m = test::random_single_layer_model(test::reg().at(cls), r);
            ASSERT_TRUE(m) << cls;
            const auto inputs = memo::make_inputs(*m);
            const auto res = interp.run(*m, inputs);
            ASSERT_TRUE(res.ok()) << cls << ": " << res.message;
            const auto& node = m->nodes.back();
            ASSERT_EQ(res.outputs.at(0).dims, memo::concrete(node.out, 2)) << cls;
            EXPECT_FALSE(res.outputs[0].has_non_finite()) << cls;
            // Pools of inputs in [0, 1) stay in [0, 1).
            for (double y : res.outputs[0].data) ASSERT_TRUE(y >= 0 && y < 1) << cls << " gave " << y;
        }
    }
}

}  // namespace test_reference_pool_test
