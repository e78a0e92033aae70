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

#include "../core/model.hpp"
#include "../coverage/universe.hpp"
#include "../layers/all.hpp"
#include "../layers/cost.hpp"

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
inline constexpr bool reduction_criterion(criterion c) noexcept {
    return c == criterion::layer_type || c == criterion::layer_pair || c == criterion::layer_param || c == criterion::layer_input;
}

/// The items m covers under the four criteria, each tagged with its criterion
/// ((criterion << 32) | item), sorted and without repeats: two models cover the same items
/// exactly when these are equal.
inline std::vector<std::uint64_t> reduction_items(const universe& u, const model& m) {
    std::vector<std::uint64_t> xs;
    u.items(m, [&](criterion c, std::size_t i) {
        if (reduction_criterion(c)) xs.push_back(static_cast<std::uint64_t>(c) << 32 | static_cast<std::uint64_t>(i));
    });
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    return xs;
}

namespace detail::reduction {

inline std::size_t at(int i) { return static_cast<std::size_t>(i); }

template <class V>
auto span_of(const V& v) {
    return std::span<const std::remove_cvref_t<decltype(v[0])>>(v.data(), v.size());
}

/// An item configuration: nodes of one class with the same type, parameter and input items. Any
/// of them stands for all the others, on any input that keeps those items.
struct config {
    int cls = -1;               // universe slot
    std::vector<int> items;     // dense ids, sorted
    std::vector<int> groups;    // original nodes with distinct parameter values or input shapes
    std::vector<int> variants;  // original nodes with distinct parameter values
};

/// A chain of adapters between two universe layers of the original, where the universe counts
/// the pair across it.
struct chain {
    std::vector<int> adapters;  // original nodes, from the producer's side
    int pair = -1;
};

/// An original edge between universe layers: input j of b reads a, through `chain` (or -1).
struct edge {
    int a = -1, b = -1, j = 0, chain = -1;
};

/// A vector of at most N elements, stored inline (states are copied often).
template <class T, std::size_t N>
struct inline_vec {
    std::array<T, N> v{};
    std::size_t n = 0;

