#pragma once
// The coverage universe of a registry: how the items of each criterion are numbered and counted.
//
//   layer_type              one item per layer class in the universe (MEMO: 67)
//   layer_pair              every ordered pair of classes, self-pairs included: N x N (MEMO: 4489)
//   layer_pair_connectable  COMET's subset: no merge layers, and the first class's output ranks
//                           overlap the second's input ranks
//   layer_param             per (class, parameter): a categorical parameter's values, or a numeric
//                           parameter's 5 buckets (+1 for None where allowed)
//   layer_param_effective   the same without inert parameters (regularizers, constraints, dropout
//                           rates: nothing changes at inference)
//   layer_input             per non-merge class: each accepted input rank, each dtype, and 5
//                           buckets of elements per sample
//   graph_pair              every ordered pair (producer, consumer) over all classes of the
//                           registry, InputLayer as a producer: the graph a library runs
//   graph_pair_connectable  its pairs that memo's shape rules let meet: a consumer that takes
//                           inputs, merges included, whose input ranks overlap the producer's
//                           output ranks
//
// MEMO's pair is a direct edge between two universe classes. Adapters (pad, crop, expand, ...),
// Input, Dense and Activation are outside the universe: in Conv2D -> CustomPadLayer -> ReLU MEMO
// counts no pair, since ReLU does not consume what Conv2D computed, but a padded copy of it. A
// library runs the adapter as an operation like any other (a Pad, a Slice, a Cast), and its
// optimiser rewrites such producer-consumer patterns: the graph pairs count Conv2D ->
// CustomPadLayer and CustomPadLayer -> ReLU. They sit beside MEMO's four criteria, whose figures
// (memo_coverage::covered) stay MEMO's; a search counts them as new where it pursues them
// (memo_coverage::pursue_graph_pairs).
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/model.hpp"

namespace memo {

enum class criterion : unsigned char {
    layer_type,
    layer_pair,
    layer_pair_connectable,
    layer_param,
    layer_param_effective,
    layer_input,
    graph_pair,
    graph_pair_connectable
};
inline constexpr std::array<criterion, 8> all_criteria{
    criterion::layer_type,  criterion::layer_pair, criterion::layer_pair_connectable, criterion::layer_param, criterion::layer_param_effective,
    criterion::layer_input, criterion::graph_pair, criterion::graph_pair_connectable};
inline constexpr std::size_t criteria_count = all_criteria.size();

constexpr std::string_view name_of(criterion c) noexcept {
    constexpr std::array<std::string_view, 8> names{"layer_type",  "layer_pair", "layer_pair_connectable", "layer_param", "layer_param_effective",
                                                    "layer_input", "graph_pair", "graph_pair_connectable"};
    return names[static_cast<std::size_t>(c)];
}

/// MEMO's four criteria: what its fitness sums and its seed reduction keeps (the others are
/// subsets of them, or memo's own).
constexpr bool is_memos(criterion c) noexcept {
    return c == criterion::layer_type || c == criterion::layer_pair || c == criterion::layer_param || c == criterion::layer_input;
}

/// Elements-per-sample bucket of an input shape: <=64, <=512, <=4096, <=32768, more.
inline int shape_bucket(const shape& s) noexcept {
    const auto e = s.elements();
    return e <= 64 ? 0 : e <= 512 ? 1 : e <= 4096 ? 2 : e <= 32768 ? 3 : 4;
}
inline constexpr int shape_buckets = 5;

class universe {
public:
    explicit universe(const registry& reg) : reg_(&reg) {
        slot_.assign(reg.size(), -1);
        for (std::size_t i = 0; i < reg.size(); ++i)
            if (reg[i].in_universe) {
                slot_[i] = static_cast<int>(classes_.size());
                classes_.push_back(&reg[i]);
            }
        const auto n = classes_.size();
        out_ranks_.resize(n);
        for (std::size_t s = 0; s < n; ++s) out_ranks_[s] = probe_output_ranks(*classes_[s]);
        connectable_.assign(n * n, -1);
        for (std::size_t a = 0; a < n; ++a)
            for (std::size_t b = 0; b < n; ++b)
                if (!classes_[a]->is_merge() && !classes_[b]->is_merge() && !(out_ranks_[a] & classes_[b]->ranks).empty())
                    connectable_[a * n + b] = static_cast<int>(connectable_count_++);
        param_offset_.resize(n);
        effective_offset_.resize(n);
        input_offset_.assign(n, -1);
        for (std::size_t s = 0; s < n; ++s) {
            const auto& ps = classes_[s]->params;
            for (const auto& p : ps) {
                param_offset_[s].push_back(static_cast<int>(param_total_));
                param_total_ += static_cast<std::size_t>(p.dom.buckets());
                effective_offset_[s].push_back(p.what == role::inert ? -1 : static_cast<int>(effective_total_));
                if (p.what != role::inert) effective_total_ += static_cast<std::size_t>(p.dom.buckets());
            }
            if (!classes_[s]->is_merge()) {
                input_offset_[s] = static_cast<int>(input_total_);
                input_total_ += static_cast<std::size_t>(classes_[s]->ranks.count() + static_cast<int>(all_dtypes.size()) + shape_buckets);
            }
        }
        const auto all = reg.size();
        std::vector<rank_set> all_out(all);
        for (std::size_t a = 0; a < all; ++a) {
            all_out[a] = slot_[a] >= 0 ? out_ranks_[static_cast<std::size_t>(slot_[a])] : probe_output_ranks(reg[a]);
            // A class whose parameters are sized to its input (a padding's amounts, a target
            // shape) infers nothing from drawn ones: it is taken to keep its input's ranks.
            if (all_out[a].empty()) all_out[a] = reg[a].ranks;
        }
        graph_connectable_.assign(all * all, -1);
        for (std::size_t a = 0; a < all; ++a)
            for (std::size_t b = 0; b < all; ++b)
                if (reg[b].arity.max != 0 && !(all_out[a] & reg[b].ranks).empty()) {
                    graph_connectable_[a * all + b] = static_cast<int>(graph_connectable_pairs_.size());
                    graph_connectable_pairs_.emplace_back(a, b);
                }
    }

