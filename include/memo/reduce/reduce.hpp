#pragma once
// Seed reduction (MEMO's Algorithm 1): a small model that covers exactly the items of a large one.
//
//   memo::reduction r = memo::reduce(memo::zoo::build("resnet50-imagenet"));
//   r.reduced;              // a valid model of a dozen nodes (177 before)
//   r.coverage_preserved;   // its items equal the original's under layer_type, layer_pair,
//                           // layer_param and layer_input
//
// What a node covers apart from pairs (its type, parameter buckets and input rank, dtype and size
// bucket) depends only on its class, its parameter values and the bucket of its input, not on
// its neighbours. So the original's nodes fall into configurations (equal items), and a node of
// a configuration may stand for all of them, on any input that keeps its bucket; a pair is an
// edge between two layers whose classes the original also connects. The reduction:
//   1. collects the original's items (types T, pairs P, parameter buckets V, input items I) and
//      its configurations, edges and merges;
//   2. covers them greedily: each step adds the candidate with the most new items per added node
//      (a node on an InputLayer; a node reading one there is; an original edge; an original merge
//      with its producers), and wires the new nodes into the slots of the others where that
//      covers a new pair. Repeated blocks add nothing after their first instance, so they are
//      reduced to one (intra-block) and blocks with nothing new are left out (inter-block);
//   3. drops nodes the others make redundant, then searches a neighbourhood: removes all nodes of
//      one class and covers again, keeping what is smaller;
//   4. builds the model: InputLayers (outside the universe: no pairs) for the slots nothing
//      feeds, one per shape and dtype; nodes nobody reads are the outputs;
//   5. simplifies, each step kept only when the model stays valid with exactly the original's
//      items: removes nodes another node can stand in for, feeds InputLayer slots from other
//      nodes or inputs, then makes input sizes and widths (filters, units, ...) as small as their
//      buckets allow (fewer weights).
// Steps 2 to 5 run a few times with different weights (InputLayers, rare items, ties); the
// smallest result wins. See docs/reduction.md.
#include <chrono>
#include <cstdint>

#include "../core/model.hpp"
#include "../coverage/universe.hpp"
#include "../layers/all.hpp"
#include "../layers/cost.hpp"
#include "cover.hpp"
#include "shrink.hpp"

namespace memo {

/// What reduce() returns: the reduced model and the figures of the paper's Table 5.
struct reduction {
    model reduced;
    std::size_t layers_before = 0, layers_after = 0;  // every node, InputLayer and adapters included
    std::int64_t weights_before = 0, weights_after = 0;
    std::int64_t flops_before = 0, flops_after = 0;
    double ms = 0;                    // the time reduce() took, verification included
    bool coverage_preserved = false;  // valid, and the same items under the four criteria
};

/// The criteria a reduction keeps: MEMO's diversity test (type, pair, parameter, input).

/// Reduces m to a small model with exactly its items under layer_type, layer_pair, layer_param
/// and layer_input (see the top of this file). `reg` is the registry m's layers come from.
/// Deterministic: the same model gives the same reduced model.
inline reduction reduce(const model& m, const registry& reg = default_registry()) {
    const auto start = std::chrono::steady_clock::now();
    const universe& u = universe::of(reg);
    const layer_def& input_def = reg.at("InputLayer");
    const auto target = reduction_items(u, m);

    reduction r;
    r.layers_before = m.size();
    r.weights_before = count_weights(m);
    r.flops_before = count_flops(m);

    auto exact = [&](const model& c) { return validate(c) && reduction_items(u, c) == target; };

    model best;
    std::int64_t best_weights = 0;
    detail::reduction::cover_builder s(m, u, input_def);
    if (s.universe_nodes() == 0) {
        // Nothing in the universe: one input stands for the model.
        const auto ins = m.input_nodes();
        if (!ins.empty()) {
            best.nodes.push_back(m.nodes[detail::reduction::at(ins.front())]);
            best.outputs = {0};
            best.seed = m.seed;
        }
    } else {
        // A few greedy runs, each weighing InputLayers and rare items differently (and breaking
        // ties differently), each taken before and after the neighbourhood search; the smallest
        // exact result wins (then the one with fewer weights, then the first).
        struct trial {
            double input_cost, rarity;
            std::uint64_t seed;
        };
        constexpr trial trials[] = {{1.0, 0.0, 1}, {0.5, 2.0, 0}, {0.5, 0.0, 0}};
        auto consider = [&]() {
            if (!s.complete()) return;
            model c = s.build();
            if (!exact(c)) return;
            detail::reduction::shrinker k(std::move(c), u, target);
            k.fold();
            k.share_inputs();
            if (k.fold()) k.share_inputs();
            k.shrink_sizes();
            const auto size = k.result().size();
            const auto weights = count_weights(k.result());
            if (best.nodes.empty() || size < best.size() || (size == best.size() && weights < best_weights)) {
                best = k.result();
                best_weights = weights;
            }
        };
        for (const trial& t : trials) {
            s.choose(t.input_cost, t.rarity, t.seed);
            consider();
            if (s.improve(1)) consider();
        }
    }
    if (!exact(best)) best = m;  // never expected: the original itself keeps every item

    r.reduced = std::move(best);
    r.layers_after = r.reduced.size();
    r.weights_after = count_weights(r.reduced);
    r.flops_after = count_flops(r.reduced);
    r.coverage_preserved = exact(r.reduced);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
}

}  // namespace memo
