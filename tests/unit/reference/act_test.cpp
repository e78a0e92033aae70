// Reference kernels of the activation layers against values worked out by hand, a sweep of
// random single-layer models of every activation class, and the shaken activation functions of
// the oracle's rounding measure.
#include <array>
#include <cmath>

#include "kernels.hpp"

namespace test_reference_act_test {

namespace {

using namespace test::kernels;
using memo::dtype;
using memo::tensor;

// One 1x2x3 input shared by most tests.
const tensor mixed = make({1, 2, 3}, {-2, -0.5, 0, 0.5, 1, 3});

}  // namespace

TEST(ReferenceAct, ReluDefaultIsMaxWithZero) { expect_values(run(one_layer("ReLU", {2, 3}, {}), mixed), {1, 2, 3}, {0, 0, 0, 0.5, 1, 3}); }

TEST(ReferenceAct, ReluWithThresholdSlopeAndMaxValue) {
    // y = (x > 0.75 ? x : 0) clipped to [0, 2], minus 0.5 * max(0.75 - x, 0):
    // -2 -> -0.5*2.75 = -1.375; -0.5 -> -0.625; 0 -> -0.375; 0.5 -> -0.125; 1 -> 1; 3 -> 2.
    const auto m = one_layer("ReLU", {2, 3}, {{"max_value", 2.0}, {"negative_slope", 0.5}, {"threshold", 0.75}});
    expect_values(run(m, mixed), {1, 2, 3}, {-1.375, -0.625, -0.375, -0.125, 1, 2});
}

TEST(ReferenceAct, ReluMaxValueZeroGivesZeros) { expect_values(run(one_layer("ReLU", {2, 3}, {{"max_value", 0.0}}), mixed), {1, 2, 3}, {0, 0, 0, 0, 0, 0}); }

TEST(ReferenceAct, SoftmaxOverLastAxis) {
    // exp of (0, ln 2, ln 3) is (1, 2, 3): sum 6; a row of zeros gives thirds.
    const auto x = make({1, 2, 3}, {0, std::log(2.0), std::log(3.0), 0, 0, 0});
    expect_values(run(one_layer("Softmax", {2, 3}, {}), x), {1, 2, 3}, {1.0 / 6, 2.0 / 6, 3.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 3});
}

TEST(ReferenceAct, SoftmaxOverSecondToLastAxis) {
    // Columns (0, ln 3), (0, 0), (ln 3, 0): exp gives (1, 3) / 4, (1, 1) / 2, (3, 1) / 4.
    const auto x = make({1, 2, 3}, {0, 0, std::log(3.0), std::log(3.0), 0, 0});
    expect_values(run(one_layer("Softmax", {2, 3}, {{"axis", -2}}), x), {1, 2, 3}, {0.25, 0.5, 0.75, 0.75, 0.5, 0.25});
}

TEST(ReferenceAct, LeakyReluScalesNegatives) {
    // alpha 0.25: -2 -> -0.5, -0.5 -> -0.125.
    expect_values(run(one_layer("LeakyReLU", {2, 3}, {{"alpha", 0.25}}), mixed), {1, 2, 3}, {-0.5, -0.125, 0, 0.5, 1, 3});
}

TEST(ReferenceAct, EluIsAlphaTimesExpm1BelowZero) {
    // alpha 0.5: -2 -> 0.5 * (e^-2 - 1) = -0.43233235838169365; -0.5 -> 0.5 * (e^-0.5 - 1) = -0.19673467014368328.
    expect_values(run(one_layer("ELU", {2, 3}, {{"alpha", 0.5}}), mixed), {1, 2, 3}, {-0.43233235838169365, -0.19673467014368328, 0, 0.5, 1, 3});
}

TEST(ReferenceAct, ThresholdedReluKeepsOnlyValuesAboveTheta) {
    // theta 1: 1 is not above it.
    expect_values(run(one_layer("ThresholdedReLU", {2, 3}, {{"theta", 1.0}}), mixed), {1, 2, 3}, {0, 0, 0, 0, 0, 3});
}

TEST(ReferenceAct, PreluUsesOneAlphaPerElement) {
    // Identity alpha of shape (2, 3) is [[1, 0, 0], [0, 1, 0]]: negatives times alpha, positives kept.
    const auto m = one_layer("PReLU", {2, 3}, {{"alpha_initializer", "Identity"}});
    const auto x = make({1, 2, 3}, {-1, -2, -3, -4, -5, 6});
    expect_values(run(m, x), {1, 2, 3}, {-1, 0, 0, 0, -5, 6});
}

TEST(ReferenceAct, PreluBroadcastsAlphaAlongSharedAxis) {
    // Sample (2, 3, 2), shared_axes=-1: alpha is (2, 1, 2), Identity [[[1, 0]], [[0, 1]]], the same
    // for each of the 3 middle positions. All inputs -1: output -alpha.
    const auto m = one_layer("PReLU", {2, 3, 2}, {{"shared_axes", -1}, {"alpha_initializer", "Identity"}});
    ASSERT_EQ(memo::weights_of(m, 1).at(0).value.dims, (std::vector<std::int64_t>{2, 1, 2}));
    const auto x = make({1, 2, 3, 2}, std::vector<double>(12, -1.0));
    expect_values(run(m, x), {1, 2, 3, 2}, {-1, 0, -1, 0, -1, 0, 0, -1, 0, -1, 0, -1});
}

TEST(ReferenceAct, NonFiniteInputsFollowKerasFormulas) {
    // relu keeps NaN; Keras 3's ReLU threshold selects (NaN and -inf give 0); ThresholdedReLU's
    // x * cast(x > theta) (Keras 2's layer) makes -inf * 0 = NaN; the alpha branch keeps -inf.
    const double nan = std::nan(""), inf = HUGE_VAL;
    const auto x = make({1, 3}, {nan, -inf, inf});
    auto expect = [](const tensor& got, std::array<double, 3> want) {
        ASSERT_EQ(got.data.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) {
            if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got.data[i])) << "element " << i << " is " << got.data[i];
            else EXPECT_EQ(got.data[i], want[i]) << "element " << i;
        }
    };
    expect(run(one_layer("ReLU", {3}, {}), x), {nan, 0, inf});
    expect(run(one_layer("ReLU", {3}, {{"max_value", 6.0}}), x), {nan, 0, 6});
    expect(run(one_layer("ReLU", {3}, {{"threshold", 0.5}}), x), {0, 0, inf});  // Keras 3 selects
    expect(run(one_layer("ReLU", {3}, {{"negative_slope", 0.5}}), x), {nan, -inf, inf});
    expect(run(one_layer("ThresholdedReLU", {3}, {}), x), {nan, nan, inf});
    expect(run(one_layer("LeakyReLU", {3}, {}), x), {nan, -inf, inf});
    expect(run(one_layer("ELU", {3}, {}), x), {nan, -1, inf});
}