    const registry& layers() const noexcept { return *reg_; }
    std::size_t classes() const noexcept { return classes_.size(); }
    const layer_def& class_at(std::size_t slot) const noexcept { return *classes_[slot]; }
    /// The universe slot of a layer type, or -1 when it is outside the universe.
    int slot_of(const layer_def& d) const noexcept { return slot_[reg_->index_of(d)]; }
    rank_set output_ranks(std::size_t slot) const noexcept { return out_ranks_[slot]; }

    std::size_t total(criterion c) const noexcept {
        const auto n = classes_.size();
        switch (c) {
            case criterion::layer_type: return n;
            case criterion::layer_pair: return n * n;
            case criterion::layer_pair_connectable: return connectable_count_;
            case criterion::layer_param: return param_total_;
            case criterion::layer_param_effective: return effective_total_;
            case criterion::layer_input: return input_total_;
            case criterion::graph_pair: return reg_->size() * reg_->size();
            case criterion::graph_pair_connectable: return graph_connectable_pairs_.size();
        }
        return 0;
    }

    // The item numbers, one function per kind of item (-1 where there is no such item).
    std::size_t pair_item(std::size_t a, std::size_t b) const noexcept { return a * classes_.size() + b; }
    /// A graph pair's items, by the two classes' indices in the registry (not universe slots).
    std::size_t graph_pair_item(std::size_t a, std::size_t b) const noexcept { return a * reg_->size() + b; }
    int graph_connectable_item(std::size_t a, std::size_t b) const noexcept { return graph_connectable_[a * reg_->size() + b]; }
    /// The (producer, consumer) registry indices of a connectable graph pair's item.
    std::pair<std::size_t, std::size_t> graph_connectable_pair(std::size_t item) const noexcept { return graph_connectable_pairs_[item]; }
    int connectable_item(std::size_t a, std::size_t b) const noexcept { return connectable_[a * classes_.size() + b]; }
    std::size_t param_item(std::size_t slot, std::size_t j, int bucket) const noexcept { return static_cast<std::size_t>(param_offset_[slot][j] + bucket); }
    int effective_item(std::size_t slot, std::size_t j, int bucket) const noexcept {
        const int o = effective_offset_[slot][j];
        return o < 0 ? -1 : o + bucket;
    }
    int input_rank_item(std::size_t slot, int rank) const noexcept {
        const auto ranks = classes_[slot]->ranks;
        if (input_offset_[slot] < 0 || !ranks.contains(rank)) return -1;
        return input_offset_[slot] + std::popcount(static_cast<unsigned>(ranks.bits & ((1u << rank) - 1)));
    }
    int input_dtype_item(std::size_t slot, dtype t) const noexcept {
        if (input_offset_[slot] < 0) return -1;
        return input_offset_[slot] + classes_[slot]->ranks.count() + static_cast<int>(t);
    }
    int input_bucket_item(std::size_t slot, int bucket) const noexcept {
        if (input_offset_[slot] < 0) return -1;
        return input_offset_[slot] + classes_[slot]->ranks.count() + static_cast<int>(all_dtypes.size()) + bucket;
    }

