// Reference kernels of the merge layers against values worked out by hand, and a sweep of random
// single-layer models of every merge class.
#include <cmath>
#include <limits>

#include "kernels.hpp"

namespace test_reference_merge_test {

namespace {

using namespace test::kernels;
using memo::dtype;
using memo::tensor;

/// A merge of class `cls` over inputs of these per-sample shapes.
memo::model merge_of(std::string_view cls, std::vector<std::vector<std::int64_t>> samples,
                     std::initializer_list<std::pair<std::string_view, memo::value>> params = {}, dtype type = dtype::float32) {
    memo::builder b(test::reg());
    std::vector<int> ins;
    for (const auto& s : samples) {
        memo::ints d;
        for (auto x : s) d.push(x);
        ins.push_back(b.add("InputLayer", {}, {{"shape", d}, {"dtype", std::string(memo::name_of(type))}}));
    }
    b.add(cls, ins, params);
    return b.finish();
}

// Three 1x2 inputs shared by the element-wise tests.
const std::vector<tensor> three{make({1, 2}, {1, -2}), make({1, 2}, {3, 4}), make({1, 2}, {5, 10})};

}  // namespace

TEST(ReferenceMerge, ElementwiseMergesOfThreeInputs) {
    const std::vector<std::vector<std::int64_t>> shapes{{2}, {2}, {2}};
    expect_values(run(merge_of("Add", shapes), three), {1, 2}, {9, 12});
    expect_values(run(merge_of("Average", shapes), three), {1, 2}, {3, 4});  // (9, 12) / 3
    expect_values(run(merge_of("Multiply", shapes), three), {1, 2}, {15, -80});
    expect_values(run(merge_of("Maximum", shapes), three), {1, 2}, {5, 10});
    expect_values(run(merge_of("Minimum", shapes), three), {1, 2}, {1, -2});
}

TEST(ReferenceMerge, SubtractIsFirstMinusSecond) {
    const std::vector<tensor> in{make({1, 2, 3}, {1, 2, 3, 4, 5, 6}), make({1, 2, 3}, {6, 5, 4, 3, 2, 1})};
    expect_values(run(merge_of("Subtract", {{2, 3}, {2, 3}}), in), {1, 2, 3}, {-5, -3, -1, 1, 3, 5});
}

TEST(ReferenceMerge, ConcatenateAlongLastAndMiddleAxes) {
    // (1, 2, 2) [[1, 2], [3, 4]] and (1, 2, 1) [[5], [6]] on the last axis: [[1, 2, 5], [3, 4, 6]].
    expect_values(run(merge_of("Concatenate", {{2, 2}, {2, 1}}), {make({1, 2, 2}, {1, 2, 3, 4}), make({1, 2, 1}, {5, 6})}), {1, 2, 3}, {1, 2, 5, 3, 4, 6});
    // (1, 1, 2) [[1, 2]] and (1, 2, 2) [[3, 4], [5, 6]] on axis -2: rows one after another.
    expect_values(run(merge_of("Concatenate", {{1, 2}, {2, 2}}, {{"axis", -2}}), {make({1, 1, 2}, {1, 2}), make({1, 2, 2}, {3, 4, 5, 6})}), {1, 3, 2},
                  {1, 2, 3, 4, 5, 6});
    // Two samples: each sample's blocks stay together.
    expect_values(run(merge_of("Concatenate", {{1}, {2}}), {make({2, 1}, {1, 2}), make({2, 2}, {3, 4, 5, 6})}), {2, 3}, {1, 3, 4, 2, 5, 6});
}

TEST(ReferenceMerge, DotOfVectorsAndNormalizedVectors) {
    // (1, 2, 3) . (4, 5, 6) = 32; normalized (3, 4) / 5 . (4, 3) / 5 = 24 / 25.
    expect_values(run(merge_of("Dot", {{3}, {3}}), {make({1, 3}, {1, 2, 3}), make({1, 3}, {4, 5, 6})}), {1, 1}, {32});
    expect_values(run(merge_of("Dot", {{2}, {2}}, {{"normalize", true}}), {make({1, 2}, {3, 4}), make({1, 2}, {4, 3})}), {1, 1}, {0.96});
}

TEST(ReferenceMerge, DotOfSequencesContractsTheLastAxes) {
    // a = [[1, 0], [0, 2]], b = [[1, 1], [2, 0], [0, 3]]: out[i][j] = a[i] . b[j] = [[1, 2, 0], [2, 0, 6]].
    const std::vector<tensor> in{make({1, 2, 2}, {1, 0, 0, 2}), make({1, 3, 2}, {1, 1, 2, 0, 0, 3})};
    expect_values(run(merge_of("Dot", {{2, 2}, {3, 2}}), in), {1, 2, 3}, {1, 2, 0, 2, 0, 6});
    // normalized rows: a -> [[1, 0], [0, 1]], b -> [[1, 1] / sqrt 2, [1, 0], [0, 1]].
    const double h = 1 / std::sqrt(2.0);
    expect_values(run(merge_of("Dot", {{2, 2}, {3, 2}}, {{"normalize", true}}), in), {1, 2, 3}, {h, 1, 0, h, 0, 1});
}

TEST(ReferenceMerge, MaximumAndMinimumPropagateNan) {
    const double nan = std::nan("");
    const std::vector<tensor> in{make({1, 2}, {nan, 1}), make({1, 2}, {1, nan})};
    for (auto cls : {"Maximum", "Minimum"}) {
        const auto got = run(merge_of(cls, {{2}, {2}}), in);
        ASSERT_EQ(got.data.size(), 2u) << cls;
        EXPECT_TRUE(std::isnan(got.data[0]) && std::isnan(got.data[1])) << cls << ": " << got.data[0] << ", " << got.data[1];
    }
}

TEST(ReferenceMerge, HalfTypesRoundTheResultOnce) {
    // float16 has step 1 in [1024, 2048): 1024 + 0.5 ties to the even 1024.
    expect_values(run(merge_of("Add", {{1}, {1}}, {}, dtype::float16), {make({1, 1}, {1024}), make({1, 1}, {0.5})}), {1, 1}, {1024}, 0);
    // bfloat16 has step 2^-6 in [2, 4): 3 * 1.0078125 = 3.0234375 is 193.5 steps, tying to the even 194: 3.03125.
    expect_values(run(merge_of("Multiply", {{1}, {1}}, {}, dtype::bfloat16), {make({1, 1}, {3}), make({1, 1}, {1.0078125})}), {1, 1}, {3.03125}, 0);
}

TEST(ReferenceMerge, Float64KeepsWhatFloat32Loses) {
    // (1 + 2^-40) - 1 = 2^-40 in float64; float32 rounds 1 + 2^-40 to 1 first.
    const auto m = merge_of("Subtract", {{1}, {1}}, {}, dtype::float64);
    const std::vector<tensor> in{make({1, 1}, {1 + std::ldexp(1.0, -40)}), make({1, 1}, {1})};
    expect_values(run(m, in), {1, 1}, {std::ldexp(1.0, -40)}, 0);
    expect_values(run(m, in, dtype::float32), {1, 1}, {0}, 0);
}

TEST(ReferenceMerge, NormalizedDotSquaresAndSumsInTheDtype) {
    // 1e-4 squared is 1e-8, below float16's smallest step (2^-24): the sum of squares is 0 there,
    // the epsilon 1e-12 is 0 too, and 1e-4 / 0 is inf, as the libraries compute it. float32 keeps both.
    const std::vector<tensor> in{make({1, 1}, {1e-4}), make({1, 1}, {1e-4})};
    const auto half = run(merge_of("Dot", {{1}, {1}}, {{"normalize", true}}, dtype::float16), in);
    ASSERT_EQ(half.data.size(), 1u);
    EXPECT_FALSE(std::isfinite(half.data[0])) << half.data[0];
    expect_values(run(merge_of("Dot", {{1}, {1}}, {{"normalize", true}}), in), {1, 1}, {1});
    // 300 squared overflows float16 (65504): the norm is inf, the unit vector 0.
    expect_values(run(merge_of("Dot", {{1}, {1}}, {{"normalize", true}}, dtype::float16), {make({1, 1}, {300}), make({1, 1}, {300})}), {1, 1}, {0}, 0);
}

TEST(ReferenceMerge, NormalizedDotNotesItsDivisorsInAnEveryNodeRun) {
    // The oracle's range rule reads them: rows of [3e-3, 4e-3] and [0.3, 0.4] have sums of squares
    // 2.5e-5 and 0.25; in float64 both are noted as they are (float16 would keep 2 digits of the first).
    const auto m = merge_of("Dot", {{2, 2}, {2, 2}}, {{"normalize", true}}, dtype::float16);
    const tensor x = make({1, 2, 2}, {3e-3, 4e-3, 0.3, 0.4});
    memo::reference::interpreter f64(dtype::float64);
    const auto r = f64.run(m, std::vector<tensor>{x, x}, {true, {}, dtype::float64});
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.node_inner.size(), 3u);
    EXPECT_EQ(r.node_inner[0].least_divisor, std::numeric_limits<double>::infinity()) << "an Input divides by nothing";
    EXPECT_NEAR(r.node_inner[2].least_divisor, 2.5e-5, 1e-12);
    EXPECT_NEAR(r.node_inner[2].largest, 0.25, 1e-12) << "the largest divisor, which float16 may overflow";
    // Without normalisation the Dot divides by nothing.
    const auto plain = f64.run(merge_of("Dot", {{2, 2}, {2, 2}}, {}, dtype::float16), std::vector<tensor>{x, x}, {true, {}, dtype::float64});
    ASSERT_TRUE(plain.ok()) << plain.message;
    EXPECT_EQ(plain.node_inner.at(2).least_divisor, std::numeric_limits<double>::infinity());
}

TEST(ReferenceMerge, RandomSingleLayerModelsRunWithInferredShapes) { sweep_family(memo::family::merge, 31337, 15, 100, 8); }

}  // namespace test_reference_merge_test
