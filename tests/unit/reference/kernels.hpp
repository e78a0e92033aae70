#pragma once
// What the reference-kernel tests share: tensors written out by hand, one-layer models, a run of
// the interpreter, an element-wise comparison, and the sweep of random single-layer models of a
// family.
#include <functional>
#include <optional>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/tensors/inputs.hpp>

#include "../support.hpp"

namespace test::kernels {

using memo::dtype;
using memo::tensor;

/// A tensor of these dimensions (batch included) and values.
inline tensor make(std::vector<std::int64_t> dims, std::vector<double> values) {
    tensor t(std::move(dims));
    EXPECT_EQ(static_cast<std::size_t>(t.size()), values.size());
    t.data = std::move(values);
    return t;
}

/// One layer of class `cls` on an input of per-sample shape `sample`.
inline memo::model one_layer(std::string_view cls, std::initializer_list<std::int64_t> sample,
                             std::initializer_list<std::pair<std::string_view, memo::value>> params, dtype type = dtype::float32) {
    memo::builder b(test::reg());
    b.add(cls, {b.input(sample, type)}, params);
    return b.finish();
}

/// The model's output on `in`, computed in `precision` (the model's own dtypes when none).
inline tensor run(const memo::model& m, const std::vector<tensor>& in, std::optional<dtype> precision = std::nullopt) {
    memo::reference::interpreter interp(precision);
    auto r = interp.run(m, in);
    EXPECT_TRUE(r.ok()) << r.message;
    return r.ok() ? r.outputs.at(0) : tensor{};
}
inline tensor run(const memo::model& m, const tensor& x, std::optional<dtype> precision = std::nullopt) { return run(m, std::vector<tensor>{x}, precision); }

inline void expect_values(const tensor& got, const std::vector<std::int64_t>& dims, const std::vector<double>& want, double tol = 1e-6) {
    ASSERT_EQ(got.dims, dims);
    ASSERT_EQ(got.data.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data[i], want[i], tol) << "element " << i;
}

/// Random single-layer models of every class of family `f` (`per_class` of them, within
/// `attempts` draws, outputs of at most 2^18 elements) run in the model's dtype and in float64
/// with inputs in [-2, 2): each succeeds with the inferred dims, and with finite outputs where
/// `finite_expected(model)` says so. `classes` is how many classes the family has.
inline void sweep_family(
    memo::family f, std::uint64_t seed, int per_class, int attempts, int classes,
    const std::function<bool(const memo::model&)>& finite_expected = [](const memo::model&) { return true; }) {
    memo::rng r(seed);
    memo::reference::interpreter model_dtype, ground_truth(dtype::float64);
    int seen = 0;
    for (const auto& L : test::reg()) {
        if (L.fam != f) continue;
        ++seen;
        int ran = 0;
        for (int attempt = 0; attempt < attempts && ran < per_class; ++attempt) {
            const auto m = test::random_single_layer_model(L, r);
            ASSERT_TRUE(m) << L.name;
            const auto want = memo::concrete(m->nodes.back().out, 2);
            if (tensor::count(want) > (1 << 18)) continue;  // UpSampling3D by up to 64^3, say
            const bool finite = finite_expected(*m);
            const auto in = memo::make_inputs(*m, {2, -2.0, 2.0});
            for (auto* interp : {&model_dtype, &ground_truth}) {
                const auto res = interp->run(*m, in);
                ASSERT_TRUE(res.ok()) << L.name << ": " << res.message;
                EXPECT_EQ(res.outputs.at(0).dims, want) << L.name;
                if (finite) {
                    EXPECT_FALSE(res.outputs.at(0).has_non_finite()) << L.name;
                }
            }
            ++ran;
        }
        EXPECT_EQ(ran, per_class) << L.name;
    }
    EXPECT_EQ(seen, classes);
}

}  // namespace test::kernels
