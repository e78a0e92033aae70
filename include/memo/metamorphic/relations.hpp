#pragma once
// ModelMeta's model-level metamorphic relations. A variant of a model splices an extra
// sub-network F (layers drawn by the mutation operators' generator, its output bounded by tanh)
// into one of the model's outputs through a gate g that is zero whatever the inputs:
//
//     output' = output + g * F(x)
//
// so a correct library gives the model and its variant the same outputs. The four gates, built
// from tensors a and b the model already computes (adapted to the output's shape and dtype):
//   squared-difference  g = relu(-((a - b)^2 + eps))
//   stop-gradient       g = r - stop_gradient(r), r a global pooling (reduction) of a
//   triangle            g = relu(|a + b| - |a| - |b| - eps)
//   reverse-triangle    g = relu(||a| - |b|| - |a + b| - eps)
// Every new node is appended after the model's own, so the model's nodes keep their indices and
// with them their weights (drawn from the model's seed and the node's index).
#include <algorithm>
#include <string>
#include <vector>

#include "../engine/rng.hpp"
#include "../mutation/steps.hpp"
#include "variant.hpp"

namespace memo::metamorphic {

struct splice_options {
    int min_layers = 1, max_layers = 3;  // layers of F
    double eps = 1e-3;                   // the gates' margin below zero, float32 and float64
    double eps_low = 0.25;               // in float16 and bfloat16, whose rounding is coarser
    /// The nodes a, b and F's input are drawn from (empty: any node). A tester passes the nodes
    /// whose values are finite and not all zero, so that the gate and F have something to compute.
    std::vector<int> sources{};
};

namespace detail {

/// Appends nodes to a model under construction, naming them after the relation.
struct appender {
    model& m;
    const mutation::context& ctx;
    std::string prefix;

