#pragma once
// Seed reduction, step 1: the original's items, configurations and edges (see reduce.hpp).
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

#include "../layers/all.hpp"
#include "items.hpp"

namespace memo {

namespace detail::reduction {

/// Step 1: what the original covers (its items as dense ids, its configurations, edges, chains
/// and merges), and what a layer gives on given inputs (cached). Holds the state every later
/// step shares: placement.hpp edits a cover's state, cover.hpp builds the cover.
class original_items {
public:
    original_items(const model& m, const universe& u, const layer_def& input_def) : m_(m), u_(u), input_def_(input_def) {
        const auto n = m.nodes.size();
        slot_.resize(n);
        config_of_.assign(n, -1);
        for (std::size_t i = 0; i < n; ++i) slot_[i] = u.slot_of(*m.nodes[i].layer);
        classes_ = u.classes();
        pair_.assign(classes_ * classes_, -1);
        collect_configs();
        collect_edges();
    }

    std::size_t universe_nodes() const {
        std::size_t k = 0;
        for (auto s : slot_) k += s >= 0;
        return k;
    }

protected:
    static std::uint64_t tag(criterion c, std::size_t item) { return static_cast<std::uint64_t>(c) << 32 | item; }
    int dense(std::uint64_t tagged) {
        auto [it, added] = dense_.try_emplace(tagged, items_);
        if (added) ++items_;
        return it->second;
    }
    int pair_of(int cfg_a, int cfg_b) const { return pair_[at(configs_[at(cfg_a)].cls) * classes_ + at(configs_[at(cfg_b)].cls)]; }

    // ---- step 1: the original's items ----

    /// The type, parameter and input items a node covers, as dense ids (sorted), or false when
    /// one of them is not among the original's (only possible once `frozen`).
    bool node_items(const model& scratch, std::vector<int>& out, bool frozen) {
        out.clear();
        bool ok = true;
        u_.items(scratch, [&](criterion cr, std::size_t it) {
            if (!is_memos(cr) || cr == criterion::layer_pair) return;
            if (!frozen) {
                out.push_back(dense(tag(cr, it)));
                return;
            }
            auto f = dense_.find(tag(cr, it));
            if (f == dense_.end()) ok = false;
            else out.push_back(f->second);
        });
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return ok;
    }

    /// A model of InputLayers of these shapes followed by one node with var's parameter values.
    void stand_alone(int var, std::span<const shape> ins, std::span<const dtype> types) {
        scratch_.nodes.resize(ins.size() + 1);
        for (std::size_t j = 0; j < ins.size(); ++j) {
            node& p = scratch_.nodes[j];
            p.layer = &input_def_;
            p.out = ins[j];
            p.type = types[j];
        }
        const node& src = m_.nodes[at(var)];
        node& c = scratch_.nodes.back();
        c.layer = src.layer;
        c.params = src.params;
        c.type = src.type;
        c.inputs.clear();
        for (std::size_t j = 0; j < ins.size(); ++j) c.inputs.push_back(static_cast<int>(j));
    }

    /// The configurations: original nodes grouped by the items they cover.
    void collect_configs() {
        std::map<std::vector<int>, int> by_items;
        std::unordered_map<std::uint64_t, std::vector<int>> seen;  // exact configuration -> its first node
        std::vector<int> items;
        std::vector<shape> ins;
        std::vector<dtype> types;
        for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
            if (slot_[i] < 0) continue;
            const node& nd = m_.nodes[i];
            hasher h;
            h.mix(nd.layer->name);
            for (const auto& v : nd.params) hash_value(h, v);
            for (int src : nd.inputs) {
                for (auto d : m_.nodes[at(src)].out.view()) h.mix(static_cast<std::uint64_t>(d));
                h.mix(static_cast<std::uint64_t>(m_.nodes[at(src)].type));
            }
            auto& same = seen[h.value()];
            int twin = -1;
            for (int k : same)
                if (same_node(i, at(k))) twin = k;
            if (twin >= 0) {
                config_of_[i] = config_of_[at(twin)];
                continue;
            }
            same.push_back(static_cast<int>(i));
            ins.clear();
            types.clear();
            for (int src : nd.inputs) {
                ins.push_back(m_.nodes[at(src)].out);
                types.push_back(m_.nodes[at(src)].type);
            }
            stand_alone(static_cast<int>(i), ins, types);
            scratch_.nodes.back().out = nd.out;
            node_items(scratch_, items, false);
            auto [it, added] = by_items.try_emplace(items, static_cast<int>(configs_.size()));
            if (added) {
                config c;
                c.cls = slot_[i];
                c.items = items;
                configs_.push_back(std::move(c));
            }
            config& C = configs_[at(it->second)];
            config_of_[i] = it->second;
            C.groups.push_back(static_cast<int>(i));
            bool known = false;
            for (int v : C.variants) known = known || m_.nodes[at(v)].params == nd.params;
            if (!known) C.variants.push_back(static_cast<int>(i));
        }
    }