    /// Calls f(criterion, item) for the items of one node (its type, parameters and input) and
    /// of the pairs its input edges make.
    template <class F>
    void node_items(const model& m, std::size_t i, F&& f) const {
        graph_pair_items(m, i, f);
        const node& nd = m.nodes[i];
        const int s = slot_of(*nd.layer);
        if (s < 0) return;
        const auto us = static_cast<std::size_t>(s);
        f(criterion::layer_type, us);
        for (std::size_t j = 0; j < nd.params.size(); ++j) {
            const int b = nd.layer->params[j].dom.bucket_of(nd.params[j]);
            f(criterion::layer_param, param_item(us, j, b));
            if (const int e = effective_item(us, j, b); e >= 0) f(criterion::layer_param_effective, static_cast<std::size_t>(e));
        }
        for (int src : nd.inputs)
            for_each_universe_source(m, src, [&](std::size_t a) {
                f(criterion::layer_pair, pair_item(a, us));
                if (const int c = connectable_item(a, us); c >= 0) f(criterion::layer_pair_connectable, static_cast<std::size_t>(c));
            });
        if (input_offset_[us] >= 0 && !nd.inputs.empty()) {
            const node& src = m.nodes[static_cast<std::size_t>(nd.inputs[0])];
            if (const int r = input_rank_item(us, src.out.rank()); r >= 0) f(criterion::layer_input, static_cast<std::size_t>(r));
            f(criterion::layer_input, static_cast<std::size_t>(input_dtype_item(us, src.type)));
            f(criterion::layer_input, static_cast<std::size_t>(input_bucket_item(us, shape_bucket(src.out))));
        }
    }

    /// Calls f(criterion, item) for the graph pairs of node i's input edges (graph_pair, and
    /// graph_pair_connectable where the pair is one).
    template <class F>
    void graph_pair_items(const model& m, std::size_t i, F&& f) const {
        const node& nd = m.nodes[i];
        const auto b = reg_->index_of(*nd.layer);
        for (int src : nd.inputs) {
            const auto a = reg_->index_of(*m.nodes[static_cast<std::size_t>(src)].layer);
            f(criterion::graph_pair, graph_pair_item(a, b));
            if (const int c = graph_connectable_item(a, b); c >= 0) f(criterion::graph_pair_connectable, static_cast<std::size_t>(c));
        }
    }

    /// Calls f(criterion, item) for every item the model covers (items may repeat).
    template <class F>
    void items(const model& m, F&& f) const {
        for (std::size_t i = 0; i < m.nodes.size(); ++i) node_items(m, i, f);
    }

    /// A readable name for an item: "Conv2D", "Conv2D -> ReLU", "Conv2D.padding='same'", "Conv2D input rank 4".
    std::string describe(criterion c, std::size_t item) const {
        const auto n = classes_.size();
        auto cls = [&](std::size_t s) { return std::string(classes_[s]->name); };
        switch (c) {
            case criterion::layer_type: return cls(item);
            case criterion::layer_pair: return cls(item / n) + " -> " + cls(item % n);
            case criterion::layer_pair_connectable:
                for (std::size_t k = 0; k < connectable_.size(); ++k)
                    if (connectable_[k] == static_cast<int>(item)) return cls(k / n) + " -> " + cls(k % n);
                return "?";
            case criterion::graph_pair: return graph_pair_name(item);
            case criterion::graph_pair_connectable: {
                const auto [a, b] = graph_connectable_pairs_[item];
                return graph_pair_name(graph_pair_item(a, b));
            }
            case criterion::layer_param:
            case criterion::layer_param_effective: {
                const auto& offs = c == criterion::layer_param ? param_offset_ : effective_offset_;
                for (std::size_t s = 0; s < n; ++s)
                    for (std::size_t j = 0; j < offs[s].size(); ++j) {
                        const int o = offs[s][j];
                        const auto& p = classes_[s]->params[j];
                        if (o >= 0 && item >= static_cast<std::size_t>(o) && item < static_cast<std::size_t>(o + p.dom.buckets()))
                            return cls(s) + "." + std::string(p.name) + bucket_name(p, static_cast<int>(item - static_cast<std::size_t>(o)));
                    }
                return "?";
            }
            case criterion::layer_input:
                for (std::size_t s = 0; s < n; ++s) {
                    if (input_offset_[s] < 0) continue;
                    const auto base = static_cast<std::size_t>(input_offset_[s]);
                    const auto k = static_cast<std::size_t>(classes_[s]->ranks.count());
                    if (item < base || item >= base + k + all_dtypes.size() + shape_buckets) continue;
                    const auto off = item - base;
                    if (off < k) {
                        int r = -1, seen = 0;
                        classes_[s]->ranks.for_each([&](int rr) {
                            if (seen++ == static_cast<int>(off)) r = rr;
                        });
                        return cls(s) + " input rank " + std::to_string(r);
                    }
                    if (off < k + all_dtypes.size()) return cls(s) + " input dtype " + std::string(name_of(all_dtypes[off - k]));
                    return cls(s) + " input size bucket " + std::to_string(off - k - all_dtypes.size());
                }
                return "?";
        }
        return "?";
    }