TEST(ReferenceAct, Float16ComparesAgainstRoundedThetaAndRoundsOutputs) {
    // half(0.3) = 0.300048828125 (rounds up), so that input is not above theta in float16, as in
    // TensorFlow, which converts theta to the input's dtype. ELU(-1) = e^-1 - 1 = -0.6321205588 rounds
    // to -1295 * 2^-11 = -0.63232421875 in float16.
    const auto relu = one_layer("ThresholdedReLU", {2}, {{"theta", 0.3}}, dtype::float16);
    expect_values(run(relu, make({1, 2}, {0.300048828125, 0.5})), {1, 2}, {0, 0.5}, 0);
    expect_values(run(one_layer("ThresholdedReLU", {2}, {{"theta", 0.3}}), make({1, 2}, {0.300048828125, 0.5})), {1, 2}, {0.300048828125, 0.5}, 0);
    const auto elu = one_layer("ELU", {1}, {}, dtype::float16);
    expect_values(run(elu, make({1, 1}, {-1})), {1, 1}, {-0.63232421875}, 0);
    expect_values(run(one_layer("ELU", {1}, {}), make({1, 1}, {-1}), dtype::float16), {1, 1}, {-0.63232421875}, 0);
}

TEST(ReferenceAct, Float64KeepsTinyNegativesExact) {
    // expm1(-1e-10) = -1e-10 + 5e-21 - ... = -9.9999999995e-11; exp(x) - 1 in float64 would be off by 8e-18.
    const auto m = one_layer("ELU", {1}, {}, dtype::float64);
    expect_values(run(m, make({1, 1}, {-1e-10})), {1, 1}, {-9.9999999995e-11}, 1e-24);
    expect_values(run(one_layer("ELU", {1}, {}), make({1, 1}, {-1e-10}), dtype::float64), {1, 1}, {-9.9999999995e-11}, 1e-24);
}