    bool same_node(std::size_t a, std::size_t b) const {
        const node &A = m_.nodes[a], &B = m_.nodes[b];
        if (A.layer != B.layer || A.params != B.params || A.inputs.size() != B.inputs.size()) return false;
        for (std::size_t j = 0; j < A.inputs.size(); ++j) {
            const node &x = m_.nodes[at(A.inputs[j])], &y = m_.nodes[at(B.inputs[j])];
            if (!(x.out == y.out) || x.type != y.type) return false;
        }
        return true;
    }

    bool same_chain(const chain& c, const std::vector<int>& adapters, int pair) const {
        if (c.pair != pair || c.adapters.size() != adapters.size()) return false;
        for (std::size_t k = 0; k < adapters.size(); ++k) {
            const node &a = m_.nodes[at(c.adapters[k])], &b = m_.nodes[at(adapters[k])];
            if (a.layer != b.layer || a.params != b.params) return false;
        }
        return true;
    }

    /// The original's pairs, from its edges between universe layers (through adapters, whose
    /// chains are kept for reuse), and one edge per pair and kind of end; one merge per kind; of
    /// each kind, a few spread over the original.
    void collect_edges() {
        std::unordered_map<std::uint64_t, char> kinds;
        producer_of_.resize(m_.nodes.size());
        for (std::size_t b = 0; b < m_.nodes.size(); ++b) {
            if (slot_[b] < 0) continue;
            producer_of_[b].assign(m_.nodes[b].inputs.size(), {-1, -1});
            for (std::size_t j = 0; j < m_.nodes[b].inputs.size(); ++j) collect_edge(b, j, kinds);
        }
        edges_of_pair_.resize(at(items_));
        chains_of_pair_.resize(at(items_));
        collect_merges();
        spread_kinds();
    }

    /// The edge into node b's input j, from the universe layer before it through any adapters,
    /// when it makes a pair: its producer noted, and the edge kept when its kind (`kinds`: the
    /// ends' exact configurations, the slot and the chain) is new.
    void collect_edge(std::size_t b, std::size_t j, std::unordered_map<std::uint64_t, char>& kinds) {
        int src = m_.nodes[b].inputs[j];
        std::vector<int> adapters;
        while (slot_[at(src)] < 0 && m_.nodes[at(src)].layer->fam == family::adapter && m_.nodes[at(src)].inputs.size() == 1) {
            adapters.push_back(src);
            src = m_.nodes[at(src)].inputs[0];
        }
        if (slot_[at(src)] < 0) return;
        std::reverse(adapters.begin(), adapters.end());
        // Whether the edge makes a pair is the universe's call (adapters between may or may not
        // count as transparent).
        const int p = edge_pair(src, adapters, static_cast<int>(b));
        if (p < 0) return;
        pair_[classes_ * at(slot_[at(src)]) + at(slot_[b])] = p;
        if (edges_of_pair_.size() <= at(p)) {
            edges_of_pair_.resize(at(p) + 1);
            chains_of_pair_.resize(at(p) + 1);
        }
        const int ch = adapters.empty() ? -1 : chain_of(p, std::move(adapters));
        producer_of_[b][j] = {src, ch};
        hasher h;
        h.mix(static_cast<std::uint64_t>(rep_of(src))).mix(static_cast<std::uint64_t>(rep_of(static_cast<int>(b))));
        h.mix(j).mix(static_cast<std::uint64_t>(ch + 1));
        if (kinds.emplace(h.value(), 0).second) edges_of_pair_[at(p)].push_back(edge{src, static_cast<int>(b), static_cast<int>(j), ch});
    }

