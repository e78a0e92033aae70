#pragma once
// Seed reduction, steps 2 to 4: the greedy cover, pruning, the neighbourhood search, and the
// cover as a model (see reduce.hpp).
#include "placement.hpp"

namespace memo {

namespace detail::reduction {

/// Steps 1 to 5: chooses the nodes and their inputs greedily, then wires them into a model.
class cover_builder : public placement {
public:
    using placement::placement;

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
};

}  // namespace detail::reduction

}  // namespace memo