    std::size_t size() const noexcept { return n; }
    T& operator[](std::size_t i) noexcept { return v[i]; }
    const T& operator[](std::size_t i) const noexcept { return v[i]; }
    void push_back(const T& x) noexcept {
        if (n < N) v[n++] = x;
    }
    void assign(std::size_t k, const T& x) noexcept {
        n = std::min(k, N);
        for (std::size_t i = 0; i < n; ++i) v[i] = x;
    }
    T* data() noexcept { return v.data(); }
    const T* data() const noexcept { return v.data(); }
    T* begin() noexcept { return v.data(); }
    T* end() noexcept { return v.data() + n; }
    const T* begin() const noexcept { return v.data(); }
    const T* end() const noexcept { return v.data() + n; }
};

/// Input slots a node of the reduced model may have (merges take at most 8 inputs).
inline constexpr std::size_t max_slots = 8;

/// A node of the model under construction: a node of configuration cfg with the parameter values
/// of original node var; each input slot reads a node (through a chain) or an InputLayer.
struct snode {
    int cfg = -1;  // -1: removed
    int var = -1;
    inline_vec<int, max_slots> from, via;  // per slot: the node it reads (-1: an InputLayer), the chain (-1: none)
    inline_vec<shape, max_slots> in;       // per slot: the shape it reads
    inline_vec<dtype, max_slots> in_type;
    shape out;
    dtype type = dtype::float32;
};

struct state {
    std::vector<snode> nodes;
    std::vector<int> cnt;  // per dense item: how many nodes and edges cover it
    int covered = 0;
    double weight = 0;  // of the covered items
};

/// The outcome of a layer (or an adapter chain) on given inputs.
struct outcome {
    bool ok = false;
    shape out;
    dtype type = dtype::float32;
};

/// Steps 1 to 5: chooses the nodes and their inputs greedily, then wires them into a model.
class cover_builder {
public:
    cover_builder(const model& m, const universe& u, const layer_def& input_def) : m_(m), u_(u), input_def_(input_def) {
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

    /// Steps 2 to 4: greedy cover of every item by nodes and their inputs, then pruning.
    /// `input_cost` is what a new InputLayer shape counts for against a node.
    void choose(double input_cost, double rarity, std::uint64_t seed) {
        input_cost_ = input_cost;
        // Rare items first: an item counts 1 / (how many configurations or kinds of edge give
        // it)^rarity, so the few ways to cover it are taken before common items use them up.
        std::vector<int> freq(at(items_), 0);
        for (const auto& C : configs_)
            for (int it : C.items) ++freq[at(it)];
        for (std::size_t p = 0; p < edges_of_pair_.size(); ++p) freq[p] += static_cast<int>(edges_of_pair_[p].size());
        weight_.resize(at(items_));
        rng r(seed);
        for (std::size_t i = 0; i < weight_.size(); ++i) {
            weight_[i] = std::pow(std::max(1, freq[i]), -rarity);
            if (seed) weight_[i] *= 1.0 + 0.2 * r.unit();  // other runs break ties otherwise
        }
        st_ = state{};
        st_.cnt.assign(at(items_), 0);
        greedy();
        prune();
        fill(st_);
    }

    /// Large-neighbourhood search: removes every node of one class (each class in turn), covers
    /// what that uncovers greedily again, and keeps the result when the model is smaller.
    bool improve(int rounds) {
        bool any = false;
        std::vector<std::size_t> present;
        auto destroy = [&](std::size_t cls) {
            const state before = st_;
            const double size = real_size(st_);
            for (std::size_t v = 0; v < st_.nodes.size(); ++v) {
                if (st_.nodes[v].cfg < 0) continue;
                if (at(configs_[at(st_.nodes[v].cfg)].cls) == cls) remove_node(st_, static_cast<int>(v));
            }
            greedy();
            prune();
            fill(st_);
            if (st_.covered == items_ && real_size(st_) < size - 1e-9) return true;
            st_ = before;
            return false;
        };
        for (int round = 0; round < rounds; ++round) {
            present.clear();
            for (const auto& n : st_.nodes) {
                if (n.cfg < 0) continue;
                const auto c = at(configs_[at(n.cfg)].cls);
                if (std::find(present.begin(), present.end(), c) == present.end()) present.push_back(c);
            }
            std::sort(present.begin(), present.end());
            bool better = false;
            for (std::size_t c : present) better |= destroy(c);
            any |= better;
            if (!better) break;
        }
        return any;
    }

private:
    /// Steps 2 and 3: adds the best candidate step until every item is covered.
    void greedy() {
        while (st_.covered < items_) {
            have_best_ = false;
            base_cost_ = cost(st_);
            const std::size_t live = st_.nodes.size();
            for (std::size_t c = 0; c < configs_.size(); ++c) {
                const config& C = configs_[c];
                // A new node of this configuration on an InputLayer, for its own items.
                bool fresh = false;
                for (int it : C.items) fresh = fresh || st_.cnt[at(it)] == 0;
                // (On the input shapes of a few of its exact configurations: the first, the one in
                // the middle and the last.)
                const std::size_t n = C.groups.size();
                const std::size_t picks[3] = {0, n / 2, n - 1};
                for (std::size_t k = 0; k < 3 && fresh; ++k)
                    if (k == 0 || (picks[k] != picks[k - 1] && picks[k] != picks[0]))
                        try_candidate([&](state& s) { return place(s, static_cast<int>(c), C.groups[picks[k]], -1, -1, 0) >= 0; });
                // A new node read from a node there is, for a pair nothing covers yet (or for its
                // own items).
                for (std::size_t x = 0; x < live; ++x) {
                    if (st_.nodes[x].cfg < 0) continue;
                    const int p = pair_of(st_.nodes[x].cfg, static_cast<int>(c));
                    if (p < 0 || (st_.cnt[at(p)] != 0 && !fresh)) continue;
                    try_candidate([&](state& s) { return place(s, static_cast<int>(c), -1, static_cast<int>(x), -1, 0) >= 0; });
                    for (int ch : chains_of_pair_[at(p)])
                        try_candidate([&](state& s) { return place(s, static_cast<int>(c), -1, static_cast<int>(x), ch, 0) >= 0; });
                }
            }
            // An original edge, both ends new, for a pair nothing covers yet.
            for (std::size_t p = 0; p < edges_of_pair_.size(); ++p) {
                if (st_.cnt[p] != 0) continue;
                for (const edge& e : edges_of_pair_[p]) {
                    try_candidate([&](state& s) {
                        const int x = place(s, config_of_[at(e.a)], e.a, -1, -1, 0);
                        return x >= 0 && place(s, config_of_[at(e.b)], e.b, x, e.chain, at(e.j)) >= 0;
                    });
                    // Or the producer alone, to feed a node there is (a merge, say, whose other
                    // inputs have its output's shape).
                    try_candidate([&](state& s) { return place(s, config_of_[at(e.a)], e.a, -1, -1, 0) >= 0; });
                }
            }
            // An original merge with its producers, for the pairs into it nothing covers yet
            // (its producers' outputs fit together, as in the original).
            for (int b : merges_) {
                bool wanted = false;
                for (std::size_t j = 0; j < m_.nodes[at(b)].inputs.size(); ++j) {
                    const auto [a, ch] = producer(b, j);
                    if (a >= 0) wanted = wanted || st_.cnt[at(pair_of(config_of_[at(a)], config_of_[at(b)]))] == 0;
                }
                if (wanted) try_candidate([&](state& s) { return place_merge(s, b) >= 0; });
            }
            if (!have_best_) break;
            st_ = std::move(best_);
        }
    }

public:
    /// Whether every original item is covered.
    bool complete() const { return st_.covered == items_; }

    /// Step 5: the chosen nodes as a model: InputLayers for the slots that read none (one per shape
    /// and dtype), then the nodes, producers first.
    model build() const {
        model r;
        r.seed = m_.seed;
        const auto& N = st_.nodes;
        auto input_for = [&](const shape& s, dtype t) {
            for (std::size_t k = 0; k < r.nodes.size(); ++k)
                if (r.nodes[k].layer == &input_def_ && r.nodes[k].out == s && r.nodes[k].type == t) return static_cast<int>(k);
            node in = make_node(input_def_, "input_" + std::to_string(r.nodes.size() + 1));
            ints dims;
            for (auto d : s.sample()) dims.push(d);
            in.set("shape", dims);
            in.set("dtype", std::string(name_of(t)));
            in.out = s;
            in.type = t;
            r.nodes.push_back(std::move(in));
            return static_cast<int>(r.nodes.size() - 1);
        };
        for (const auto& c : N)
            if (c.cfg >= 0)
                for (std::size_t j = 0; j < c.from.size(); ++j)
                    if (c.from[j] < 0) input_for(c.in[j], c.in_type[j]);
        std::vector<int> where(N.size(), -1);
        std::vector<std::string> names;
        for (const auto& nd : r.nodes) names.push_back(nd.name);
        auto unique_name = [&](std::string base) {
            std::string s = base;
            for (int k = 2; std::find(names.begin(), names.end(), s) != names.end(); ++k) s = base + "_" + std::to_string(k);
            names.push_back(s);
            return s;
        };
        // Kahn's order, the earliest made first among the ready nodes.
        for (;;) {
            int next = -1;
            for (std::size_t k = 0; k < N.size() && next < 0; ++k) {
                if (N[k].cfg < 0 || where[k] >= 0) continue;
                bool ready = true;
                for (int f : N[k].from) ready = ready && (f < 0 || where[at(f)] >= 0);
                if (ready) next = static_cast<int>(k);
            }
            if (next < 0) break;
            const snode& c = N[at(next)];
            node nd = m_.nodes[at(c.var)];
            nd.name = unique_name(nd.name);
            nd.inputs.resize(c.from.size());
            for (std::size_t j = 0; j < c.from.size(); ++j) {
                int src = c.from[j] < 0 ? input_for(c.in[j], c.in_type[j]) : where[at(c.from[j])];
                if (c.from[j] >= 0 && c.via[j] >= 0)
                    for (int a : chains_[at(c.via[j])].adapters) {
                        node ad = m_.nodes[at(a)];
                        ad.name = unique_name(ad.name);
                        ad.inputs = {src};
                        r.nodes.push_back(std::move(ad));
                        src = static_cast<int>(r.nodes.size() - 1);
                    }
                nd.inputs[j] = src;
            }
            where[at(next)] = static_cast<int>(r.nodes.size());
            r.nodes.push_back(std::move(nd));
        }
        (void)infer_shapes(r);  // the adapters' copies read new shapes; exactness is checked after
        set_outputs(r);
        return r;
    }

    /// Outputs: the nodes nobody reads.
    static void set_outputs(model& r) {
        std::vector<char> read(r.nodes.size(), 0);
        for (const auto& nd : r.nodes)
            for (int s : nd.inputs) read[at(s)] = 1;
        r.outputs.clear();
        for (std::size_t i = 0; i < r.nodes.size(); ++i)
            if (!read[i]) r.outputs.push_back(static_cast<int>(i));
    }

private:
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
            if (!reduction_criterion(cr) || cr == criterion::layer_pair) return;
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
    /// chains are kept for reuse), and one edge per pair and kind of end.
    void collect_edges() {
        std::unordered_map<std::uint64_t, char> kinds;
        producer_of_.resize(m_.nodes.size());
        for (std::size_t b = 0; b < m_.nodes.size(); ++b) {
            if (slot_[b] < 0) continue;
            const auto& ins = m_.nodes[b].inputs;
            producer_of_[b].assign(ins.size(), {-1, -1});
            for (std::size_t j = 0; j < ins.size(); ++j) {
                int src = ins[j];
                std::vector<int> adapters;
                while (slot_[at(src)] < 0 && m_.nodes[at(src)].layer->fam == family::adapter && m_.nodes[at(src)].inputs.size() == 1) {
                    adapters.push_back(src);
                    src = m_.nodes[at(src)].inputs[0];
                }
                if (slot_[at(src)] < 0) continue;
                std::reverse(adapters.begin(), adapters.end());
                // Whether the edge makes a pair is the universe's call (adapters between may or
                // may not count as transparent).
                const int p = edge_pair(src, adapters, static_cast<int>(b));
                if (p < 0) continue;
                pair_[classes_ * at(slot_[at(src)]) + at(slot_[b])] = p;
                if (edges_of_pair_.size() <= at(p)) {
                    edges_of_pair_.resize(at(p) + 1);
                    chains_of_pair_.resize(at(p) + 1);
                }
                int ch = -1;
                if (!adapters.empty()) {
                    for (int c : chains_of_pair_[at(p)])
                        if (same_chain(chains_[at(c)], adapters, p)) ch = c;
                    if (ch < 0) {
                        ch = static_cast<int>(chains_.size());
                        chains_of_pair_[at(p)].push_back(ch);
                        chains_.push_back(chain{std::move(adapters), p});
                    }
                }
                producer_of_[b][j] = {src, ch};
                // One edge per kind: the ends' exact configurations, the slot and the chain.
                hasher h;
                h.mix(static_cast<std::uint64_t>(rep_of(src))).mix(static_cast<std::uint64_t>(rep_of(static_cast<int>(b))));
                h.mix(j).mix(static_cast<std::uint64_t>(ch + 1));
                if (kinds.emplace(h.value(), 0).second) edges_of_pair_[at(p)].push_back(edge{src, static_cast<int>(b), static_cast<int>(j), ch});
            }
        }
        edges_of_pair_.resize(at(items_));
        chains_of_pair_.resize(at(items_));
        // One original merge per kind: its exact configuration and its producers'.
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
        // Of the edges (and merges) whose ends have the same configurations, a few spread over the
        // original are enough: they differ only in shapes.
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

    // ---- the state ----

    void count(state& s, int item, int d) const {
        int& c = s.cnt[at(item)];
        if (d > 0 && c++ == 0) {
            ++s.covered;
            s.weight += weight_[at(item)];
        }
        if (d < 0 && --c == 0) {
            --s.covered;
            s.weight -= weight_[at(item)];
        }
    }
    /// The pair slot j of node y makes (-1 when it reads an InputLayer).
    int slot_pair(const state& s, int y, std::size_t j) const {
        const int x = s.nodes[at(y)].from[j];
        return x < 0 ? -1 : pair_of(s.nodes[at(x)].cfg, s.nodes[at(y)].cfg);
    }
    /// What slot j of y reads from its producer: its output, through the chain.
    outcome source(state& s, int y, std::size_t j) {
        const snode& Y = s.nodes[at(y)];
        const snode& X = s.nodes[at(Y.from[j])];
        if (Y.via[j] < 0) return outcome{true, X.out, X.type};
        return run_chain(Y.via[j], X.out, X.type);
    }
    /// Whether a is b or feeds b, directly or not.
    bool reaches(const state& s, int a, int b) const {
        if (a == b) return true;
        stack_.assign(1, b);
        seen_.assign(s.nodes.size(), 0);
        while (!stack_.empty()) {
            const int v = stack_.back();
            stack_.pop_back();
            for (int f : s.nodes[at(v)].from) {
                if (f < 0 || seen_[at(f)]) continue;
                if (f == a) return true;
                seen_[at(f)] = 1;
                stack_.push_back(f);
            }
        }
        return false;
    }

    /// Recomputes y's output from its inputs, with its own parameter values or, failing that,
    /// another variant of its configuration. False when none fits.
    bool settle(state& s, int y) {
        snode& Y = s.nodes[at(y)];
        for (std::size_t j = 0; j < Y.from.size(); ++j) {
            if (Y.from[j] < 0) continue;
            const outcome o = source(s, y, j);
            if (!o.ok) return false;
            s.nodes[at(y)].in[j] = o.out;
            s.nodes[at(y)].in_type[j] = o.type;
        }
        snode& Z = s.nodes[at(y)];
        const outcome* r = &run_node(Z.var, span_of(Z.in), span_of(Z.in_type));
        if (!r->ok)
            for (int v : configs_[at(Z.cfg)].variants) {
                if (v == Z.var || m_.nodes[at(v)].inputs.size() != Z.in.size()) continue;
                r = &run_node(v, span_of(Z.in), span_of(Z.in_type));
                if (r->ok) {
                    s.nodes[at(y)].var = v;
                    break;
                }
            }
        if (!r->ok) return false;
        s.nodes[at(y)].out = r->out;
        s.nodes[at(y)].type = r->type;
        return true;
    }

    /// Re-settles z and everything it feeds, producers first.
    bool refresh(state& s, int z) {
        std::vector<char> mark(s.nodes.size(), 0), done(s.nodes.size(), 0);
        mark[at(z)] = 1;
        for (bool grew = true; grew;) {
            grew = false;
            for (std::size_t k = 0; k < s.nodes.size(); ++k) {
                if (mark[k] || s.nodes[k].cfg < 0) continue;
                for (int f : s.nodes[k].from)
                    if (f >= 0 && mark[at(f)]) {
                        mark[k] = 1;
                        grew = true;
                        break;
                    }
            }
        }
        for (bool progress = true; progress;) {
            progress = false;
            for (std::size_t k = 0; k < s.nodes.size(); ++k) {
                if (!mark[k] || done[k]) continue;
                bool ready = true;
                for (int f : s.nodes[k].from) ready = ready && (f < 0 || !mark[at(f)] || done[at(f)]);
                if (!ready) continue;
                if (!settle(s, static_cast<int>(k))) return false;
                done[k] = 1;
                progress = true;
            }
        }
        return true;
    }

    /// Adds a node of configuration cfg: with variant var's parameter values and input shapes
    /// when x < 0 (on InputLayers), else reading x at slot j (through chain ch; a merge reads
    /// InputLayers of the same shape at its other slots). Then lets it feed, for pairs nothing
    /// covers yet, the slots of the nodes there are. Returns the new node, or -1.
    int place(state& s, int cfg, int var, int x, int ch, std::size_t j) {
        const config& C = configs_[at(cfg)];
        snode y;
        y.cfg = cfg;
        if (var >= 0 && m_.nodes[at(var)].inputs.size() > max_slots) return -1;
        if (x < 0) {
            y.var = var;
            for (int src : m_.nodes[at(var)].inputs) {
                y.in.push_back(m_.nodes[at(src)].out);
                y.in_type.push_back(m_.nodes[at(src)].type);
            }
            const outcome& r = run_node(var, span_of(y.in), span_of(y.in_type));
            if (!r.ok) return -1;
            y.out = r.out;
            y.type = r.type;
        } else {
            outcome src{true, s.nodes[at(x)].out, s.nodes[at(x)].type};
            if (ch >= 0) src = run_chain(ch, src.out, src.type);
            if (!src.ok) return -1;
            const int first = var >= 0 ? var : -1;
            const outcome* r = nullptr;
            auto attempt = [&](int v) {
                const std::size_t k = m_.nodes[at(v)].inputs.size();
                if (j >= k || k > max_slots) return false;
                y.in.assign(k, src.out);
                y.in_type.assign(k, src.type);
                r = &run_node(v, span_of(y.in), span_of(y.in_type));
                if (!r->ok) return false;
                y.var = v;
                return true;
            };
            bool found = first >= 0 && attempt(first);
            for (std::size_t k = 0; k < C.variants.size() && !found; ++k) found = attempt(C.variants[k]);
            if (!found) return -1;
            y.out = r->out;
            y.type = r->type;
        }
        y.from.assign(y.in.size(), -1);
        y.via.assign(y.in.size(), -1);
        if (x >= 0) {
            y.from[j] = x;
            y.via[j] = ch;
        }
        s.nodes.push_back(std::move(y));
        const int id = static_cast<int>(s.nodes.size() - 1);
        for (int it : C.items) count(s, it, +1);
        if (x >= 0) count(s, slot_pair(s, id, j), +1);
        feed_others(s, id);
        return id;
    }

    /// Adds original merge b and its universe producers (each on InputLayers of its original
    /// input shapes, or a node there is with the same configuration and output), wired as in
    /// the original. Returns the merge's node, or -1.
    int place_merge(state& s, int b) {
        const node& B = m_.nodes[at(b)];
        if (B.inputs.size() > max_slots) return -1;
        snode y;
        y.cfg = config_of_[at(b)];
        y.var = b;
        for (std::size_t j = 0; j < B.inputs.size(); ++j) {
            const auto [a, ch] = producer(b, j);
            int x = -1;
            if (a >= 0) {
                for (std::size_t k = 0; k < s.nodes.size() && x < 0; ++k)
                    if (s.nodes[k].cfg == config_of_[at(a)] && s.nodes[k].out == m_.nodes[at(a)].out && s.nodes[k].type == m_.nodes[at(a)].type)
                        x = static_cast<int>(k);
                if (x < 0) x = place(s, config_of_[at(a)], a, -1, -1, 0);
                if (x < 0) return -1;
            }
            y.from.push_back(x);
            y.via.push_back(x < 0 ? -1 : ch);
            y.in.push_back(m_.nodes[at(B.inputs[j])].out);
            y.in_type.push_back(m_.nodes[at(B.inputs[j])].type);
        }
        s.nodes.push_back(std::move(y));
        const int id = static_cast<int>(s.nodes.size() - 1);
        for (int it : configs_[at(s.nodes[at(id)].cfg)].items) count(s, it, +1);
        for (std::size_t j = 0; j < s.nodes[at(id)].from.size(); ++j)
            if (s.nodes[at(id)].from[j] >= 0) count(s, slot_pair(s, id, j), +1);
        if (!settle(s, id)) return -1;
        feed_others(s, id);
        return id;
    }

    /// Lets node y feed slots of other nodes where that covers a pair nothing covers yet: a slot
    /// that reads an InputLayer or whose pair something else covers too, or a new slot of a merge.
    void feed_others(state& s, int y) {
        for (std::size_t z = 0; z < s.nodes.size(); ++z) {
            if (s.nodes[z].cfg < 0 || static_cast<int>(z) == y) continue;
            const int p = pair_of(s.nodes[at(y)].cfg, s.nodes[z].cfg);
            if (p < 0 || s.cnt[at(p)] != 0 || reaches(s, static_cast<int>(z), y)) continue;
            const std::size_t slots = s.nodes[z].from.size();
            const bool merge = m_.nodes[at(s.nodes[z].var)].layer->is_merge();
            for (std::size_t j = 0; j <= slots && s.cnt[at(p)] == 0; ++j) {
                if (j == slots && (!merge || slots >= max_slots || static_cast<int>(slots) >= m_.nodes[at(s.nodes[z].var)].layer->arity.max)) break;
                const int old = j < slots ? slot_pair(s, static_cast<int>(z), j) : -1;
                if (old >= 0 && s.cnt[at(old)] < 2) continue;
                for (int ch = -1; ch < static_cast<int>(chains_of_pair_[at(p)].size()); ++ch) {
                    state t = s;
                    snode& Z = t.nodes[z];
                    if (j == slots) {
                        Z.from.push_back(-1);
                        Z.via.push_back(-1);
                        Z.in.push_back(s.nodes[at(y)].out);
                        Z.in_type.push_back(s.nodes[at(y)].type);
                    }
                    if (old >= 0) count(t, old, -1);
                    Z.from[j] = y;
                    Z.via[j] = ch < 0 ? -1 : chains_of_pair_[at(p)][at(ch)];
                    count(t, p, +1);
                    if (refresh(t, static_cast<int>(z))) {
                        s = std::move(t);
                        break;
                    }
                    // A node that reads only an InputLayer, and that nothing reads yet, may read
                    // another shape: one on which it gives exactly what z reads there.
                    if (ch >= 0 || !loose(s, y)) continue;
                    const shape want = j < slots ? s.nodes[z].in[j] : s.nodes[z].in[0];
                    const auto in = solve_input(s.nodes[at(y)].var, s.nodes[at(y)].in[0], s.nodes[at(y)].in_type[0], want);
                    if (!in) continue;
                    state r = s;
                    r.nodes[at(y)].in[0] = *in;
                    if (!settle(r, y) || !(r.nodes[at(y)].out == want)) continue;
                    snode& R = r.nodes[z];
                    if (j == slots) {
                        R.from.push_back(-1);
                        R.via.push_back(-1);
                        R.in.push_back(want);
                        R.in_type.push_back(r.nodes[at(y)].type);
                    }
                    if (old >= 0) count(r, old, -1);
                    R.from[j] = y;
                    R.via[j] = -1;
                    count(r, p, +1);
                    if (refresh(r, static_cast<int>(z))) {
                        s = std::move(r);
                        break;
                    }
                }
            }
        }
    }

    /// Whether node y has one input slot, reads an InputLayer there, and nothing reads it.
    bool loose(const state& s, int y) const {
        if (s.nodes[at(y)].from.size() != 1 || s.nodes[at(y)].from[0] >= 0) return false;
        for (const auto& n : s.nodes)
            if (n.cfg >= 0)
                for (int f : n.from)
                    if (f == y) return false;
        return true;
    }

    /// An input shape on which node var's parameter values give exactly `want` and cover its
    /// configuration's items: each axis found by bisection (an output axis grows with the same
    /// input axis), then axes the output does not depend on tried for the input's bucket.
    std::optional<shape> solve_input(int var, shape in, dtype t, const shape& want) {
        const node& V = m_.nodes[at(var)];
        if (in.rank() != want.rank() && V.layer->fam != family::pool) return std::nullopt;
        auto geometry = [&](const shape& x) -> std::optional<shape> {
            const shape ins[1] = {x};
            auto r = V.layer->infer({ins, 1}, V.params);
            if (!r || r->rank() != want.rank()) return std::nullopt;
            return *r;
        };
        for (int a = 1; a < in.rank() && a < want.rank(); ++a) {
            std::int64_t lo = 1, hi = std::int64_t{1} << 14;
            auto reaches_want = [&](std::int64_t v) {
                shape x = in;
                x[a] = v;
                const auto o = geometry(x);
                return o && (*o)[a] >= want[a];
            };
            if (!reaches_want(hi)) return std::nullopt;
            while (lo < hi) {
                const std::int64_t mid = lo + (hi - lo) / 2;
                if (reaches_want(mid)) hi = mid;
                else lo = mid + 1;
            }
            in[a] = lo;
        }
        const auto o = geometry(in);
        if (!o || !(*o == want)) return std::nullopt;
        const dtype ts[1] = {t};
        auto fits = [&](const shape& x) {
            const shape ins[1] = {x};
            const outcome& r = run_node(var, ins, ts);
            return r.ok && r.out == want;
        };
        if (fits(in)) return in;
        for (int a = in.rank() - 1; a >= 1; --a)
            for (std::int64_t v = 1; v <= 4096; v = v < 4 ? v + 1 : v * 3 / 2) {
                shape x = in;
                x[a] = v;
                if (fits(x)) return x;
            }
        return std::nullopt;
    }

    /// The size of the model a state gives: nodes, copied adapters, and InputLayers (one per
    /// shape and dtype of the slots that read none), these weighted by input_cost_.
    double cost(const state& s) const { return cost(s, input_cost_); }
    double cost(const state& s, double input_cost) const {
        double k = 0;
        std::vector<std::pair<const shape*, dtype>> inputs;
        for (const auto& c : s.nodes) {
            if (c.cfg < 0) continue;
            k += 1;
            for (std::size_t j = 0; j < c.from.size(); ++j) {
                if (c.from[j] >= 0) {
                    if (c.via[j] >= 0) k += static_cast<double>(chains_[at(c.via[j])].adapters.size());
                    continue;
                }
                bool seen = false;
                for (const auto& [sh, t] : inputs) seen = seen || (*sh == c.in[j] && t == c.in_type[j]);
                if (!seen) inputs.emplace_back(&c.in[j], c.in_type[j]);
            }
        }
        return k + input_cost * static_cast<double>(inputs.size());
    }

    /// Applies a candidate step to a copy of the state; keeps it when it covers the most new
    /// items per unit of added size so far (ties: more new items, then the first considered).
    template <class F>
    void try_candidate(F&& step) {
        state s = st_;
        if (!step(s)) return;
        if (s.covered <= st_.covered) return;
        const double gain = s.weight - st_.weight;
        const double c = std::max(0.25, cost(s) - base_cost_);
        const double lhs = gain * best_cost_, rhs = best_gain_ * c;
        if (!have_best_ || lhs > rhs + 1e-9 || (lhs > rhs - 1e-9 && gain > best_gain_)) {
            have_best_ = true;
            best_ = std::move(s);
            best_gain_ = gain;
            best_cost_ = c;
        }
    }

    /// Removes node v; the slots it fed read an InputLayer of the same shape instead.
    void remove_node(state& s, int v) const {
        for (std::size_t z = 0; z < s.nodes.size(); ++z) {
            if (s.nodes[z].cfg < 0) continue;
            for (std::size_t j = 0; j < s.nodes[z].from.size(); ++j)
                if (s.nodes[z].from[j] == v) {
                    count(s, slot_pair(s, static_cast<int>(z), j), -1);
                    s.nodes[z].from[j] = -1;
                    s.nodes[z].via[j] = -1;
                }
        }
        for (std::size_t j = 0; j < s.nodes[at(v)].from.size(); ++j)
            if (s.nodes[at(v)].from[j] >= 0) count(s, slot_pair(s, v, j), -1);
        for (int it : configs_[at(s.nodes[at(v)].cfg)].items) count(s, it, -1);
        s.nodes[at(v)].cfg = -1;
    }

    /// Step 4: drops each node whose items and pairs the others cover too, the latest first.
    void prune() {
        for (std::size_t v = st_.nodes.size(); v-- > 0;) {
            if (st_.nodes[v].cfg < 0) continue;
            state s = st_;
            remove_node(s, static_cast<int>(v));
            if (s.covered == items_ && cost(s) <= cost(st_)) st_ = std::move(s);
        }
    }

    /// The size of the model a state gives, every InputLayer counted.
    double real_size(const state& s) const { return cost(s, 1.0); }

    /// Slots that read an InputLayer read instead a node of exactly that output, where the pair
    /// that makes is one of the original's (fewer InputLayers, nothing else changes).
    void fill(state& s) const {
        for (std::size_t y = 0; y < s.nodes.size(); ++y) {
            if (s.nodes[y].cfg < 0) continue;
            for (std::size_t j = 0; j < s.nodes[y].from.size(); ++j) {
                if (s.nodes[y].from[j] >= 0) continue;
                for (std::size_t x = 0; x < s.nodes.size(); ++x) {
                    if (s.nodes[x].cfg < 0 || reaches(s, static_cast<int>(y), static_cast<int>(x))) continue;
                    if (!(s.nodes[x].out == s.nodes[y].in[j]) || s.nodes[x].type != s.nodes[y].in_type[j]) continue;
                    const int p = pair_of(s.nodes[x].cfg, s.nodes[y].cfg);
                    if (p < 0) continue;
                    s.nodes[y].from[j] = static_cast<int>(x);
                    count(s, p, +1);
                    break;
                }
            }
        }
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
        cover_builder::set_outputs(c);
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