    /// The chain of these adapters into pair p: the one kept before, or a new one.
    int chain_of(int p, std::vector<int> adapters) {
        for (int c : chains_of_pair_[at(p)])
            if (same_chain(chains_[at(c)], adapters, p)) return c;
        const int ch = static_cast<int>(chains_.size());
        chains_of_pair_[at(p)].push_back(ch);
        chains_.push_back(chain{std::move(adapters), p});
        return ch;
    }

    /// One original merge per kind: its exact configuration and its producers'.
    void collect_merges() {
        std::unordered_map<std::uint64_t, char> merge_kinds;
        for (std::size_t b = 0; b < m_.nodes.size(); ++b) {
            if (slot_[b] < 0 || !m_.nodes[b].layer->is_merge()) continue;
            hasher h;
            h.mix(static_cast<std::uint64_t>(rep_of(static_cast<int>(b))));
            for (std::size_t j = 0; j < m_.nodes[b].inputs.size(); ++j) {
                const auto [a, ch] = producer(static_cast<int>(b), j);
                h.mix(static_cast<std::uint64_t>(a < 0 ? -1 : rep_of(a))).mix(static_cast<std::uint64_t>(ch + 1));
            }
            if (merge_kinds.emplace(h.value(), 0).second) merges_.push_back(static_cast<int>(b));
        }
    }

    /// Of the edges (and merges) whose ends have the same configurations, a few spread over the
    /// original are enough: they differ only in shapes.
    void spread_kinds() {
        for (auto& list : edges_of_pair_)
            list = spread(
                list,
                [&](const edge& e) {
                    return hasher{}
                        .mix(static_cast<std::uint64_t>(config_of_[at(e.a)]))
                        .mix(static_cast<std::uint64_t>(config_of_[at(e.b)]))
                        .mix(static_cast<std::uint64_t>(e.j))
                        .mix(static_cast<std::uint64_t>(e.chain + 1))
                        .value();
                },
                4);
        merges_ = spread(
            merges_,
            [&](int b) {
                hasher h;
                h.mix(static_cast<std::uint64_t>(config_of_[at(b)]));
                for (std::size_t j = 0; j < m_.nodes[at(b)].inputs.size(); ++j) {
                    const auto [a, ch] = producer(b, j);
                    h.mix(static_cast<std::uint64_t>(a < 0 ? -1 : config_of_[at(a)])).mix(static_cast<std::uint64_t>(ch + 1));
                }
                return h.value();
            },
            3);
    }

    /// At most k elements per key, spread evenly over those with that key; in the first one's order.
    template <class T, class Key>
    static std::vector<T> spread(const std::vector<T>& xs, Key key, std::size_t k) {
        std::vector<std::uint64_t> keys;
        std::unordered_map<std::uint64_t, std::vector<std::size_t>> by;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const auto h = key(xs[i]);
            auto& v = by[h];
            if (v.empty()) keys.push_back(h);
            v.push_back(i);
        }
        std::vector<T> out;
        for (auto h : keys) {
            const auto& v = by[h];
            const std::size_t n = std::min(k, v.size());
            for (std::size_t t = 0; t < n; ++t) out.push_back(xs[v[n == 1 ? 0 : t * (v.size() - 1) / (n - 1)]]);
        }
        return out;
    }

    /// The universe layer input j of original node b reads (through adapters), and the chain
    /// between; (-1, -1) when it reads none.
    std::pair<int, int> producer(int b, std::size_t j) const { return producer_of_[at(b)][j]; }

