#pragma once
// memo's operator for the graph a library runs (coverage/universe.hpp, graph_pair): it places a
// producer directly before a consumer, of a pair of classes not yet covered, adapters, Dense and
// InputLayer included. MEMO's operators pair only the classes of its universe: Dense never fed
// Dense or Dot in the models of a 300 s campaign, though each is a line of ordinary Keras.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "steps.hpp"

namespace memo::mutation {

namespace detail {

/// A connectable graph pair (its item) the search has not covered: drawn at random, then looked
/// for in order once most are covered; any when all are (or when unguided). -1: the registry has
/// none.
inline std::ptrdiff_t open_graph_pair(const context& ctx, rng& r) {
    const auto n = ctx.space().total(criterion::graph_pair_connectable);
    if (n == 0) return -1;
    for (int k = 0; k < 32; ++k)
        if (const auto item = r.index(n); !ctx.has(criterion::graph_pair_connectable, item)) return static_cast<std::ptrdiff_t>(item);
    const auto from = r.index(n);  // from a random place, so that the same pair is not always first
    for (std::size_t k = 0; k < n; ++k)
        if (const auto item = (from + k) % n; !ctx.has(criterion::graph_pair_connectable, item)) return static_cast<std::ptrdiff_t>(item);
    return static_cast<std::ptrdiff_t>(r.index(n));
}

/// A node of class A that reads node src as it is, inserted at `pos`, where A is one of the
/// classes whose parameters are sized to their input (the adapters, Reshape): drawn parameters
/// never fit them, so they are made for src's shape. -1: A is none of them.
inline expected<int> sized_to_input(model& m, const context& ctx, const layer_def& A, int src, int pos, rng& r) {
    const shape s = m.nodes[static_cast<std::size_t>(src)].out;
    const dtype t = m.nodes[static_cast<std::size_t>(src)].type;
    const auto& ad = ctx.ad;
    if (&A == ad.pad || &A == ad.crop) {
        ints amounts;
        bool any = false;
        for (int i = 1; i < s.rank(); ++i)
            for (int side = 0; side < 2; ++side) {
                // A crop leaves at least one element of each axis.
                const std::int64_t most = &A == ad.pad ? 2 : std::max<std::int64_t>(0, (s[i] - 1) / 2);
                const auto k = static_cast<std::int64_t>(r.uniform(0, most));
                amounts.push(k);
                any = any || k > 0;
            }
        if (!any) return fail(std::string(A.name) + " has nothing to take from " + s.str());
        return &A == ad.pad ? add_node(m, pos, A, {amounts, 0.0}, {src}, {}) : add_node(m, pos, A, {amounts}, {src}, {});
    }
    if (&A == ad.expand) return add_node(m, pos, A, {static_cast<std::int64_t>(r.uniform(1, s.rank()))}, {src}, {});
    if (&A == ad.drop) return add_node(m, pos, A, {static_cast<std::int64_t>(r.uniform(1, s.rank() - 1))}, {src}, {});
    if (&A == ad.cast) {
        const dtype other = all_dtypes[r.index(all_dtypes.size())];
        return add_node(m, pos, A, {std::string(name_of(other == t ? dtype::float32 : other))}, {src}, {});
    }
    if (A.name == "Reshape") {  // the same elements, the dimensions in reverse order
        ints dims;
        for (int i = s.rank() - 1; i >= 1; --i) dims.push(s[i]);
        return add_node(m, pos, A, {dims}, {src}, {});
    }
    return -1;
}

/// A node of class A whose output B takes: one the model has, or one made on a branch from a
/// random node, its input adapted to a rank B takes (most classes keep their input's rank).
inline expected<int> producer_for(model& m, const context& ctx, const layer_def& A, const layer_def& B, rng& r) {
    std::vector<int> have;
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (m.nodes[i].layer == &A && B.ranks.contains(m.nodes[i].out.rank())) have.push_back(static_cast<int>(i));
    if (!have.empty() && (A.arity.max == 0 || r.chance(0.5))) return have[r.index(have.size())];
    std::vector<int> ranks;  // the ranks both take: A's input (or, for an input, its output) and B's
    A.ranks.for_each([&](int k) {
        if (B.ranks.contains(k)) ranks.push_back(k);
    });
    if (A.arity.max == 0) {  // a new input of a rank B takes (no seed has a 3-D volume as input)
        if (ranks.empty()) return fail(std::string(B.name) + " takes no rank an input has");
        const shape s = shape_in_bucket(ranks[r.index(ranks.size())], static_cast<int>(r.index(3)), r);
        ints dims;
        for (int i = 1; i < s.rank(); ++i) dims.push(s[i]);
        return add_node(m, 0, A, {dims, std::string("float32")}, {}, {});
    }
    const int v = steps::pick_node(m, r);
    const shape natural = m.nodes[static_cast<std::size_t>(v)].out;
    if (ranks.empty()) A.ranks.for_each([&](int k) { ranks.push_back(k); });
    const int k = ranks[r.index(ranks.size())];
    const shape target = k == natural.rank() ? natural : shape_in_bucket(k, std::min(shape_bucket(natural), 3), r);
    auto in = convert(m, ctx.ad, v, v + 1, target, m.nodes[static_cast<std::size_t>(v)].type);
    if (!in) return in;
    expected<int> made = sized_to_input(m, ctx, A, *in, *in + 1, r);
    if (made && *made < 0) {
        made = fail("no parameters of " + std::string(A.name) + " take " + target.str());
        const std::vector<int> ins(static_cast<std::size_t>(std::max(1, A.arity.min)), *in);  // a merge of the value with itself
        for (int tries = 0; tries < 8 && !made; ++tries) made = add_node(m, *in + 1, A, steps::fresh_params(ctx, A, r), ins, {});
    }
    return made;
}

/// A node of class B reading node p as it is (both inputs of a merge), inserted after p; its
/// output, adapted back to p's, feeds p's consumers (or is an output when p fed nothing).
inline expected<int> consume_directly(model& m, const context& ctx, const layer_def& B, int p, rng& r) {
    const shape natural = m.nodes[static_cast<std::size_t>(p)].out;
    const dtype t = m.nodes[static_cast<std::size_t>(p)].type;
    if (!B.ranks.contains(natural.rank())) return fail(std::string(B.name) + " takes no input of rank " + std::to_string(natural.rank()));
    const bool feeds_something = !consumers(m, p).empty() || std::find(m.outputs.begin(), m.outputs.end(), p) != m.outputs.end();
    const std::vector<int> ins(static_cast<std::size_t>(std::max(1, B.arity.min)), p);
    expected<int> added = sized_to_input(m, ctx, B, p, p + 1, r);
    if (added && *added < 0) {
        added = fail("no parameters of " + std::string(B.name) + " take that input");
        for (int tries = 0; tries < 8 && !added; ++tries) added = add_node(m, p + 1, B, steps::fresh_params(ctx, B, r), ins, {});
        if (!added) added = add_node(m, p + 1, B, make_node(B).params, ins, {});
    }
    if (!added) return added;
    if (!feeds_something) {
        m.outputs.push_back(*added);
        return added;
    }
    auto back = convert(m, ctx.ad, *added, *added + 1, natural, t);
    if (!back) return back.error();
    redirect(m, p, *back);
    return added;
}

}  // namespace detail

/// GPair: a producer placed directly before a consumer, of a connectable graph pair not yet
/// covered (any two classes of the registry: an adapter feeding a pooling, Dense feeding Dot).
struct gpair {
    static constexpr std::string_view name = "GPair";
    expected<model> operator()(const model& m, rng& r, const context& ctx) const {
        const auto item = detail::open_graph_pair(ctx, r);
        if (item < 0) return fail("the registry has no connectable graph pair");
        const auto [a, b] = ctx.space().graph_connectable_pair(static_cast<std::size_t>(item));
        for (int attempt = 0; attempt < 4; ++attempt) {  // another producer or parameters each time
            model out = m;
            const auto p = detail::producer_for(out, ctx, ctx.reg[a], ctx.reg[b], r);
            if (!p) continue;
            if (!detail::consume_directly(out, ctx, ctx.reg[b], *p, r)) continue;
            return steps::within_limits(std::move(out), ctx);
        }
        return fail(std::string(ctx.reg[a].name) + " -> " + std::string(ctx.reg[b].name) + " could not be placed");
    }
};

}  // namespace memo::mutation
