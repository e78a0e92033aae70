#pragma once
// MEMO's mutation operators: the paper's seven (NLA, LResh, LMerge, LConn, CShape, CMode, NaN)
// and the two its code adds (MDims, MDtype). Each returns a valid mutant or a rejection.
#include "steps.hpp"

namespace memo::mutation {

namespace detail {
/// NLA and LResh: insert 1 to 5 layers of classes the model does not use yet.
inline expected<model> add_unused_layers(const model& m, rng& r, const context& ctx, const std::vector<const layer_def*>& pool) {
    model out = m;
    const int count = static_cast<int>(r.uniform(1, 5));
    int added = 0;
    for (int k = 0; k < count; ++k) {
        const layer_def* L = steps::unused_class(ctx, out, pool, r);
        if (!L) break;
        if (steps::insert_layer_after(out, ctx, *L, steps::insertion_point(ctx, out, *L, r), r)) ++added;
    }
    if (added == 0) return fail("no layer could be inserted");
    return steps::within_limits(std::move(out), ctx);
}

/// CShape and CMode: change 1 to 5 nodes' parameters of the given roles to values whose buckets
/// are not yet covered, or, when all are, to a new combination.
template <class Roles>
expected<model> change_params(const model& m, rng& r, const context& ctx, Roles roles) {
    std::vector<int> candidates;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const auto& L = *m.nodes[i].layer;
        if (!ctx.in_universe(L)) continue;
        for (const auto& p : L.params)
            if (roles(p.what) && p.dom.buckets() > 1) {
                candidates.push_back(static_cast<int>(i));
                break;
            }
    }
    if (candidates.empty()) return fail("no node has such parameters");
    model out = m;
    // 1 to 5 distinct nodes, changed from the last to the first, so that the adapters a change
    // inserts after its node never move the nodes still to come.
    const auto count = static_cast<std::size_t>(r.uniform(1, std::min<std::int64_t>(5, static_cast<std::int64_t>(candidates.size()))));
    for (std::size_t k = 0; k < count; ++k) std::swap(candidates[k], candidates[k + r.index(candidates.size() - k)]);
    candidates.resize(count);
    std::sort(candidates.rbegin(), candidates.rend());
    int changed = 0;
    for (const int i : candidates) {
        node& n = out.nodes[static_cast<std::size_t>(i)];
        const auto& L = *n.layer;
        std::vector<std::size_t> js;
        for (std::size_t j = 0; j < L.params.size(); ++j)
            if (roles(L.params[j].what) && L.params[j].dom.buckets() > 1) js.push_back(j);
        if (js.empty()) continue;
        const shape old_shape = n.out;
        const dtype old_type = n.type;
        const auto s = ctx.slot(L);
        // Prefer a parameter that still has an uncovered bucket.
        std::size_t j = js[r.index(js.size())];
        for (int t = 0; t < 4; ++t) {
            bool open = false;
            for (int b = 0; b < L.params[j].dom.buckets() && !open; ++b) open = !ctx.has(criterion::layer_param, ctx.space().param_item(s, j, b));
            if (open) break;
            j = js[r.index(js.size())];
        }
        const value saved = n.params[j];
        bool ok = false;
        for (int t = 0; t < 8 && !ok; ++t) {
            value v = steps::fresh_value(ctx, L, j, r);
            if (v == saved) v = L.params[j].dom.mutate(saved, r);
            out.nodes[static_cast<std::size_t>(i)].params[j] = v;
            ok = static_cast<bool>(steps::repair_output(out, ctx, i, old_shape, old_type));
        }
        if (!ok) {
            out.nodes[static_cast<std::size_t>(i)].params[j] = saved;
            (void)infer_node(out, static_cast<std::size_t>(i));
            continue;
        }
        ++changed;
    }
    if (changed == 0) return fail("no parameter could be changed validly");
    return steps::within_limits(std::move(out), ctx);
}

/// Feeds node c a new input made from its current one by `make_input`; repairs c's output.
template <class MakeInput>
expected<model> replace_input(const model& m, const context& ctx, int c, MakeInput make_input, rng& r) {
    model out = m;
    const node& n = out.nodes[static_cast<std::size_t>(c)];
    const shape old_shape = n.out;
    const dtype old_type = n.type;
    int at = c;                     // make_input inserts its nodes at `at` and moves it past them,
    auto in = make_input(out, at);  // so `at` ends where c now is
    if (!in) return in.error();
    out.nodes[static_cast<std::size_t>(at)].inputs[0] = *in;
    if (!steps::repair_output(out, ctx, at, old_shape, old_type)) {
        // The layer's own settings may not suit the new input: redraw its shape parameters.
        const auto& L = *out.nodes[static_cast<std::size_t>(at)].layer;
        if (!steps::redraw_until_valid(out, ctx, at, r, [&](std::size_t j) { return L.params[j].what == role::shape; }))
            return fail("the layer is invalid on its new input");
        if (auto ok = steps::repair_output(out, ctx, at, old_shape, old_type); !ok) return ok.error();
    }
    return steps::within_limits(std::move(out), ctx);
}

}  // namespace detail