    /// The pair item (dense id) that edge a -> adapters -> b makes, by the universe's own count
    /// on a model of just these nodes; -1 for none.
    int edge_pair(int a, const std::vector<int>& adapters, int b) {
        hasher h;
        h.mix(static_cast<std::uint64_t>(slot_[at(a)])).mix(static_cast<std::uint64_t>(slot_[at(b)]));
        for (int x : adapters) h.mix(m_.nodes[at(x)].layer->name);
        auto [it, added] = edge_pair_cache_.try_emplace(h.value(), -1);
        if (!added) return it->second;
        scratch_.nodes.clear();
        auto copy = [&](int i) {
            node c;
            c.layer = m_.nodes[at(i)].layer;
            c.params = m_.nodes[at(i)].params;
            c.out = m_.nodes[at(i)].out;
            c.type = m_.nodes[at(i)].type;
            if (!scratch_.nodes.empty()) c.inputs = {static_cast<int>(scratch_.nodes.size() - 1)};
            scratch_.nodes.push_back(std::move(c));
        };
        copy(a);
        for (int x : adapters) copy(x);
        copy(b);
        int pair = -1;
        u_.items(scratch_, [&](criterion cr, std::size_t item) {
            if (cr == criterion::layer_pair) pair = dense(tag(cr, item));
        });
        it->second = pair;
        return pair;
    }

    /// The first original node with node i's exact configuration.
    int rep_of(int i) const {
        for (int g : configs_[at(config_of_[at(i)])].groups)
            if (same_node(at(g), at(i))) return g;
        return i;
    }

    // ---- what a layer gives on given inputs (cached) ----

    /// Node var's parameter values on these inputs: its output, and whether it is valid and
    /// covers exactly the items of its configuration.
    const outcome& run_node(int var, std::span<const shape> ins, std::span<const dtype> types) {
        hasher h;
        h.mix(static_cast<std::uint64_t>(var));
        for (std::size_t j = 0; j < ins.size(); ++j) {
            for (auto d : ins[j].view()) h.mix(static_cast<std::uint64_t>(d));
            h.mix(static_cast<std::uint64_t>(types[j]) + 0x100);
        }
        auto [it, added] = node_cache_.try_emplace(h.value());
        if (!added) return it->second;
        outcome& r = it->second;
        stand_alone(var, ins, types);
        if (!infer_node(scratch_, scratch_.nodes.size() - 1)) return r;
        std::vector<int> items;
        if (!node_items(scratch_, items, true) || items != configs_[at(config_of_[at(var)])].items) return r;
        r.ok = true;
        r.out = scratch_.nodes.back().out;
        r.type = scratch_.nodes.back().type;
        return r;
    }

    /// A chain's output on this input.
    const outcome& run_chain(int ch, const shape& in, dtype t) {
        hasher h;
        h.mix(static_cast<std::uint64_t>(ch) + 0x9000000);
        for (auto d : in.view()) h.mix(static_cast<std::uint64_t>(d));
        h.mix(static_cast<std::uint64_t>(t));
        auto [it, added] = chain_cache_.try_emplace(h.value());
        if (!added) return it->second;
        outcome& r = it->second;
        shape s = in;
        dtype type = t;
        for (int a : chains_[at(ch)].adapters) {
            const shape ins[1] = {s};
            const dtype ts[1] = {type};
            stand_alone(a, ins, ts);
            if (!infer_node(scratch_, 1)) return r;
            s = scratch_.nodes[1].out;
            type = scratch_.nodes[1].type;
        }
        r.ok = true;
        r.out = s;
        r.type = type;
        return r;
    }

    const model& m_;
    const universe& u_;
    const layer_def& input_def_;
    std::size_t classes_ = 0;
    std::vector<int> slot_, config_of_;
    std::unordered_map<std::uint64_t, int> dense_;
    int items_ = 0;
    std::vector<config> configs_;
    std::vector<int> pair_;  // classes x classes: dense id of the pair, -1 when not the original's
    std::vector<chain> chains_;
    std::vector<std::vector<int>> chains_of_pair_;               // per dense id
    std::vector<std::vector<edge>> edges_of_pair_;               // per dense id
    std::vector<int> merges_;                                    // one original merge per kind
    std::vector<std::vector<std::pair<int, int>>> producer_of_;  // per node and slot: (universe producer, chain)
    std::unordered_map<std::uint64_t, int> edge_pair_cache_;
    std::unordered_map<std::uint64_t, outcome> node_cache_, chain_cache_;
    model scratch_;
    mutable std::vector<int> stack_;
    mutable std::vector<char> seen_;
    double input_cost_ = 1.0;
    state st_, best_;
    bool have_best_ = false;
    double base_cost_ = 0;
    double best_gain_ = 0;
    std::vector<double> weight_;
    double best_cost_ = 1;
};

}  // namespace detail::reduction

}  // namespace memo