    /// Calls f(slot) when node src is of a universe class: an edge src -> dst makes the pair
    /// (class of src, class of dst) only when both are in the universe and the edge is direct.
    template <class F>
    void for_each_universe_source(const model& m, int src, F&& f) const {
        if (const int s = slot_of(*m.nodes[static_cast<std::size_t>(src)].layer); s >= 0) f(static_cast<std::size_t>(s));
    }

    /// The universe of the default registry, built once.
    static const universe& of(const registry& reg);

private:
    std::string graph_pair_name(std::size_t item) const {
        const auto all = reg_->size();
        return std::string((*reg_)[item / all].name) + " -> " + std::string((*reg_)[item % all].name);
    }
    static std::string bucket_name(const param& p, int b) {
        if (auto c = std::get_if<choice>(&p.dom.d)) return "=" + to_string(c->options[static_cast<std::size_t>(b)]);
        if (std::holds_alternative<boolean>(p.dom.d)) return b ? "=true" : "=false";
        if (b == numeric_buckets) return "=None";
        return " bucket " + std::to_string(b);
    }

    /// The output ranks a class can produce: inference on probe inputs of each accepted rank,
    /// under its default parameters and a fixed sample of drawn ones.
    static rank_set probe_output_ranks(const layer_def& L) {
        if (L.arity.max == 0) return L.ranks;  // an input: its ranks are its output's
        rank_set out;
        rng r(0x6d656d6fULL);
        L.ranks.for_each([&](int rank) {
            shape probe;
            probe.push(shape::unknown);
            for (int d = 1; d < rank; ++d) probe.push(16);
            const shape ins[2] = {probe, probe};
            const std::size_t k = static_cast<std::size_t>(std::max(1, L.arity.min));
            std::vector<value> vals;
            for (int t = 0; t < 64; ++t) {
                vals.clear();
                for (const auto& p : L.params) vals.push_back(t == 0 ? p.fallback : p.dom.init(r));
                if (auto s = L.infer({ins, k}, vals)) out.bits |= rank_set::of(s->rank()).bits;
            }
        });
        return out;
    }

    const registry* reg_;
    std::vector<int> slot_;
    std::vector<const layer_def*> classes_;
    std::vector<rank_set> out_ranks_;
    std::vector<int> connectable_;
    std::size_t connectable_count_ = 0;
    std::vector<std::vector<int>> param_offset_, effective_offset_;
    std::vector<int> input_offset_;
    std::size_t param_total_ = 0, effective_total_ = 0, input_total_ = 0;
    std::vector<int> graph_connectable_;                                        // by registry indices a * size + b: the item, or -1
    std::vector<std::pair<std::size_t, std::size_t>> graph_connectable_pairs_;  // by item: the registry indices
};

inline const universe& universe::of(const registry& reg) {
    // One universe per registry, made on first use and kept for the program's life. Under a lock:
    // searches on threads of one process (ranks in tests/unit/cluster/exchange_test.cpp) ask for it
    // at once, and two unguarded first uses grew the list together.
    static std::mutex lock;
    static std::vector<std::unique_ptr<universe>> made;
    const std::lock_guard hold(lock);
    for (const auto& u : made)
        if (&u->layers() == &reg) return *u;
    made.push_back(std::make_unique<universe>(reg));
    return *made.back();
}

}  // namespace memo