/// NLA: new layer addition, 1 to 5 layers of classes the model has not used, uncovered ones first.
struct nla {
    static constexpr std::string_view name = "NLA";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const { return detail::add_unused_layers(m, r, ctx, ctx.singles); }
};

/// LResh: the same with reshaping layers.
struct lresh {
    static constexpr std::string_view name = "LResh";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const { return detail::add_unused_layers(m, r, ctx, ctx.reshapes); }
};

/// LMerge: merges two tensors, made equal in shape, with a merge layer (uncovered classes first).
struct lmerge {
    static constexpr std::string_view name = "LMerge";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        std::vector<const layer_def*> fresh;
        for (const auto* L : ctx.merges)
            if (!ctx.type_covered(*L)) fresh.push_back(L);
        const auto& pool = fresh.empty() ? ctx.merges : fresh;
        if (pool.empty()) return fail("the registry has no merge layer");
        const layer_def& M = *pool[r.index(pool.size())];
        model out = m;
        const int a = steps::pick_node(out, r);
        const int b = static_cast<int>(r.uniform(0, a));
        const shape natural = out.nodes[static_cast<std::size_t>(a)].out;
        const dtype t = out.nodes[static_cast<std::size_t>(a)].type;
        const bool feeds = !consumers(out, a).empty() || std::find(out.outputs.begin(), out.outputs.end(), a) != out.outputs.end();
        const shape operand = M.ranks.contains(natural.rank()) ? natural : shape_in_bucket(M.ranks.highest(), std::min(shape_bucket(natural), 3), r);
        int cursor = a + 1;
        auto left = convert_at(out, ctx.ad, a, cursor, operand, t);
        if (!left) return left.error();
        auto right = convert_at(out, ctx.ad, b, cursor, operand, t);
        if (!right) return right.error();
        expected<int> merged = fail("no valid parameters");
        for (int k = 0; k < 6 && !merged; ++k) merged = add_node(out, cursor, M, steps::fresh_params(ctx, M, r), {*left, *right}, {});
        if (!merged) return merged.error();
        if (!feeds) {
            out.outputs.push_back(*merged);
        } else {
            auto back = convert(out, ctx.ad, *merged, *merged + 1, natural, t);
            if (!back) return back.error();
            redirect(out, a, *back);
        }
        return steps::within_limits(std::move(out), ctx);
    }
};

/// LConn: connects two existing layers directly (a pair is a direct edge), choosing pairs not
/// yet covered: b reads a's output; b's output is adapted back for its consumers.
struct lconn {
    static constexpr std::string_view name = "LConn";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = steps::universe_nodes(m, ctx, false);
        std::vector<std::pair<int, int>> fresh, any;
        for (int b : nodes) {
            const node& nb = m.nodes[static_cast<std::size_t>(b)];
            for (int a : nodes) {
                if (a >= b) break;
                const shape& out = m.nodes[static_cast<std::size_t>(a)].out;
                // Directly connectable: a merge needs a's shape to equal its operands'; another
                // layer needs a rank it accepts.
                const bool fits = nb.layer->is_merge()
                                      ? out == m.nodes[static_cast<std::size_t>(nb.inputs[0])].out && static_cast<int>(nb.inputs.size()) < nb.layer->arity.max
                                      : nb.layer->ranks.contains(out.rank());
                if (!fits || std::find(nb.inputs.begin(), nb.inputs.end(), a) != nb.inputs.end()) continue;
                const auto pair = ctx.space().pair_item(ctx.slot(*m.nodes[static_cast<std::size_t>(a)].layer), ctx.slot(*nb.layer));
                (ctx.has(criterion::layer_pair, pair) ? any : fresh).emplace_back(a, b);
            }
        }
        auto& pool = fresh.empty() ? any : fresh;
        for (int attempt = 0; attempt < 4 && !pool.empty(); ++attempt) {
            const std::size_t k = r.index(pool.size());
            const auto [a, b] = pool[k];
            pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
            model out = m;
            node& target = out.nodes[static_cast<std::size_t>(b)];
            const shape old_shape = target.out;
            const dtype old_type = target.type;
            const int old_src = target.inputs[0];
            if (target.layer->is_merge()) target.inputs.push_back(a);
            else target.inputs[0] = a;
            if (out.nodes[static_cast<std::size_t>(a)].type != out.nodes[static_cast<std::size_t>(target.inputs[0])].type) continue;
            bool ok = static_cast<bool>(steps::repair_output(out, ctx, b, old_shape, old_type));
            if (!ok) {  // b's own settings may not suit a's output: redraw its shape parameters
                const auto& L = *out.nodes[static_cast<std::size_t>(b)].layer;
                ok = steps::redraw_until_valid(out, ctx, b, r, [&](std::size_t j) { return L.params[j].what == role::shape; }) &&
                     steps::repair_output(out, ctx, b, old_shape, old_type);
            }
            if (!ok) continue;
            // The old input keeps its place in the model as an output if nothing else reads it.
            if (consumers(out, old_src).empty() && std::find(out.outputs.begin(), out.outputs.end(), old_src) == out.outputs.end())
                out.outputs.push_back(old_src);
            return steps::within_limits(std::move(out), ctx);
        }
        return fail("no two layers connect directly");
    }
};

