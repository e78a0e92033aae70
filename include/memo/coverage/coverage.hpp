#pragma once
// Coverage metrics. One concept; a metric per criterion, and memo_coverage, which tracks all of
// them in one pass over a model (what the search uses).
#include <bit>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../engine/concepts.hpp"
#include "universe.hpp"

namespace memo {

/// A fixed-size bit set that counts its ones.
class item_set {
public:
    explicit item_set(std::size_t n = 0) : words_((n + 63) / 64), size_(n) {}
    bool test(std::size_t i) const noexcept { return i < size_ && (words_[i / 64] >> (i % 64)) & 1u; }
    /// Sets bit i; true when it was not set before.
    bool set(std::size_t i) noexcept {
        if (i >= size_) return false;
        auto& w = words_[i / 64];
        const auto bit = std::uint64_t{1} << (i % 64);
        if (w & bit) return false;
        w |= bit;
        ++count_;
        return true;
    }
    std::size_t count() const noexcept { return count_; }
    std::size_t size() const noexcept { return size_; }
    const std::vector<std::uint64_t>& words() const noexcept { return words_; }
    /// Replaces the bits (a saved words()); throws when the sizes differ.
    void assign(const std::vector<std::uint64_t>& w) {
        if (w.size() != words_.size())
            throw error("a saved item set of " + std::to_string(w.size()) + " words cannot restore one of " + std::to_string(words_.size()));
        words_ = w;
        if (size_ % 64 && !words_.empty()) words_.back() &= (std::uint64_t{1} << (size_ % 64)) - 1;
        count_ = 0;
        for (auto x : words_) count_ += static_cast<std::size_t>(std::popcount(x));
    }
    /// Ors in another set of the same size (used to merge coverage).
    void merge(const item_set& o) {
        count_ = 0;
        for (std::size_t k = 0; k < words_.size() && k < o.words_.size(); ++k) {
            words_[k] |= o.words_[k];
            count_ += static_cast<std::size_t>(std::popcount(words_[k]));
        }
    }

private:
    std::vector<std::uint64_t> words_;
    std::size_t size_ = 0, count_ = 0;
};

/// New items per criterion, from one model.
struct coverage_delta {
    std::array<std::size_t, criteria_count> by{};
    std::size_t graph = 0;  // new connectable graph pairs, where the search pursues them (memo_coverage::pursue_graph_pairs)
    std::size_t extra = 0;  // new items of the metric attached beside MEMO's criteria (memo_coverage::attach)
    std::size_t operator[](criterion c) const noexcept { return by[static_cast<std::size_t>(c)]; }
    /// MEMO's diversity test: anything new under type, pair, parameter or input coverage.
    std::size_t memo_total() const noexcept {
        return (*this)[criterion::layer_type] + (*this)[criterion::layer_pair] + (*this)[criterion::layer_param] + (*this)[criterion::layer_input];
    }
    /// The search's diversity test and fitness: MEMO's, the graph pairs' where pursued, and the
    /// extra metric's new items.
    operator std::size_t() const noexcept { return memo_total() + graph + extra; }
};

/// One criterion's count, as stats.json writes it: {"name": {"covered": c, "total": t}}.
struct criterion_count {
    std::string name;
    std::size_t covered = 0, total = 0;
    friend bool operator==(const criterion_count&, const criterion_count&) = default;
};

/// Any coverage metric over memo's model, held by value behind an interface: what
/// memo_coverage::attach keeps, so that a metric of one's own (say, DeepStellar's RNN-state
/// coverage, rnn_state/rnn_coverage.hpp) counts in the search beside MEMO's criteria: its new items
/// join MEMO's in the diversity test and the fitness, and campaigns report, save and restore it
/// with them. A metric is a type that models coverage_metric, nothing more; what campaigns report
/// and keep of it comes from members it may have:
///   m.criteria()     -> std::vector<criterion_count>   its criteria (else one, "extra")
///   m.save()         -> std::string                    its state for a checkpoint (else none)
///   m.restore(text)                                    and back
class any_metric {
public:
    template <class M>
    requires(!std::same_as<std::remove_cvref_t<M>, any_metric>) any_metric(M m) : p_(std::make_unique<held<M>>(std::move(m))) {
        static_assert(coverage_metric<M, model>, "a metric needs add(m), gain(m) const, covered() const and total() const (coverage_metric)");
    }
    any_metric(const any_metric& o) : p_(o.p_->clone()) {}
    any_metric(any_metric&&) noexcept = default;
    any_metric& operator=(const any_metric& o) { return *this = any_metric(o); }
    any_metric& operator=(any_metric&&) noexcept = default;
    ~any_metric() = default;

