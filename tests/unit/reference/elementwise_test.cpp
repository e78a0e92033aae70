// Reference kernels of the element-wise layers (Abs, Square, StopGradient, ScaleShift) against
// values worked out by hand, their rounding in each dtype and non-finite values, their shape rule,
// and the zero gate the metamorphic relations build from them.
#include <cmath>
#include <limits>

#include <memo/layers/cost.hpp>

#include "kernels.hpp"

namespace test_reference_elementwise_test {

namespace {

using namespace test::kernels;
using memo::dtype;
using memo::tensor;

constexpr double qnan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

// One 1x2x3 input shared by most tests.
const tensor mixed = make({1, 2, 3}, {-2, -0.5, 0, 0.5, 1, 3});

/// got equals want element by element: NaN where want is NaN, the same sign of zero elsewhere.
void expect_exact(const tensor& got, const std::vector<double>& want) {
    ASSERT_EQ(got.data.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got.data[i])) << "element " << i << " is " << got.data[i];
            continue;
        }
        EXPECT_EQ(got.data[i], want[i]) << "element " << i;
        EXPECT_EQ(std::signbit(got.data[i]), std::signbit(want[i])) << "element " << i << " has the wrong sign of zero";
    }
}

std::string describe(const memo::node& n) {
    std::string s(n.layer->name);
    for (std::size_t p = 0; p < n.params.size(); ++p) s += " " + std::string(n.layer->params[p].name) + "=" + memo::to_string(n.params[p]);
    return s;
}

const dtype all_dtypes[] = {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};

}  // namespace

TEST(ReferenceElementwise, RegisteredOutsideTheUniverseWithTheirParameters) {
    for (const char* cls : {"Abs", "Square", "StopGradient", "ScaleShift"}) {
        const auto* L = test::reg().find(cls);
        ASSERT_NE(L, nullptr) << cls;
        EXPECT_FALSE(L->in_universe) << cls;
        EXPECT_EQ(L->fam, memo::family::core) << cls;
        EXPECT_EQ(L->arity.min, 1) << cls;
        EXPECT_EQ(L->arity.max, 1) << cls;
        EXPECT_EQ(L->params.size(), std::string_view(cls) == "ScaleShift" ? 2u : 0u) << cls;
    }
    const auto& L = test::reg().at("ScaleShift");
    ASSERT_EQ(L.params.size(), 2u);
    EXPECT_EQ(L.params[0].name, "scale");
    EXPECT_EQ(L.params[1].name, "shift");
    for (const auto& p : L.params) {
        EXPECT_EQ(p.what, memo::role::mode) << p.name;
        EXPECT_EQ(p.dom.describe(), "real_in(-1000000.0, 1000000.0)") << p.name;
    }
    EXPECT_EQ(memo::as_real(L.params[0].fallback), 1.0);
    EXPECT_EQ(memo::as_real(L.params[1].fallback), 0.0);
}

TEST(ReferenceElementwise, OutputHasTheInputsShapeAndDtypeForRanks2To6) {
    for (const char* cls : {"Abs", "Square", "StopGradient", "ScaleShift"}) {
        const auto& L = test::reg().at(cls);
        EXPECT_FALSE(L.ranks.contains(1)) << cls;
        EXPECT_FALSE(L.ranks.contains(7)) << cls;
        for (int r = 2; r <= 6; ++r) EXPECT_TRUE(L.ranks.contains(r)) << cls << " rank " << r;
        EXPECT_EQ(*test::infer(cls, {7}), test::sample({7})) << cls;
        EXPECT_EQ(*test::infer(cls, {2, 3, 4, 5, 6}), test::sample({2, 3, 4, 5, 6})) << cls;
        for (dtype t : all_dtypes) {
            const auto m = one_layer(cls, {3, 1, 2}, {}, t);
            EXPECT_EQ(m.nodes.back().type, t) << cls;
            const auto y = run(m, make({2, 3, 1, 2}, std::vector<double>(12, 0.5)));
            EXPECT_EQ(y.dims, (std::vector<std::int64_t>{2, 3, 1, 2})) << cls;
            EXPECT_EQ(y.type, t) << cls;
        }
    }
}