/// CShape: changes shape parameters of 1 to 5 layers.
struct cshape {
    static constexpr std::string_view name = "CShape";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        return detail::change_params(m, r, ctx, [](role w) { return w == role::shape; });
    }
};

/// CMode: changes the other parameters (mode, initializers, and the inert ones MEMO counts).
struct cmode {
    static constexpr std::string_view name = "CMode";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        return detail::change_params(m, r, ctx, [](role w) { return w != role::shape; });
    }
};

/// NaN: feeds NaN or Inf into a layer's input.
struct nan_input {
    static constexpr std::string_view name = "NaN";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = steps::universe_nodes(m, ctx, true);
        if (nodes.empty()) return fail("no layer to feed");
        const int c = nodes[r.index(nodes.size())];
        return detail::replace_input(
            m, ctx, c,
            [&](model& out, int& at) -> expected<int> {
                const int src = out.nodes[static_cast<std::size_t>(at)].inputs[0];
                std::vector<value> ps{value{ctx.ad.inject->params[0].dom.init(r)}, value{ctx.ad.inject->params[1].dom.init(r)}};
                auto added = add_node(out, at, *ctx.ad.inject, std::move(ps), {src}, {});
                at += added.has_value();
                return added;
            },
            r);
    }
};

/// MDims: feeds a layer an input of another rank it accepts (uncovered ranks first).
struct mdims {
    static constexpr std::string_view name = "MDims";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        std::vector<int> nodes;
        for (int i : steps::universe_nodes(m, ctx, true))
            if (m.nodes[static_cast<std::size_t>(i)].layer->ranks.count() > 1) nodes.push_back(i);
        if (nodes.empty()) return fail("no layer accepts another rank");
        const int c = nodes[r.index(nodes.size())];
        const layer_def& L = *m.nodes[static_cast<std::size_t>(c)].layer;
        const shape current = m.nodes[static_cast<std::size_t>(m.nodes[static_cast<std::size_t>(c)].inputs[0])].out;
        shape target = steps::input_for(ctx, L, current, r);
        for (int k = 0; k < 4 && target.rank() == current.rank(); ++k) target = steps::input_for(ctx, L, current, r);
        if (target.rank() == current.rank()) return fail("no other rank drawn");
        return detail::replace_input(
            m, ctx, c,
            [&](model& out, int& at) -> expected<int> {
                const int src = out.nodes[static_cast<std::size_t>(at)].inputs[0];
                return convert_at(out, ctx.ad, src, at, target, out.nodes[static_cast<std::size_t>(src)].type);
            },
            r);
    }
};

/// MDtype: runs a layer in another dtype (uncovered dtypes first; then those every library under
/// test runs the layer in).
struct mdtype {
    static constexpr std::string_view name = "MDtype";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto nodes = steps::universe_nodes(m, ctx, true);
        if (nodes.empty()) return fail("no layer to retype");
        const int c = nodes[r.index(nodes.size())];
        const layer_def& L = *m.nodes[static_cast<std::size_t>(c)].layer;
        const dtype now = m.nodes[static_cast<std::size_t>(m.nodes[static_cast<std::size_t>(c)].inputs[0])].type;
        std::vector<dtype> fresh, taken, other;
        for (auto t : all_dtypes) {
            if (t == now) continue;
            other.push_back(t);
            if (!ctx.has(criterion::layer_input, ctx.space().input_dtype_item(ctx.slot(L), t))) fresh.push_back(t);
            else if (!ctx.is_declined(L, t)) taken.push_back(t);
        }
        const auto& pool = !fresh.empty() ? fresh : !taken.empty() ? taken : other;
        const dtype t = pool[r.index(pool.size())];
        return detail::replace_input(
            m, ctx, c,
            [&](model& out, int& at) -> expected<int> {
                const int src = out.nodes[static_cast<std::size_t>(at)].inputs[0];
                auto added = add_node(out, at, *ctx.ad.cast, {std::string(name_of(t))}, {src}, {});
                at += added.has_value();
                return added;
            },
            r);
    }
};

}  // namespace memo::mutation
