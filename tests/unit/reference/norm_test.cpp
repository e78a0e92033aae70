// Reference kernels of BatchNormalization and LayerNormalization against values worked out by
// hand, with weights given explicitly or drawn by constant initializers, and a sweep of random
// single-layer models.
#include <cmath>

#include "kernels.hpp"

namespace test_reference_norm_test {

namespace {

using namespace test::kernels;
using memo::dtype;
using memo::tensor;

/// The float64 kernel of m's layer on x with these weights instead of the initializers' draws.
tensor with_weights(const memo::model& m, const tensor& x, const std::vector<std::vector<double>>& weights) {
    using array = memo::reference::array<double>;
    static const auto table = memo::reference::builtin_kernels<double>();
    const auto* k = table.find(m[1].layer->name);
    if (!k) {
        ADD_FAILURE() << "no kernel for " << m[1].layer->name;
        return {};
    }
    std::vector<array> in{memo::reference::from_tensor<double>(x)}, ws;
    for (const auto& w : weights) ws.push_back(memo::reference::from_tensor<double>(make({static_cast<std::int64_t>(w.size())}, w)));
    auto out = (*k)(memo::reference::kernel_context{m[1], m, 1, dtype::float64}, in, ws);
    EXPECT_TRUE(out) << out.reason();
    return out ? memo::reference::to_tensor(*out, dtype::float64) : tensor{};
}

}  // namespace

TEST(ReferenceNorm, BatchNormalizationUsesMovingStatisticsPerChannel) {
    // gamma (2, 1, 0.5), beta (0, 1, -1), mean (1, 2, 3), variance (3, 0, 15), epsilon 1: sqrt(var + eps) = (2, 1, 4).
    // (3, 2, 7) -> (2*2/2, 0+1, 0.5*4/4-1) = (2, 1, -0.5); (1, 4, 3) -> (0, 2+1, -1).
    const auto m = one_layer("BatchNormalization", {2, 3}, {{"epsilon", 1.0}});
    const auto x = make({1, 2, 3}, {3, 2, 7, 1, 4, 3});
    expect_values(with_weights(m, x, {{2, 1, 0.5}, {0, 1, -1}, {1, 2, 3}, {3, 0, 15}}), {1, 2, 3}, {2, 1, -0.5, 0, 3, -1}, 1e-12);
}

TEST(ReferenceNorm, BatchNormalizationAlongSecondToLastAxis) {
    // axis -2 of (2, 3): 2 channels. gamma (1, 2), beta (0.5, 0), mean (0, 1), variance (0, 3), epsilon 1:
    // channel 0: x + 0.5; channel 1: 2 * (x - 1) / 2 = x - 1.
    const auto m = one_layer("BatchNormalization", {2, 3}, {{"axis", -2}, {"epsilon", 1.0}});
    const auto x = make({1, 2, 3}, {1, 2, 3, 1, 3, 5});
    expect_values(with_weights(m, x, {{1, 2}, {0.5, 0}, {0, 1}, {0, 3}}), {1, 2, 3}, {1.5, 2.5, 3.5, 0, 2, 4}, 1e-12);
}

TEST(ReferenceNorm, BatchNormalizationTakesWeightsInKerasOrderSkippingAbsentOnes) {
    // epsilon 0.5625: sqrt(1 + eps) = 1.25, sqrt(0 + eps) = 0.75; Identity of (3) is (1, 0, 0).
    // scale off: beta Ones, mean Zeros, variance (1, 0, 0): x / (1.25, 0.75, 0.75) + 1.
    const auto x = make({1, 1, 3}, {1.25, 0.75, 1.5});
    auto m = one_layer("BatchNormalization", {1, 3},
                       {{"scale", false}, {"epsilon", 0.5625}, {"beta_initializer", "Ones"}, {"moving_variance_initializer", "Identity"}});
    expect_values(run(m, x), {1, 1, 3}, {2, 2, 3});
    // center off: gamma (1, 0, 0), mean Ones, variance Ones: ((x - 1) / 1.25, 0, 0).
    m = one_layer("BatchNormalization", {1, 3},
                  {{"center", false}, {"epsilon", 0.5625}, {"gamma_initializer", "Identity"}, {"moving_mean_initializer", "Ones"}});
    expect_values(run(m, make({1, 1, 3}, {3.5, 5, 6})), {1, 1, 3}, {2, 0, 0});
    // neither: mean Ones, variance Zeros, epsilon 0.25: (x - 1) / 0.5.
    m = one_layer("BatchNormalization", {1, 3},
                  {{"center", false}, {"scale", false}, {"epsilon", 0.25}, {"moving_mean_initializer", "Ones"}, {"moving_variance_initializer", "Zeros"}});
    expect_values(run(m, make({1, 1, 3}, {1, 2, 3})), {1, 1, 3}, {0, 2, 4});
}

TEST(ReferenceNorm, BatchNormalizationRaisesEpsilonWhereKerasUsesTheFusedKernel) {
    // Mean 0, variance 0, epsilon 0: the fused kernel (4-D, channel axis 3, not float64) divides by
    // sqrt(1.001e-5); the plain formula divides by 0.
    const std::initializer_list<std::pair<std::string_view, memo::value>> zero{{"epsilon", 0.0}, {"moving_variance_initializer", "Zeros"}};
    const auto fused = one_layer("BatchNormalization", {1, 1, 1}, zero);
    expect_values(run(fused, make({1, 1, 1, 1}, {2})), {1, 1, 1, 1}, {2 / std::sqrt(1.001e-5)}, 1e-3);
    expect_values(run(fused, make({1, 1, 1, 1}, {2}), dtype::float64), {1, 1, 1, 1}, {2 / std::sqrt(1.001e-5)}, 1e-9);
    EXPECT_EQ(run(one_layer("BatchNormalization", {1, 1}, zero), make({1, 1, 1}, {2})).data.at(0), HUGE_VAL);
    EXPECT_EQ(run(one_layer("BatchNormalization", {1, 1, 1}, zero, dtype::float64), make({1, 1, 1, 1}, {2})).data.at(0), HUGE_VAL);
    EXPECT_EQ(
        run(one_layer("BatchNormalization", {1, 1, 1}, {{"axis", -2}, {"epsilon", 0.0}, {"moving_variance_initializer", "Zeros"}}), make({1, 1, 1, 1}, {2}))
            .data.at(0),
        HUGE_VAL);
}

TEST(ReferenceNorm, BatchNormalizationRoundsToBfloat16) {
    // gamma (1, 0, 0), beta Ones, mean (1, 0, 0), variance Ones, epsilon 0.5625: channel 0 is (x - 1) / 1.25 + 1,
    // the others 1. x = 3 gives 2.6, which bfloat16 (step 2^-6 in [2, 4)) rounds to 166 * 2^-6 = 2.59375.
    const auto m = one_layer("BatchNormalization", {1, 3},
                             {{"epsilon", 0.5625}, {"gamma_initializer", "Identity"}, {"beta_initializer", "Ones"}, {"moving_mean_initializer", "Identity"}},
                             dtype::bfloat16);
    expect_values(run(m, make({1, 1, 3}, {3, 7, 9})), {1, 1, 3}, {2.59375, 1, 1}, 0);
}

TEST(ReferenceNorm, LayerNormalizationOverLastAxis) {
    // epsilon 1/3. (1, 2, 3): mean 2, variance 2/3, var + eps = 1 -> (-1, 0, 1).
    // (4, 6, 8): mean 6, variance 8/3, var + eps = 3 -> (-2, 0, 2) / sqrt(3).
    const auto m = one_layer("LayerNormalization", {2, 3}, {{"epsilon", 1.0 / 3}});
    const double r = 2 / std::sqrt(3.0);
    expect_values(run(m, make({1, 2, 3}, {1, 2, 3, 4, 6, 8})), {1, 2, 3}, {-1, 0, 1, -r, 0, r});
}

TEST(ReferenceNorm, LayerNormalizationAppliesGammaAndBeta) {
    // gamma (1, 2, 3), beta (1, 0, -1): (-1, 0, 1) -> (0, 0, 2); a constant row normalises to 0 -> beta.
    const auto m = one_layer("LayerNormalization", {2, 3}, {{"epsilon", 1.0 / 3}});
    expect_values(with_weights(m, make({1, 2, 3}, {1, 2, 3, 2, 2, 2}), {{1, 2, 3}, {1, 0, -1}}), {1, 2, 3}, {0, 0, 2, 1, 0, -1}, 1e-12);
    // center off: the one weight is gamma, here Identity (1, 0, 0).
    const auto g = one_layer("LayerNormalization", {3}, {{"epsilon", 1.0 / 3}, {"center", false}, {"gamma_initializer", "Identity"}});
    expect_values(run(g, make({1, 3}, {1, 2, 3})), {1, 3}, {-1, 0, 0});
}

TEST(ReferenceNorm, LayerNormalizationOverSecondToLastAxis) {
    // axis -2 of (2, 3), epsilon 0.5625: columns (1, 3) and (2, 4) have variance 1 -> (-1, 1) / 1.25; (0, 0) -> 0.
    const auto m = one_layer("LayerNormalization", {2, 3}, {{"axis", -2}, {"epsilon", 0.5625}});
    expect_values(run(m, make({1, 2, 3}, {1, 2, 0, 3, 4, 0})), {1, 2, 3}, {-0.8, -0.8, 0, 0.8, 0.8, 0});
}

TEST(ReferenceNorm, LayerNormalizationRoundsToFloat16) {
    // 2 / sqrt(3) = 1.1547005 is 1182.4 steps of 2^-10 in float16: 1.154296875.
    const auto m = one_layer("LayerNormalization", {3}, {{"epsilon", 1.0 / 3}}, dtype::float16);
    expect_values(run(m, make({1, 3}, {4, 6, 8})), {1, 3}, {-1.154296875, 0, 1.154296875}, 0);
}

TEST(ReferenceNorm, LayerNormalizationInFloat64) {
    const auto m = one_layer("LayerNormalization", {3}, {{"epsilon", 1.0 / 3}}, dtype::float64);
    const double r = 2 / std::sqrt(3.0);
    expect_values(run(m, make({1, 3}, {4, 6, 8})), {1, 3}, {-r, 0, r}, 1e-15);
}

TEST(ReferenceNorm, RandomSingleLayerModelsRunWithInferredShapes) {
    // Finite where every denominator sqrt(variance + epsilon) is well away from 0.
    sweep_family(memo::family::norm, 77031, 20, 100, 2, [](const memo::model& m) {
        const int last = static_cast<int>(m.size()) - 1;
        double smallest = memo::as_real(m[last].param("epsilon"));
        if (m[last].layer->name == "BatchNormalization") {
            const auto ws = memo::weights_of(m, last);
            const auto& variance = ws.back().value.data;
            smallest += *std::min_element(variance.begin(), variance.end());
        }
        return smallest >= 1e-3;
    });
}

}  // namespace test_reference_norm_test