TEST(ReferenceElementwise, AbsByHand) {
    for (dtype t : {dtype::float32, dtype::float64}) expect_exact(run(one_layer("Abs", {2, 3}, {}, t), mixed), {2, 0.5, 0, 0.5, 1, 3});
    // 1e-300 is below float32's range (it flushes to 0 there) but exact in float64.
    expect_exact(run(one_layer("Abs", {2}, {}, dtype::float64), make({1, 2}, {-1e-300, 1e300})), {1e-300, 1e300});
    expect_exact(run(one_layer("Abs", {1}, {}, dtype::float32), make({1, 1}, {-0.1})), {static_cast<double>(0.1f)});
}

TEST(ReferenceElementwise, AbsOfZeroNanAndInfinities) {
    // |-0| = +0; NaN stays NaN; both infinities become +inf.
    const auto x = make({1, 5}, {-0.0, 0.0, qnan, -inf, inf});
    for (dtype t : all_dtypes) expect_exact(run(one_layer("Abs", {5}, {}, t), x), {0.0, 0.0, qnan, inf, inf});
}

TEST(ReferenceElementwise, SquareByHand) {
    for (dtype t : {dtype::float32, dtype::float64}) expect_exact(run(one_layer("Square", {2, 3}, {}, t), mixed), {4, 0.25, 0, 0.25, 1, 9});
}

TEST(ReferenceElementwise, SquareRoundsToTheDtype) {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: exact in float64; in float32 the 2^-24 is half a unit and
    // ties to even, down to 1 + 2^-11.
    const double a = 1 + 0x1p-12;
    expect_exact(run(one_layer("Square", {1}, {}, dtype::float64), make({1, 1}, {a})), {1 + 0x1p-11 + 0x1p-24});
    expect_exact(run(one_layer("Square", {1}, {}, dtype::float32), make({1, 1}, {a})), {1 + 0x1p-11});
    // bfloat16 keeps 7 fraction bits (a unit of 2^-7 in [1, 2)): (1 + 3 * 2^-7)^2 = 1 + 6 * 2^-7 +
    // 9 * 2^-14 rounds down to 1.046875; (1 + 11 * 2^-7)^2 = 1 + 22 * 2^-7 + 121 * 2^-14 (0.945 of
    // a unit above 1 + 22 * 2^-7) rounds up to 1 + 23 * 2^-7 = 1.1796875.
    const auto bf = one_layer("Square", {2}, {}, dtype::bfloat16);
    expect_exact(run(bf, make({1, 2}, {1 + 3 * 0x1p-7, 1 + 11 * 0x1p-7})), {1.046875, 1.1796875});
    expect_exact(run(one_layer("Square", {2}, {}, dtype::float64), make({1, 2}, {1 + 3 * 0x1p-7, 1 + 11 * 0x1p-7})),
                 {1.046875 + 9 * 0x1p-14, 1.171875 + 121 * 0x1p-14});
    // Overflow: 300^2 = 90000 is past float16's largest value, 65504.
    expect_exact(run(one_layer("Square", {1}, {}, dtype::float16), make({1, 1}, {300})), {inf});
}

TEST(ReferenceElementwise, SquareOfZeroNanAndInfinities) {
    // (-0)^2 = +0; NaN stays NaN; both infinities square to +inf.
    const auto x = make({1, 5}, {-0.0, 0.0, qnan, -inf, inf});
    for (dtype t : all_dtypes) expect_exact(run(one_layer("Square", {5}, {}, t), x), {0.0, 0.0, qnan, inf, inf});
}

TEST(ReferenceElementwise, StopGradientCopiesEveryValue) {
    const auto x = make({1, 2, 4}, {-2, -0.5, 0.25, 3, -0.0, qnan, -inf, inf});
    for (dtype t : all_dtypes) {
        const auto y = run(one_layer("StopGradient", {2, 4}, {}, t), x);
        EXPECT_EQ(y.dims, x.dims);
        expect_exact(y, {-2, -0.5, 0.25, 3, -0.0, qnan, -inf, inf});
    }
    // The input rounded to the dtype (float32's 0.1), not the value given.
    expect_exact(run(one_layer("StopGradient", {1}, {}, dtype::float32), make({1, 1}, {0.1})), {static_cast<double>(0.1f)});
}