TEST(ReferenceAct, RandomSingleLayerModelsRunWithInferredShapes) { sweep_family(memo::family::act, 20240611, 15, 100, 6); }

// The oracle's rounding measure (interpreter::run_shaken) moves each activation's result by
// the given units of roundoff of the node's dtype times what its formula rounds against: selu by
// u * scale * alpha, tanh by u, relu not at all; the same run shakes alike, and no shake leaves the
// plain result.
TEST(ReferenceAct, ShakenActivationsMoveByUnitsOfTheirFormulasConstant) {
    // A Dense layer's pre-activations z move by 2 units of themselves, then its activation's result
    // by 2 units of its formula's constant: each output is act(z (1 +- 2u)) +- 2u * constant.
    const auto x = make({1, 4}, {-0.75, -0.25, 0.5, 1.5});
    const double u = memo::unit_roundoff(dtype::float32);
    for (auto [act, at] : {std::pair{"selu", 1.0507009873554805 * 1.6732632423543772}, {"tanh", 1.0}, {"relu", 0.0}}) {
        const auto m = one_layer("Dense", {4}, {{"units", 5}, {"activation", act}}, dtype::float32);
        const auto linear = one_layer("Dense", {4}, {{"units", 5}, {"activation", "linear"}}, dtype::float32);
        memo::reference::interpreter truth(dtype::float64);
        const std::vector<tensor> in{x};
        constexpr double shaking = 2;  // units of roundoff
        const auto plain = truth.run(m, in), shaken = truth.run_shaken(m, in, {}, shaking), again = truth.run_shaken(m, in, {}, shaking),
                   z = truth.run(linear, in);
        ASSERT_TRUE(plain.ok() && shaken.ok() && again.ok() && z.ok()) << act;
        ASSERT_EQ(shaken.outputs[0].data.size(), 5u);
        for (std::size_t i = 0; i < 5; ++i) {
            const double pre = z.outputs[0].data[i];
            double nearest = INFINITY;
            for (double by : {1.0, -1.0})
                for (double after : {1.0, -1.0})
                    nearest = std::min(
                        nearest, std::abs(shaken.outputs[0].data[i] - memo::reference::activate<double>(act, pre * (1 + by * 2 * u)) - after * 2 * u * at));
            EXPECT_LT(nearest, 1e-15) << act << " element " << i;
            if (at > 0 || pre > 0) {
                EXPECT_NE(shaken.outputs[0].data[i], plain.outputs[0].data[i]) << act << " element " << i;
            }
            EXPECT_EQ(shaken.outputs[0].data[i], again.outputs[0].data[i]) << act << " element " << i;
        }
        EXPECT_EQ(truth.run(m, in).outputs[0].data, plain.outputs[0].data) << act;
    }
}

}  // namespace test_reference_act_test
