#pragma once
// Seed reduction, step 5: simplifies the cover's model, each change kept only when the model
// stays valid with exactly the original's items (see reduce.hpp).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../layers/cost.hpp"
#include "items.hpp"

namespace memo {

namespace detail::reduction {

/// Step 6: changes a model only in ways that keep it valid with exactly the items `target`.
class shrinker {
public:
    shrinker(model m, const universe& u, std::vector<std::uint64_t> target) : m_(std::move(m)), u_(u), target_(std::move(target)) {}

    const model& result() const { return m_; }

    /// Whether a candidate is valid and covers exactly the target items.
    bool ok(model& c) const {
        if (!infer_shapes(c)) return false;
        return reduction_items(u_, c) == target_;
    }

    /// Takes candidate c when it is valid with exactly the target items.
    bool accept(model& c) {
        if (!ok(c)) return false;
        m_ = std::move(c);
        return true;
    }

    /// Removes layers whose work another node can take over: a layer's readers read another
    /// node instead; or another layer of its class takes its parameter values (and, for merges,
    /// its inputs) and its readers. Each accepted step removes a node.
    bool fold() {
        bool any = false;
        for (bool changed = true; changed;) {
            changed = false;
            for (std::size_t w = 0; w < m_.nodes.size() && !changed; ++w) {
                const node& W = m_.nodes[w];
                if (W.layer->arity.max == 0) continue;
                // Its type (and so its other items) must stay covered: another node of its class.
                bool has_twin = u_.slot_of(*W.layer) < 0;
                for (std::size_t t = 0; t < m_.nodes.size() && !has_twin; ++t) has_twin = t != w && m_.nodes[t].layer == W.layer;
                if (!has_twin) continue;
                for (std::size_t t = 0; t < m_.nodes.size() && !changed; ++t) {
                    if (t == w) continue;
                    const node& T = m_.nodes[t];
                    const bool twin = T.layer == W.layer;
                    if ((twin || T.out == W.out) && T.type == W.type && T.out.rank() == W.out.rank() && pairs_allowed(w, t)) {
                        model c = m_;
                        if (remove_into(c, w, t) && accept(c)) {
                            changed = true;
                            continue;
                        }
                    }
                    if (!twin) continue;
                    {
                        model c = m_;
                        c.nodes[t].params = W.params;
                        if (remove_into(c, w, t) && accept(c)) {
                            changed = true;
                            continue;
                        }
                    }
                    if (W.layer->is_merge() && static_cast<int>(T.inputs.size() + W.inputs.size()) <= W.layer->arity.max) {
                        model c = m_;
                        for (int x : W.inputs) c.nodes[t].inputs.push_back(x);
                        if (remove_into(c, w, t) && accept(c)) changed = true;
                    }
                }
            }
            any |= changed;
        }
        return any;
    }

    /// Feeds input slots read from InputLayers by other nodes or inputs, so InputLayers go.
    /// A slot moves to a layer, or to an earlier InputLayer: each move lowers the number of slots
    /// read from inputs or the index of the input read, so this ends.
    void share_inputs() {
        // First whole InputLayers: all readers of one read another of the same rank and dtype.
        for (bool changed = true; changed;) {
            changed = false;
            for (std::size_t x = 0; x < m_.nodes.size() && !changed; ++x) {
                if (m_.nodes[x].layer->arity.max != 0) continue;
                for (std::size_t y = 0; y < m_.nodes.size() && !changed; ++y) {
                    if (y == x || m_.nodes[y].layer->arity.max != 0 || m_.nodes[y].type != m_.nodes[x].type || m_.nodes[y].out.rank() != m_.nodes[x].out.rank())
                        continue;
                    model c = m_;
                    for (auto& nd : c.nodes)
                        for (auto& i : nd.inputs)
                            if (at(i) == x) i = static_cast<int>(y);
                    drop_unread_inputs(c);
                    if (ok(c)) {
                        m_ = std::move(c);
                        changed = true;
                    }
                }
            }
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (std::size_t b = 0; b < m_.nodes.size() && !changed; ++b) {
                for (std::size_t j = 0; !changed && j < m_.nodes[b].inputs.size(); ++j) {
                    const auto x = static_cast<std::size_t>(m_.nodes[b].inputs[j]);
                    if (m_.nodes[x].layer->arity.max != 0) continue;  // fed by a layer already
                    // Layers first (the nearest first), then earlier inputs.
                    for (int pass = 0; pass < 2 && !changed; ++pass)
                        for (std::size_t t = b; t-- > 0 && !changed;) {
                            const node& T = m_.nodes[t];
                            const bool input = T.layer->arity.max == 0;
                            if (pass == 0 ? input : (!input || t >= x)) continue;
                            if (T.type != m_.nodes[x].type || T.out.rank() != m_.nodes[x].out.rank()) continue;
                            if (!pair_ok(t, b)) continue;
                            model c = m_;
                            c.nodes[b].inputs[j] = static_cast<int>(t);
                            drop_unread_inputs(c);
                            if (accept(c)) changed = true;
                        }
                }
            }
        }
    }