TEST(ReferenceElementwise, ScaleShiftByHand) {
    // 2.5 * x - 1 on (-2, -0.5, 0, 0.5, 1, 3).
    for (dtype t : {dtype::float32, dtype::float64})
        expect_exact(run(one_layer("ScaleShift", {2, 3}, {{"scale", 2.5}, {"shift", -1.0}}, t), mixed), {-6, -2.25, -1, 0.25, 1.5, 6.5});
    // Defaults: scale 1, shift 0, the identity.
    expect_exact(run(one_layer("ScaleShift", {2, 3}, {}), mixed), {-2, -0.5, 0, 0.5, 1, 3});
    // Scale 0 zeroes finite values and keeps the sign rules: -2 * 0 = -0, and -0 + 0 = +0.
    expect_exact(run(one_layer("ScaleShift", {2}, {{"scale", 0.0}}, dtype::float64), make({1, 2}, {-2, 5})), {0.0, 0.0});
}

TEST(ReferenceElementwise, ScaleShiftRoundsTheProductBeforeTheShift) {
    // float32: (1 + 2^-12) * (1 + 2^-12) = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to 1 + 2^-11
    // before the shift -1, which leaves 2^-11. Unrounded it would be 2^-11 + 2^-24, which float32
    // holds exactly; float64 gives that.
    const double a = 1 + 0x1p-12;
    const std::initializer_list<std::pair<std::string_view, memo::value>> f32_params = {{"scale", a}, {"shift", -1.0}};
    expect_exact(run(one_layer("ScaleShift", {1}, f32_params, dtype::float32), make({1, 1}, {a})), {0x1p-11});
    expect_exact(run(one_layer("ScaleShift", {1}, f32_params, dtype::float64), make({1, 1}, {a})), {0x1p-11 + 0x1p-24});
    // bfloat16: (1 + 3 * 2^-7)^2 = 1 + 6 * 2^-7 + 9 * 2^-14 rounds to 1 + 6 * 2^-7, and minus 1 that
    // is 6 * 2^-7 = 0.046875 exactly. Unrounded, 0.04742431640625 would round to 194 * 2^-12 =
    // 0.04736328125 (a unit of 2^-12 in [2^-5, 2^-4)).
    const double b = 1 + 3 * 0x1p-7;
    expect_exact(run(one_layer("ScaleShift", {1}, {{"scale", b}, {"shift", -1.0}}, dtype::bfloat16), make({1, 1}, {b})), {0.046875});
    // The sum is rounded too: 1 + 3 * 2^-9 is 0.75 of a unit above 1, and rounds up to 1 + 2^-7.
    expect_exact(run(one_layer("ScaleShift", {1}, {{"shift", 3 * 0x1p-9}}, dtype::bfloat16), make({1, 1}, {1})), {1 + 0x1p-7});
    expect_exact(run(one_layer("ScaleShift", {1}, {{"shift", 3 * 0x1p-9}}, dtype::float32), make({1, 1}, {1})), {1 + 3 * 0x1p-9});
}

TEST(ReferenceElementwise, ScaleShiftOfZeroNanAndInfinities) {
    // scale -1, shift 0.5: -0 -> 0.5, NaN -> NaN, -inf -> inf, inf -> -inf. Scale 0 makes
    // infinities NaN (inf * 0), as IEEE and every library do.
    const auto x = make({1, 4}, {-0.0, qnan, -inf, inf});
    for (dtype t : all_dtypes) {
        expect_exact(run(one_layer("ScaleShift", {4}, {{"scale", -1.0}, {"shift", 0.5}}, t), x), {0.5, qnan, inf, -inf});
        expect_exact(run(one_layer("ScaleShift", {4}, {{"scale", 0.0}, {"shift", 1.0}}, t), x), {1, qnan, qnan, qnan});
    }
    // Overflow in float16: 1000 * 100 = 1e5 is past 65504, and the shift cannot bring it back.
    expect_exact(run(one_layer("ScaleShift", {1}, {{"scale", 1000.0}, {"shift", -90000.0}}, dtype::float16), make({1, 1}, {100})), {inf});
}

