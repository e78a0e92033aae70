#pragma once
// The steps the operators are made of: draw parameters that prefer uncovered values, pick an
// input configuration that prefers uncovered input items, insert a layer after a node, and
// repair a node whose output changed.
#include <algorithm>
#include <vector>

#include "../layers/cost.hpp"
#include "context.hpp"

namespace memo::mutation::steps {

/// A node index in [lo, m.size()) chosen uniformly.
inline int pick_node(const model& m, rng& r, int lo = 0) { return static_cast<int>(r.uniform(lo, static_cast<std::int64_t>(m.nodes.size()) - 1)); }

/// The universe classes that feed node i (itself when it is one; through adapters otherwise).
inline std::vector<std::size_t> sources(const context& ctx, const model& m, int i) {
    std::vector<std::size_t> out;
    ctx.space().for_each_universe_source(m, i, [&](std::size_t s) { out.push_back(s); });
    return out;
}

/// A value for parameter j of L that, with some luck, falls into a bucket not yet covered.
inline value fresh_value(const context& ctx, const layer_def& L, std::size_t j, rng& r) {
    const auto& dom = L.params[j].dom;
    value v = dom.init(r);
    if (!ctx.in_universe(L)) return v;
    const auto s = ctx.slot(L);
    for (int k = 0; k < 6 && ctx.has(criterion::layer_param, ctx.space().param_item(s, j, dom.bucket_of(v))); ++k) v = dom.init(r);
    return v;
}

/// Fresh parameter values for a new node of L.
inline std::vector<value> fresh_params(const context& ctx, const layer_def& L, rng& r) {
    std::vector<value> ps;
    ps.reserve(L.params.size());
    for (std::size_t j = 0; j < L.params.size(); ++j)
        ps.push_back(std::holds_alternative<int_list>(L.params[j].dom.d) ? L.params[j].fallback
                     : r.chance(0.25)                                    ? L.params[j].fallback
                                                                         : fresh_value(ctx, L, j, r));
    return ps;
}

/// An input shape for L: a rank it accepts and an elements-per-sample bucket, each preferring an
/// input item not yet covered; `natural` (the shape at hand) when it already fits.
inline shape input_for(const context& ctx, const layer_def& L, const shape& natural, rng& r) {
    std::vector<int> ranks, fresh_ranks;
    L.ranks.for_each([&](int k) {
        ranks.push_back(k);
        if (ctx.in_universe(L) && !ctx.has(criterion::layer_input, ctx.space().input_rank_item(ctx.slot(L), k))) fresh_ranks.push_back(k);
    });
    const auto& pool = fresh_ranks.empty() || r.chance(0.2) ? ranks : fresh_ranks;
    int rank = pool[r.index(pool.size())];
    if (L.ranks.contains(natural.rank()) && fresh_ranks.empty() && r.chance(0.5)) rank = natural.rank();
    std::vector<int> fresh_buckets;
    if (ctx.in_universe(L))
        for (int b = 0; b < shape_buckets; ++b)
            if (!ctx.has(criterion::layer_input, ctx.space().input_bucket_item(ctx.slot(L), b))) fresh_buckets.push_back(b);
    const int bucket = !fresh_buckets.empty() && r.chance(0.7)   ? fresh_buckets[r.index(fresh_buckets.size())]
                       : rank == natural.rank() && r.chance(0.6) ? shape_bucket(natural)
                                                                 : static_cast<int>(r.index(4));  // bucket 4 only when sought
    if (rank == natural.rank() && bucket == shape_bucket(natural)) return natural;
    return shape_in_bucket(rank, bucket, r);
}

/// Re-infers node i after a change of its parameters or input. When its output shape or dtype
/// is no longer `old_shape` / `old_type`, adapters turn it back for its consumers.
inline expected<void> repair_output(model& m, const context& ctx, int i, const shape& old_shape, dtype old_type) {
    if (auto ok = infer_node(m, static_cast<std::size_t>(i)); !ok) return ok;
    const node& n = m.nodes[static_cast<std::size_t>(i)];
    if (n.out == old_shape && n.type == old_type) return {};
    auto back = convert(m, ctx.ad, i, i + 1, old_shape, old_type);
    if (!back) return back.error();
    redirect(m, i, *back);
    return {};
}

/// Sets parameters of node i by trying up to `tries` fresh draws of the parameters `which` selects.
template <class Which>
inline bool redraw_until_valid(model& m, const context& ctx, int i, rng& r, Which which, int tries = 8) {
    node& n = m.nodes[static_cast<std::size_t>(i)];
    const auto saved = n.params;
    for (int t = 0; t < tries; ++t) {
        for (std::size_t j = 0; j < n.params.size(); ++j)
            if (which(j)) n.params[j] = fresh_value(ctx, *n.layer, j, r);
        if (infer_node(m, static_cast<std::size_t>(i))) return true;
    }
    n.params = saved;
    return false;
}

/// Inserts a node of class L after node v: v's output, adapted to an input L accepts, feeds the
/// new node, whose output, adapted back, feeds v's consumers. Returns the new node's index.
inline expected<int> insert_layer_after(model& m, const context& ctx, const layer_def& L, int v, rng& r) {
    const shape natural = m.nodes[static_cast<std::size_t>(v)].out;
    const dtype vt = m.nodes[static_cast<std::size_t>(v)].type;
    const bool feeds_something = !consumers(m, v).empty() || std::find(m.outputs.begin(), m.outputs.end(), v) != m.outputs.end();
    // A pair is a direct edge: when v's class and L make a pair not yet covered, L reads v's
    // output as it is (if L accepts its rank), at least on the first attempt.
    bool direct = false;
    if (ctx.in_universe(L) && L.ranks.contains(natural.rank()))
        for (auto s : sources(ctx, m, v)) direct = direct || !ctx.has(criterion::layer_pair, ctx.space().pair_item(s, ctx.slot(L)));
    for (int attempt = 0; attempt < 4; ++attempt) {
        model trial = m;
        const shape target = direct && attempt == 0 ? natural : input_for(ctx, L, natural, r);
        auto in = convert(trial, ctx.ad, v, v + 1, target, vt);
        if (!in) continue;
        const int pos = *in + 1;
        expected<int> added = fail("no valid parameters");
        for (int t = 0; t < 8 && !added; ++t) added = add_node(trial, pos, L, fresh_params(ctx, L, r), {*in}, {});
        if (!added) added = add_node(trial, pos, L, make_node(L).params, {*in}, {});
        if (!added) continue;
        if (!feeds_something) {
            trial.outputs.push_back(*added);
        } else {
            auto back = convert(trial, ctx.ad, *added, *added + 1, natural, vt);
            if (!back) continue;
            redirect(trial, v, *back);
        }
        const int at = *added;
        m = std::move(trial);
        return at;
    }
    return fail("no input of " + std::string(L.name) + " could be made at node " + std::to_string(v));
}

/// The classes of `pool` the model does not use; the globally uncovered ones first when `fresh`.
inline const layer_def* unused_class(const context& ctx, const model& m, const std::vector<const layer_def*>& pool, rng& r) {
    std::vector<const layer_def*> unused, uncovered;
    for (const auto* L : pool) {
        bool used = false;
        for (const auto& n : m.nodes) used = used || n.layer == L;
        if (used) continue;
        unused.push_back(L);
        if (!ctx.type_covered(*L)) uncovered.push_back(L);
    }
    if (!uncovered.empty()) return uncovered[r.index(uncovered.size())];
    if (!unused.empty()) return unused[r.index(unused.size())];
    return pool.empty() ? nullptr : pool[r.index(pool.size())];
}

/// A node to insert after: of a few random candidates, one whose source class has not yet been
/// paired with L.
inline int insertion_point(const context& ctx, const model& m, const layer_def& L, rng& r) {
    int best = pick_node(m, r);
    if (!ctx.in_universe(L)) return best;
    for (int k = 0; k < 4; ++k) {
        const int v = pick_node(m, r);
        for (auto s : sources(ctx, m, v))
            if (!ctx.has(criterion::layer_pair, ctx.space().pair_item(s, ctx.slot(L)))) return v;
    }
    return best;
}

/// Nodes of universe classes that have inputs (and only one, when `single_input`).
inline std::vector<int> universe_nodes(const model& m, const context& ctx, bool single_input) {
    std::vector<int> r;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const auto& L = *m.nodes[i].layer;
        if (ctx.in_universe(L) && !m.nodes[i].inputs.empty() && (!single_input || !L.is_merge())) r.push_back(static_cast<int>(i));
    }
    return r;
}

inline expected<model> within_limits(model m, const context& ctx) {
    if (m.nodes.size() > ctx.max_nodes) return fail("mutant has " + std::to_string(m.nodes.size()) + " nodes, over the limit");
    if (ctx.max_cost > 0 && execution_cost(m) > ctx.max_cost) return fail("mutant costs more to run than the limit");
    return m;
}

}  // namespace memo::mutation::steps