    std::size_t add(const model& m) { return p_->add(m); }
    std::size_t gain(const model& m) const { return p_->gain(m); }
    std::size_t covered() const { return p_->covered(); }
    std::size_t total() const { return p_->total(); }
    std::vector<criterion_count> criteria() const { return p_->criteria(); }
    std::string save() const { return p_->save(); }
    void restore(std::string_view saved) { p_->restore(saved); }

private:
    struct base {
        virtual ~base() = default;
        virtual std::size_t add(const model& m) = 0;
        virtual std::size_t gain(const model& m) const = 0;
        virtual std::size_t covered() const = 0;
        virtual std::size_t total() const = 0;
        virtual std::vector<criterion_count> criteria() const = 0;
        virtual std::string save() const = 0;
        virtual void restore(std::string_view saved) = 0;
        virtual std::unique_ptr<base> clone() const = 0;
    };
    template <class M>
    struct held final : base {
        M m;
        explicit held(M x) : m(std::move(x)) {}
        std::size_t add(const model& x) override { return static_cast<std::size_t>(m.add(x)); }
        std::size_t gain(const model& x) const override { return static_cast<std::size_t>(m.gain(x)); }
        std::size_t covered() const override { return static_cast<std::size_t>(m.covered()); }
        std::size_t total() const override { return static_cast<std::size_t>(m.total()); }
        std::vector<criterion_count> criteria() const override {
            if constexpr (requires { m.criteria(); }) return m.criteria();
            else return {{"extra", covered(), total()}};
        }
        std::string save() const override {
            if constexpr (requires { m.save(); }) return m.save();
            else return {};
        }
        void restore(std::string_view saved) override {
            if constexpr (requires { m.restore(saved); }) m.restore(saved);
        }
        std::unique_ptr<base> clone() const override { return std::make_unique<held>(m); }
    };
    std::unique_ptr<base> p_;
};

/// All criteria at once.
class memo_coverage {
public:
    explicit memo_coverage(const registry& reg) : u_(&universe::of(reg)) {
        for (auto c : all_criteria) sets_[static_cast<std::size_t>(c)] = item_set(u_->total(c));
    }

    /// Adds a metric (any coverage_metric over memo's model) that counts beside MEMO's criteria
    /// (coverage_delta::extra); replaces any before.
    void attach(any_metric m) { extra_ = std::move(m); }
    const any_metric* extra() const noexcept { return extra_ ? &*extra_ : nullptr; }
    /// Whether a new connectable graph pair counts as new in the diversity test and the fitness
    /// (coverage_delta::graph), beside MEMO's four criteria; off, they are counted and reported only.
    void pursue_graph_pairs(bool on) noexcept { graph_pairs_ = on; }
    bool pursues_graph_pairs() const noexcept { return graph_pairs_; }
    any_metric* extra() noexcept { return extra_ ? &*extra_ : nullptr; }

    coverage_delta add(const model& m) {
        coverage_delta d;
        u_->items(m, [&](criterion c, std::size_t i) { d.by[static_cast<std::size_t>(c)] += sets_[static_cast<std::size_t>(c)].set(i); });
        if (extra_) d.extra = extra_->add(m);
        if (graph_pairs_) d.graph = d[criterion::graph_pair_connectable];
        return d;
    }
    coverage_delta gain(const model& m) const {
        coverage_delta d;
        if (extra_) d.extra = extra_->gain(m);
        // Items may repeat within a model: count each new one once.
        std::array<std::vector<std::size_t>, criteria_count> seen;
        u_->items(m, [&](criterion c, std::size_t i) {
            const auto k = static_cast<std::size_t>(c);
            if (sets_[k].test(i)) return;
            for (auto j : seen[k])
                if (j == i) return;
            seen[k].push_back(i);
            ++d.by[k];
        });
        if (graph_pairs_) d.graph = d[criterion::graph_pair_connectable];
        return d;
    }
    std::size_t covered() const noexcept {
        return covered(criterion::layer_type) + covered(criterion::layer_pair) + covered(criterion::layer_param) + covered(criterion::layer_input);
    }
    std::size_t total() const noexcept {
        return total(criterion::layer_type) + total(criterion::layer_pair) + total(criterion::layer_param) + total(criterion::layer_input);
    }
    std::size_t covered(criterion c) const noexcept { return sets_[static_cast<std::size_t>(c)].count(); }
    std::size_t total(criterion c) const noexcept { return u_->total(c); }
    const item_set& items(criterion c) const noexcept { return sets_[static_cast<std::size_t>(c)]; }
    item_set& items(criterion c) noexcept { return sets_[static_cast<std::size_t>(c)]; }
    const universe& space() const noexcept { return *u_; }

    /// Is this item covered? (-1 items, which do not exist, count as covered: nothing to gain.)
    bool has(criterion c, std::size_t item) const noexcept { return sets_[static_cast<std::size_t>(c)].test(item); }
    bool has(criterion c, int item) const noexcept { return item < 0 || has(c, static_cast<std::size_t>(item)); }

    /// What one node would add to MEMO's four criteria (its type, parameters, input, and the
    /// pairs of its input edges).
    std::size_t node_gain(const model& m, std::size_t i) const {
        std::size_t k = 0;
        u_->node_items(m, i, [&](criterion c, std::size_t item) {
            if (is_memos(c) && !has(c, item)) ++k;
        });
        return k;
    }

private:
    const universe* u_;
    std::array<item_set, criteria_count> sets_;
    std::optional<any_metric> extra_;
    bool graph_pairs_ = false;
};

/// One criterion as a metric of its own.
class criterion_coverage {
public:
    criterion_coverage(const registry& reg, criterion c) : u_(&universe::of(reg)), c_(c), set_(u_->total(c)) {}
    std::size_t add(const model& m) {
        std::size_t k = 0;
        u_->items(m, [&](criterion c, std::size_t i) {
            if (c == c_) k += set_.set(i);
        });
        return k;
    }
    std::size_t gain(const model& m) const {
        item_set probe = set_;
        std::size_t k = 0;
        u_->items(m, [&](criterion c, std::size_t i) {
            if (c == c_) k += probe.set(i);
        });
        return k;
    }
    std::size_t covered() const noexcept { return set_.count(); }
    std::size_t total() const noexcept { return set_.size(); }
    criterion which() const noexcept { return c_; }

private:
    const universe* u_;
    criterion c_;
    item_set set_;
};

static_assert(coverage_metric<memo_coverage, model>);
static_assert(coverage_metric<criterion_coverage, model>);

}  // namespace memo