    /// Makes input sizes and widths as small as the items allow (fewer weights, same items).
    void shrink_sizes(int rounds = 2) {
        for (int round = 0; round < rounds; ++round) {
            bool any = false;
            for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
                if (m_.nodes[i].layer->arity.max == 0) {
                    const int k = m_.nodes[i].layer->param_index("shape");
                    if (k < 0) continue;
                    // The last dimension first: channels multiply the weights of what reads them.
                    const int dims = std::get<ints>(m_.nodes[i].params[at(k)]).n;
                    for (int d = dims; d-- > 0;) any |= minimise(i, at(k), d, 1, std::get<ints>(m_.nodes[i].params[at(k)])[d]);
                    continue;
                }
                for (std::size_t p = 0; p < m_.nodes[i].params.size(); ++p) {
                    const param& P = m_.nodes[i].layer->params[p];
                    if (P.what != role::shape || !std::holds_alternative<int_range>(P.dom.d)) continue;
                    const auto* v = std::get_if<std::int64_t>(&m_.nodes[i].params[p]);
                    if (!v) continue;
                    any |= minimise(i, p, -1, std::get<int_range>(P.dom.d).lo, *v);
                }
            }
            if (!any) break;
        }
    }

    /// Whether node t may feed node b: the pair that makes, if any, is one of the target's.
    bool pair_ok(std::size_t t, std::size_t b) const {
        const int a = u_.slot_of(*m_.nodes[t].layer), sb = u_.slot_of(*m_.nodes[b].layer);
        if (a < 0 || sb < 0) return true;
        const auto item = static_cast<std::uint64_t>(criterion::layer_pair) << 32 | (u_.classes() * at(a) + at(sb));
        return std::binary_search(target_.begin(), target_.end(), item);
    }

    /// Whether node t may feed the readers of node w: each pair that makes is one of the target's.
    bool pairs_allowed(std::size_t w, std::size_t t) const {
        const int a = u_.slot_of(*m_.nodes[t].layer);
        if (a < 0) return true;
        for (const auto& b : m_.nodes) {
            const int sb = u_.slot_of(*b.layer);
            if (sb < 0) continue;
            for (int x : b.inputs)
                if (at(x) == w) {
                    const auto item = static_cast<std::uint64_t>(criterion::layer_pair) << 32 | (u_.classes() * at(a) + at(sb));
                    if (!std::binary_search(target_.begin(), target_.end(), item)) return false;
                }
        }
        return true;
    }

    /// Removes node w, its readers reading t instead, then puts the nodes in an order where
    /// producers come first and drops InputLayers nobody reads. False on a cycle.
    static bool remove_into(model& c, std::size_t w, std::size_t t) {
        for (auto& nd : c.nodes)
            for (auto& x : nd.inputs)
                if (at(x) == w) x = static_cast<int>(t);
        const auto n = c.nodes.size();
        std::vector<int> where(n, -1);
        std::vector<node> order;
        order.reserve(n - 1);
        std::vector<char> placed(n, 0);
        placed[w] = 1;  // gone
        for (std::size_t done = 1; done < n;) {
            bool progress = false;
            for (std::size_t i = 0; i < n; ++i) {
                if (placed[i]) continue;
                bool ready = true;
                for (int x : c.nodes[i].inputs) ready = ready && placed[at(x)] && at(x) != w;
                if (!ready) continue;
                placed[i] = 1;
                where[i] = static_cast<int>(order.size());
                order.push_back(std::move(c.nodes[i]));
                ++done;
                progress = true;
                break;
            }
            if (!progress) return false;
        }
        for (auto& nd : order)
            for (auto& x : nd.inputs) x = where[at(x)];
        c.nodes = std::move(order);
        drop_unread_inputs(c);
        return true;
    }

    /// Removes InputLayers nobody reads (renumbering the edges) and resets the outputs.
    static void drop_unread_inputs(model& c) {
        std::vector<char> read(c.nodes.size(), 0);
        for (const auto& nd : c.nodes)
            for (int s : nd.inputs) read[static_cast<std::size_t>(s)] = 1;
        std::vector<int> where(c.nodes.size(), -1);
        std::vector<node> kept;
        for (std::size_t i = 0; i < c.nodes.size(); ++i) {
            if (c.nodes[i].layer->arity.max == 0 && !read[i]) continue;
            where[i] = static_cast<int>(kept.size());
            kept.push_back(std::move(c.nodes[i]));
        }
        for (auto& nd : kept)
            for (auto& s : nd.inputs) s = where[static_cast<std::size_t>(s)];
        c.nodes = std::move(kept);
        set_outputs(c);
    }

private:
    /// Sets parameter p of node i (entry d of a list when d >= 0) to the smallest value in
    /// [lo, now] the check accepts, by bisection; true when it changed.
    bool minimise(std::size_t i, std::size_t p, int d, std::int64_t lo, std::int64_t now) {
        auto with = [&](std::int64_t v) {
            model c = m_;
            value& slot = c.nodes[i].params[p];
            if (d >= 0) std::get<ints>(slot)[d] = v;
            else slot = v;
            return c;
        };
        std::int64_t hi = now;
        bool changed = false;
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            model c = with(mid);
            if (ok(c)) {
                hi = mid;
                m_ = std::move(c);
                changed = true;
            } else lo = mid + 1;
        }
        return changed;
    }

    model m_;
    const universe& u_;
    std::vector<std::uint64_t> target_;
};

}  // namespace detail::reduction

}  // namespace memo