// relu(ScaleShift(Square(a - b), scale=-1, shift=-1e-3)) is -(a - b)^2 - 1e-3 < 0 before the relu:
// exactly 0 in every dtype, whatever the finite inputs, equal ones included.
TEST(ReferenceElementwise, ZeroGateIsExactlyZero) {
    for (dtype t : all_dtypes) {
        memo::builder b(test::reg());
        const int x = b.input({3, 4}, t), y = b.input({3, 4}, t);
        const int d = b.add("Square", {b.add("Subtract", {x, y})});
        b.add("ReLU", {b.add("ScaleShift", {d}, {{"scale", -1.0}, {"shift", -1e-3}})});
        auto m = b.finish();
        for (std::uint64_t k = 0; k < 5; ++k) {
            m.seed = k;
            auto in = memo::make_inputs(m, {2, -100.0, 100.0});
            if (k == 0) in[1] = in[0];
            const auto out = run(m, in);
            ASSERT_EQ(out.dims, (std::vector<std::int64_t>{2, 3, 4}));
            for (double v : out.data) {
                EXPECT_EQ(v, 0.0) << name_of(t);
                EXPECT_FALSE(std::signbit(v)) << name_of(t);
            }
        }
    }
}

TEST(ReferenceElementwise, CostOneMultiplyAddPerElement) {
    for (const char* cls : {"Abs", "Square", "StopGradient", "ScaleShift"}) EXPECT_EQ(memo::count_flops(one_layer(cls, {3, 4, 5}, {})), 60) << cls;
}

TEST(ReferenceElementwise, KerasJsonRoundTrips) {
    memo::builder b(test::reg());
    const int x = b.input({4, 2}, dtype::bfloat16);
    b.add("ScaleShift", {b.add("StopGradient", {b.add("Square", {b.add("Abs", {x})})})}, {{"scale", -2.5}, {"shift", 1e-3}});
    const auto m = b.finish();
    const auto back = memo::io::keras_from_json(memo::io::keras_to_json(m), test::reg(), "round trip");
    EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m));
    ASSERT_EQ(back.size(), m.size());
    EXPECT_EQ(memo::as_real(back.nodes.back().param("scale")), -2.5);
    EXPECT_EQ(memo::as_real(back.nodes.back().param("shift")), 1e-3);
    EXPECT_EQ(back.nodes.back().type, dtype::bfloat16);
}

// Random single-layer models of each class, in its dtype and in float64, against the formula
// applied to the inputs as the interpreter rounds them: each operation in the accumulator (float
// for the 16-bit dtypes, double otherwise), rounded to the dtype. Scales and shifts up to 1e6
// overflow float16 to infinities, which the formula gives too.
TEST(ReferenceElementwise, RandomModelsFollowTheFormula) {
    memo::rng r(4242);
    memo::reference::interpreter own, f64(dtype::float64);
    int ran = 0;
    for (const char* cls : {"Abs", "Square", "StopGradient", "ScaleShift"}) {
        const auto& L = test::reg().at(cls);
        for (int k = 0; k < 20; ++k) {
            const auto m = test::random_single_layer_model(L, r);
            ASSERT_TRUE(m) << cls;
            const auto& n = m->nodes.back();
            const auto in = memo::make_inputs(*m, {2, -4.0, 4.0});
            for (auto* interp : {&own, &f64}) {
                const auto res = interp->run(*m, in);
                ASSERT_TRUE(res.ok()) << cls << ": " << res.message;
                const tensor& y = res.outputs.at(0);
                const dtype t = y.type;
                ASSERT_EQ(y.dims, memo::concrete(n.out, 2)) << cls;
                const bool narrow = t == dtype::float16 || t == dtype::bfloat16;
                // a * b and a + b in the accumulator, rounded to t.
                auto mul = [&](double a, double b) { return memo::round_to(t, narrow ? double(float(a) * float(b)) : a * b); };
                auto add = [&](double a, double b) { return memo::round_to(t, narrow ? double(float(a) + float(b)) : a + b); };
                for (std::int64_t i = 0; i < y.size(); ++i) {
                    const double v = memo::round_to(t, in[0][i]);
                    double want = v;
                    if (L.name == "Abs") want = std::fabs(v);
                    else if (L.name == "Square") want = mul(v, v);
                    else if (L.name == "ScaleShift") want = add(mul(v, memo::as_real(n.param("scale"))), memo::as_real(n.param("shift")));
                    EXPECT_EQ(y[i], want) << describe(n) << " in " << name_of(t) << ", element " << i << " = " << v;
                }
                ++ran;
            }
        }
    }
    EXPECT_EQ(ran, 4 * 20 * 2);
}

}  // namespace test_reference_elementwise_test