    expected<int> add(std::string_view cls, std::vector<int> in, std::vector<std::pair<std::string_view, value>> set = {}) {
        node n = make_node(ctx.reg.at(cls));
        for (auto& [k, v] : set) n.set(k, std::move(v));
        return mutation::add_node(m, static_cast<int>(m.size()), *n.layer, std::move(n.params), std::move(in), prefix + std::to_string(m.size()));
    }
    /// src's output with shape s and dtype t (adapters appended when needed).
    expected<int> to(int src, const shape& s, dtype t) { return mutation::convert(m, ctx.ad, src, static_cast<int>(m.size()), s, t); }
};

/// src's values laid out as `target` (same dtype): flattened, averaged down or repeated up to the
/// target's elements, cut to them exactly, reshaped. Unlike convert() (which drops an axis by taking
/// its index 0 and crops the middle) every value of src still counts.
inline expected<int> resize(appender& a, int src, const shape& target) {
    std::int64_t n = a.m[src].out.elements();
    const std::int64_t k = target.elements();
    int cur = src;
    auto put = [&](expected<int> e) {
        if (e) cur = *e;
        return static_cast<bool>(e);
    };
    auto reshape = [&](ints dims) { return put(a.add("Reshape", {cur}, {{"target_shape", dims}})); };
    if (a.m[cur].out == target) return cur;
    if (n > k) {  // each of about k windows averaged
        const std::int64_t p = (n + k - 1) / k;
        if (p > 1) {
            if (!reshape(ints{n, 1}) ||
                !put(a.add("AveragePooling1D", {cur}, {{"pool_size", ints{p}}, {"strides", ints{p}}, {"padding", std::string("same")}})))
                return fail("cannot pool " + std::to_string(n) + " values");
            n = (n + p - 1) / p;
        }
    } else if (n < k) {  // each value repeated
        const std::int64_t times = (k + n - 1) / n;
        if (!reshape(ints{n, 1}) || !put(a.add("UpSampling1D", {cur}, {{"size", times}}))) return fail("cannot repeat " + std::to_string(n) + " values");
        n *= times;
    }
    if (a.m[cur].out.rank() != 2 && !reshape(ints{n})) return fail("cannot flatten");
    if (n > k && !put(a.add("CustomCropLayer", {cur}, {{"cropping", ints{0, n - k}}}))) return fail("cannot cut to " + std::to_string(k));
    if (n < k && !put(a.add("CustomPadLayer", {cur}, {{"padding", ints{0, k - n}}}))) return fail("cannot pad to " + std::to_string(k));
    if (target.rank() != 2) {
        ints dims;
        for (auto d : target.sample()) dims.push(d);
        if (!reshape(dims)) return fail("cannot reshape to " + target.str());
    }
    return cur;
}

/// src mixed into shape s, dtype t: normalised, a Dense layer with tanh, laid out as s. Every
/// output element then depends on all of src's values (at most 1024 of them, averaged down), at a
/// magnitude near 1 whatever src's own.
inline expected<int> fit(appender& a, int src, const shape& s, dtype t) {
    constexpr std::int64_t most_in = 1024, most_out = 2048;
    const std::int64_t n = std::min(a.m[src].out.elements(), most_in), k = s.elements();
    const std::int64_t dims[] = {n};
    auto flat = resize(a, src, shape::batched(dims));
    if (!flat) return flat;
    // Normalised unless too few to normalise (one value would become 0).
    auto norm = n >= 4 ? a.add("LayerNormalization", {*flat}) : flat;
    if (!norm) return norm;
    auto mixed = a.add("Dense", {*norm}, {{"units", std::min(k, most_out)}, {"activation", std::string("tanh")}});
    if (!mixed) return mixed;
    auto laid = resize(a, *mixed, s);
    if (!laid) return laid;
    return a.to(*laid, s, t);  // the dtype
}

/// F: a short chain of layers of the universe from node x (each reading its input as it is when
/// it takes that rank, or resized to an input it takes), mixed into shape s, dtype t.
inline expected<int> sub_network(appender& a, int x, const shape& s, dtype t, rng& r, const splice_options& o) {
    int cur = x;
    const int layers = static_cast<int>(r.uniform(o.min_layers, o.max_layers));
    for (int k = 0; k < layers && !a.ctx.singles.empty(); ++k) {
        const layer_def& L = *a.ctx.singles[r.index(a.ctx.singles.size())];
        const shape natural = a.m[cur].out;
        const bool as_is = L.ranks.contains(natural.rank()) && r.chance(0.8);
        auto in = as_is ? expected<int>(cur) : resize(a, cur, mutation::steps::input_for(a.ctx, L, natural, r));
        if (!in) continue;
        expected<int> added = fail("no valid parameters");
        for (int tries = 0; tries < 8 && !added; ++tries) {
            // Keras' initializers: a zeros or constant kernel would make F a constant.
            auto params = mutation::steps::fresh_params(a.ctx, L, r);
            for (std::size_t j = 0; j < params.size(); ++j)
                if (L.params[j].what == role::init) params[j] = L.params[j].fallback;
            added = mutation::add_node(a.m, static_cast<int>(a.m.size()), L, std::move(params), {*in}, a.prefix + std::to_string(a.m.size()));
        }
        if (added) cur = *added;
    }
    return fit(a, cur, s, t);
}

/// A global pooling of node x (a tensor of rank 2 or 6, which no global pooling takes, is pooled
/// as one sequence of its values).
inline expected<int> reduction(appender& a, int x, rng& r) {
    int cur = x;
    if (const auto& s = a.m[cur].out; s.rank() == 2 || s.rank() > 5) {
        auto e = a.add("Reshape", {cur}, {{"target_shape", ints{s.elements(), 1}}});
        if (!e) return e;
        cur = *e;
    }
    const int rank = a.m[cur].out.rank();
    const std::string cls = std::string(r.chance(0.5) ? "GlobalAveragePooling" : "GlobalMaxPooling") + std::to_string(rank - 2) + "D";
    return a.add(cls, {cur});
}

}  // namespace detail

/// The variant of m for relation `rel`, spliced into one of its outputs; the reason when none
/// could be made. `ctx` supplies the registry, the adapters and F's layer classes.
inline expected<variant> splice(const model& m, relation rel, const mutation::context& ctx, rng& r, const splice_options& o = {}) {
    if (m.outputs.empty()) return fail("the model has no output");
    variant v;
    v.m = m;
    v.rel = rel;
    v.output = static_cast<int>(r.index(m.outputs.size()));
    v.first_new = static_cast<int>(m.size());
    detail::appender a{v.m, ctx, std::string(name_of(rel)) + "_"};
    const int out = m.outputs[static_cast<std::size_t>(v.output)];
    const shape s = m[out].out;
    const dtype t = m[out].type;
    const double eps = t == dtype::float16 || t == dtype::bfloat16 ? o.eps_low : o.eps;
    auto pick = [&] { return o.sources.empty() ? mutation::steps::pick_node(m, r) : o.sources[r.index(o.sources.size())]; };
    std::vector<int> gate;
    // Each step's node joins the gate; a failed step fails the splice.
    auto step = [&](expected<int> e) -> int {
        if (!e) throw error(e.reason());
        gate.push_back(*e);
        return *e;
    };
    try {
        const int A = step(a.to(pick(), s, t));
        int g = 0;
        if (rel == relation::stop_gradient) {
            const int red = step(detail::reduction(a, A, r));
            const int frozen = step(a.add("StopGradient", {red}));
            const int zero = step(a.add("Subtract", {red, frozen}));
            g = step(a.to(zero, s, t));
        } else {
            const int B = step(a.to(pick(), s, t));
            int below = 0;  // a value at most -eps
            if (rel == relation::squared_difference) {
                const int sq = step(a.add("Square", {step(a.add("Subtract", {A, B}))}));
                below = step(a.add("ScaleShift", {sq}, {{"scale", -1.0}, {"shift", -eps}}));
            } else {
                const int sum = step(a.add("Abs", {step(a.add("Add", {A, B}))}));
                const int absa = step(a.add("Abs", {A})), absb = step(a.add("Abs", {B}));
                int gap = 0;
                if (rel == relation::triangle) {  // |a + b| - |a| - |b| <= 0
                    gap = step(a.add("Subtract", {step(a.add("Subtract", {sum, absa})), absb}));
                } else {  // ||a| - |b|| - |a + b| <= 0
                    gap = step(a.add("Subtract", {step(a.add("Abs", {step(a.add("Subtract", {absa, absb}))})), sum}));
                }
                below = step(a.add("ScaleShift", {gap}, {{"scale", 1.0}, {"shift", -eps}}));
            }
            g = step(a.add("ReLU", {below}));
        }
        auto f = detail::sub_network(a, pick(), s, t, r, o);
        if (!f) return f.error();
        const int product = step(a.add("Multiply", {g, *f}));
        const int sum = step(a.add("Add", {out, product}));
        v.m.outputs[static_cast<std::size_t>(v.output)] = sum;
    } catch (const error& e) {
        return fail(std::string(name_of(rel)) + ": " + e.what());
    }
    // The gate's own nodes (not the model's, which a step may return unchanged), in node order.
    std::erase_if(gate, [&](int k) { return k < v.first_new; });
    std::sort(gate.begin(), gate.end());
    gate.erase(std::unique(gate.begin(), gate.end()), gate.end());
    v.gate = std::move(gate);
    if (auto ok = validate(v.m); !ok) return fail(std::string(name_of(rel)) + ": " + ok.reason());
    return v;
}

}  // namespace memo::metamorphic
