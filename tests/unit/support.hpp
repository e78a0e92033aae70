#pragma once
// Helpers shared by the unit tests.
#include <gtest/gtest.h>

#include <memo/all.hpp>
#include <memo/backends/python.hpp>

namespace test {

inline const memo::registry& reg() { return memo::default_registry(); }

#ifdef MEMO_SOURCE_DIR
/// The Python the Python workers run under: $MEMO_PYTHON, else the checkout's .venv/.
inline std::string python() { return memo::python::interpreter(MEMO_SOURCE_DIR "/.venv/bin/python"); }
#endif

/// The output shape of one layer of class `cls` on an input of per-sample shape `in`.
inline memo::expected<memo::shape> infer(std::string_view cls, std::initializer_list<std::int64_t> in,
                                         std::initializer_list<std::pair<std::string_view, memo::value>> params = {}) {
    const auto& L = reg().at(cls);
    memo::node n = memo::make_node(L);
    for (const auto& [k, v] : params) n.set(k, v);
    memo::shape s;
    s.push(memo::shape::unknown);
    for (auto d : in) s.push(d);
    const memo::shape ins[1] = {s};
    return L.infer(memo::inputs(ins), n.params);
}

/// A per-sample shape with unknown batch: sample({26, 26, 6}) == (None, 26, 26, 6).
inline memo::shape sample(std::initializer_list<std::int64_t> dims) {
    memo::shape s;
    s.push(memo::shape::unknown);
    for (auto d : dims) s.push(d);
    return s;
}

/// A random valid single-layer model for every non-input class: draws input shapes and parameter
/// values until inference succeeds (at most `tries` times); nullopt when it never does.
inline std::optional<memo::model> random_single_layer_model(const memo::layer_def& L, memo::rng& r, int tries = 200) {
    for (int t = 0; t < tries; ++t) {
        memo::builder b(reg());
        const int rank = [&] {
            int k = 0, pick = static_cast<int>(r.index(static_cast<std::size_t>(L.ranks.count())));
            int out = 0;
            L.ranks.for_each([&](int rr) {
                if (k++ == pick) out = rr;
            });
            return out;
        }();
        memo::ints dims;
        for (int d = 1; d < rank; ++d) dims.push(r.uniform(1, 12));
        const char* dt = r.chance(0.7) ? "float32" : r.chance(0.5) ? "float64" : "float16";
        std::vector<int> ins;
        const int k = std::max(1, L.arity.min);
        try {
            for (int i = 0; i < k; ++i) ins.push_back(b.add("InputLayer", {}, {{"shape", dims}, {"dtype", dt}}));
            memo::model m = b.finish();
            memo::node n = memo::make_node(L, "under_test");
            for (std::size_t p = 0; p < L.params.size(); ++p)
                if (L.params[p].dom.categorical() || !std::holds_alternative<memo::int_list>(L.params[p].dom.d)) n.params[p] = L.params[p].dom.init(r);
            n.inputs = ins;
            m.nodes.push_back(n);
            m.outputs = {static_cast<int>(m.nodes.size() - 1)};
            m.seed = r();
            if (memo::infer_shapes(m)) return m;
        } catch (const memo::error&) {}
    }
    return std::nullopt;
}

/// A random single-layer model of class L; the adapters whose lists random_single_layer_model
/// leaves empty (Reshape, CustomPadLayer, CustomCropLayer) get amounts that fit the drawn input.
inline std::optional<memo::model> random_layer_model(const memo::layer_def& L, memo::rng& r) {
    const bool listed = L.name == "Reshape" || L.name == "CustomPadLayer" || L.name == "CustomCropLayer";
    if (!listed) return random_single_layer_model(L, r);
    memo::builder b(reg());
    memo::ints dims;
    const int rank = static_cast<int>(r.uniform(2, 5));
    for (int d = 1; d < rank; ++d) dims.push(r.uniform(1, 6));
    const int x = b.add("InputLayer", {}, {{"shape", dims}, {"dtype", r.chance(0.5) ? "float32" : "float64"}});
    memo::ints amounts;
    if (L.name == "Reshape") {
        for (int d = dims.size() - 1; d >= 0; --d) amounts.push(dims[d]);
        b.add("Reshape", {x}, {{"target_shape", amounts}});
    } else if (L.name == "CustomPadLayer") {
        for (int d = 0; d < 2 * dims.size(); ++d) amounts.push(r.uniform(0, 2));
        b.add("CustomPadLayer", {x}, {{"padding", amounts}, {"constant_values", r.uniform_real(-2, 2)}});
    } else {
        for (int d = 0; d < dims.size(); ++d) {
            const auto before = r.uniform(0, (dims[d] - 1) / 2);
            amounts.push(before);
            amounts.push(r.uniform(0, dims[d] - 1 - before));
        }
        b.add("CustomCropLayer", {x}, {{"cropping", amounts}});
    }
    b.seed(r());
    return b.finish();
}

/// What a backend's `lacks(registry)` listed, for people: "nothing", or the class names.
inline std::string listed(const std::vector<std::string_view>& classes) {
    std::string s;
    for (auto c : classes) s += (s.empty() ? "" : ", ") + std::string(c);
    return s.empty() ? "nothing" : s;
}

}  // namespace test
