// Reference kernels of the reshaping layers against values worked out by hand, in both data
// formats, and a sweep of random single-layer models of every reshaping class.
#include "kernels.hpp"

namespace test_reference_reshape_test {

namespace {

using namespace test::kernels;
using memo::dtype;
using memo::ints;
using memo::tensor;

/// 1, 2, ..., n in a tensor of these dimensions.
tensor counting(std::vector<std::int64_t> dims) {
    tensor t(std::move(dims));
    for (std::int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i + 1);
    return t;
}

}  // namespace

TEST(ReferenceReshape, FlattenKeepsRowMajorOrderForChannelsLast) {
    expect_values(run(one_layer("Flatten", {2, 3}, {}), counting({1, 2, 3})), {1, 6}, {1, 2, 3, 4, 5, 6});
}

TEST(ReferenceReshape, FlattenMovesChannelsLastFirstForChannelsFirst) {
    // (1, 2 channels, 3 steps) [[1, 2, 3], [4, 5, 6]] is transposed to (3, 2) before flattening.
    expect_values(run(one_layer("Flatten", {2, 3}, {{"data_format", "channels_first"}}), counting({1, 2, 3})), {1, 6}, {1, 4, 2, 5, 3, 6});
    // (1, 2 channels, 2, 2): channels last gives (1, 5), (2, 6), (3, 7), (4, 8).
    expect_values(run(one_layer("Flatten", {2, 2, 2}, {{"data_format", "channels_first"}}), counting({1, 2, 2, 2})), {1, 8}, {1, 5, 2, 6, 3, 7, 4, 8});
    // Rank 2 has nothing to move.
    expect_values(run(one_layer("Flatten", {3}, {{"data_format", "channels_first"}}), counting({1, 3})), {1, 3}, {1, 2, 3});
}

TEST(ReferenceReshape, RepeatVectorRepeatsEachSample) {
    expect_values(run(one_layer("RepeatVector", {3}, {{"n", 2}}), counting({2, 3})), {2, 2, 3}, {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
}

TEST(ReferenceReshape, PermuteSwapsOrKeepsTheSampleAxes) {
    // (2, 1) transposes [[1, 2, 3], [4, 5, 6]]; (1, 2) keeps it.
    expect_values(run(one_layer("Permute", {2, 3}, {{"dims", ints{2, 1}}}), counting({1, 2, 3})), {1, 3, 2}, {1, 4, 2, 5, 3, 6});
    expect_values(run(one_layer("Permute", {2, 3}, {{"dims", ints{1, 2}}}), counting({1, 2, 3})), {1, 2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReferenceReshape, Cropping1DDropsStepsAtBothEnds) {
    // Steps [[1, 2], [3, 4], [5, 6], [7, 8]] cropped (1, 2): [[3, 4]].
    expect_values(run(one_layer("Cropping1D", {4, 2}, {{"cropping", ints{1, 2}}}), counting({1, 4, 2})), {1, 1, 2}, {3, 4});
}

TEST(ReferenceReshape, Cropping2DInBothDataFormats) {
    // 3x3 image 1..9 cropped rows (1, 0), columns (0, 1): rows 1-2, columns 0-1 -> 4, 5, 7, 8.
    const ints crop{1, 0, 0, 1};
    expect_values(run(one_layer("Cropping2D", {3, 3, 1}, {{"cropping", crop}}), counting({1, 3, 3, 1})), {1, 2, 2, 1}, {4, 5, 7, 8});
    // channels_first (2 channels of 2x2: 1..4 and 5..8): keep row 1, column 0 of each -> 3, 7.
    expect_values(run(one_layer("Cropping2D", {2, 2, 2}, {{"cropping", crop}, {"data_format", "channels_first"}}), counting({1, 2, 2, 2})), {1, 2, 1, 1},
                  {3, 7});
}

TEST(ReferenceReshape, Cropping3DKeepsTheWindow) {
    // 2x2x2 cube 1..8, crop depth (1, 0), height (0, 1), width (1, 0): element (1, 0, 1) = 4 + 1 + 1 = 6.
    expect_values(run(one_layer("Cropping3D", {2, 2, 2, 1}, {{"cropping", ints{1, 0, 0, 1, 1, 0}}}), counting({1, 2, 2, 2, 1})), {1, 1, 1, 1, 1}, {6});
}

TEST(ReferenceReshape, ZeroPadding1DAddsZeroSteps) {
    expect_values(run(one_layer("ZeroPadding1D", {2, 1}, {{"padding", ints{1, 2}}}), make({1, 2, 1}, {5, 6})), {1, 5, 1}, {0, 5, 6, 0, 0});
}

TEST(ReferenceReshape, ZeroPadding2DInBothDataFormats) {
    // One pixel (a, b) = (5, 6) padded rows (1, 0), columns (0, 1): it lands at row 1, column 0.
    const ints pad{1, 0, 0, 1};
    expect_values(run(one_layer("ZeroPadding2D", {1, 1, 2}, {{"padding", pad}}), make({1, 1, 1, 2}, {5, 6})), {1, 2, 2, 2}, {0, 0, 0, 0, 5, 6, 0, 0});
    expect_values(run(one_layer("ZeroPadding2D", {2, 1, 1}, {{"padding", pad}, {"data_format", "channels_first"}}), make({1, 2, 1, 1}, {5, 6})), {1, 2, 2, 2},
                  {0, 0, 5, 0, 0, 0, 6, 0});
}

TEST(ReferenceReshape, ZeroPadding3DPlacesTheInput) {
    // One voxel padded depth (0, 1), height (1, 0): a 2x2x1 block with it at depth 0, height 1.
    expect_values(run(one_layer("ZeroPadding3D", {1, 1, 1, 1}, {{"padding", ints{0, 1, 1, 0, 0, 0}}}), make({1, 1, 1, 1, 1}, {7})), {1, 2, 2, 1, 1},
                  {0, 7, 0, 0});
}

TEST(ReferenceReshape, UpSampling1DRepeatsSteps) {
    expect_values(run(one_layer("UpSampling1D", {2, 2}, {{"size", 2}}), counting({1, 2, 2})), {1, 4, 2}, {1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(ReferenceReshape, UpSampling2DNearestInBothDataFormats) {
    // Rows doubled: [[1, 2], [3, 4]] -> [[1, 2], [1, 2], [3, 4], [3, 4]].
    expect_values(run(one_layer("UpSampling2D", {2, 2, 1}, {{"size", ints{2, 1}}}), counting({1, 2, 2, 1})), {1, 4, 2, 1}, {1, 2, 1, 2, 3, 4, 3, 4});
    expect_values(run(one_layer("UpSampling2D", {1, 2, 2}, {{"size", ints{2, 1}}, {"data_format", "channels_first"}}), counting({1, 1, 2, 2})), {1, 1, 4, 2},
                  {1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(ReferenceReshape, UpSampling2DBilinearUsesHalfPixelCenters) {
    // [[0, 4], [8, 12]] = 8 * row + 4 * column. Scale 2: output i samples (i + 0.5) / 2 - 0.5, clamped to
    // [0, 1]: 0, 0.25, 0.75, 1. So out[i][j] = 8 * c[i] + 4 * c[j] with c = (0, 0.25, 0.75, 1).
    const auto m = one_layer("UpSampling2D", {2, 2, 1}, {{"size", ints{2, 2}}, {"interpolation", "bilinear"}});
    expect_values(run(m, make({1, 2, 2, 1}, {0, 4, 8, 12})), {1, 4, 4, 1}, {0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12});
    // Scale 3 on one row (0, 3), channels_first: columns sample -1/3, 0, 1/3, 2/3, 1, 4/3 -> 0, 0, 1, 2, 3, 3.
    const auto cf = one_layer("UpSampling2D", {1, 1, 2}, {{"size", ints{1, 3}}, {"interpolation", "bilinear"}, {"data_format", "channels_first"}});
    expect_values(run(cf, make({1, 1, 1, 2}, {0, 3})), {1, 1, 1, 6}, {0, 0, 1, 2, 3, 3});
}

TEST(ReferenceReshape, UpSampling3DRepeatsEveryAxis) {
    // Depth doubled and width doubled on a 1x1x2 volume (1, 2): each depth slice is (1, 1, 2, 2).
    expect_values(run(one_layer("UpSampling3D", {1, 1, 2, 1}, {{"size", ints{2, 1, 2}}}), counting({1, 1, 1, 2, 1})), {1, 2, 1, 4, 1},
                  {1, 1, 2, 2, 1, 1, 2, 2});
    expect_values(run(one_layer("UpSampling3D", {1, 1, 1, 2}, {{"size", ints{2, 1, 2}}, {"data_format", "channels_first"}}), counting({1, 1, 1, 1, 2})),
                  {1, 1, 2, 1, 4}, {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(ReferenceReshape, BilinearRoundsToFloat16AndIsExactInFloat64) {
    // Thirds of (0, 1): 1/3 is 1365 * 2^-12 = 0.333251953125 and 2/3 is 1365 * 2^-11 = 0.66650390625 in float16.
    const auto m = one_layer("UpSampling2D", {1, 2, 1}, {{"size", ints{1, 3}}, {"interpolation", "bilinear"}}, dtype::float16);
    const auto x = make({1, 1, 2, 1}, {0, 1});
    expect_values(run(m, x), {1, 1, 6, 1}, {0, 0, 0.333251953125, 0.66650390625, 1, 1}, 0);
    expect_values(run(m, x, dtype::float64), {1, 1, 6, 1}, {0, 0, 1.0 / 3, 2.0 / 3, 1, 1}, 1e-15);
}

TEST(ReferenceReshape, RandomSingleLayerModelsRunWithInferredShapes) { sweep_family(memo::family::reshape, 5150, 12, 200, 12); }

}  // namespace test_reference_reshape_test
