#pragma once
// Pairs of parameter values within one node (2-way combinatorial coverage): Conv2D's
// padding='same' together with a stride bucket, MaxPooling2D's pool_size bucket together with
// padding='valid', and so on. MEMO's parameter criterion counts each value alone, so a mutant that
// only combines two values seen before raises no coverage, and a fault that needs both values in
// one layer is reached by chance. A tuple of integers (a kernel, pool or stride size, a cropping)
// counts, besides its bucket, the order of its first two elements (equal, first smaller, first
// larger): a non-square window and a cropping that takes more from the top are values of their
// own, paired with the rest (asymmetric sizes and borders are where kernels go wrong). This
// metric is not one of MEMO's criteria: the campaign's
// execution stage uses it to choose which of the models that raised nothing keep idle workers
// busy (campaign/execute.hpp), and reports it among the executed coverage.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

#include "../engine/concepts.hpp"
#include "universe.hpp"

namespace memo {

inline constexpr std::string_view layer_param_pairs_name = "layer_param_pairs";

class param_pair_coverage {
public:
    explicit param_pair_coverage(const registry& reg) : u_(&universe::of(reg)) {
        // Inert parameters (regularizers, constraints, ...) change nothing a kernel computes: they
        // pair with nothing, as they count for nothing in layer_param_effective.
        for (std::size_t s = 0; s < u_->classes(); ++s) {
            std::vector<std::size_t> b;
            for (const auto& p : u_->class_at(s).params) {
                if (p.what == role::inert) continue;
                b.push_back(static_cast<std::size_t>(p.dom.buckets()));
                if (ordered(p)) b.push_back(3);
            }
            for (std::size_t i = 0; i < b.size(); ++i)
                for (std::size_t j = i + 1; j < b.size(); ++j) total_ += b[i] * b[j];
        }
    }

    std::size_t add(const model& m) {
        std::size_t k = 0;
        pairs(m, [&](std::uint64_t p) { k += seen_.insert(p).second; });
        return k;
    }
    std::size_t gain(const model& m) const {
        std::vector<std::uint64_t> fresh;
        pairs(m, [&](std::uint64_t p) {
            if (!seen_.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end()) fresh.push_back(p);
        });
        return fresh.size();
    }
    /// Is any pair of the model new? (Stops at the first.)
    bool raises(const model& m) const {
        bool any = false;
        pairs(m, [&](std::uint64_t p) { any = any || !seen_.count(p); });
        return any;
    }
    std::size_t covered() const noexcept { return seen_.size(); }
    std::size_t total() const noexcept { return total_; }

    /// The covered pairs, sorted (a checkpoint's), and back.
    std::vector<std::uint64_t> save() const {
        std::vector<std::uint64_t> v(seen_.begin(), seen_.end());
        std::sort(v.begin(), v.end());
        return v;
    }
    void restore(const std::vector<std::uint64_t>& v) { seen_ = {v.begin(), v.end()}; }

private:
    // A pair is its two layer_param_effective items, the smaller first: the items already say
    // which class, parameter and bucket, so the pair needs no more.
    // A tuple's order is an item above all of the universe's: the high bit, its parameter's first
    // layer_param item, and the order (0 equal, 1 first smaller, 2 first larger).
    template <class F>
    void pairs(const model& m, F&& f) const {
        std::vector<std::uint32_t> items;
        for (std::size_t i = 0; i < m.nodes.size(); ++i) {
            items.clear();
            u_->node_items(m, i, [&](criterion c, std::size_t item) {
                if (c == criterion::layer_param_effective) items.push_back(static_cast<std::uint32_t>(item));
            });
            const node& nd = m.nodes[i];
            const int slot = u_->slot_of(*nd.layer);
            for (std::size_t j = 0; slot >= 0 && j < nd.params.size(); ++j) {
                const auto* xs = std::get_if<ints>(&nd.params[j]);
                if (!xs || xs->n < 2 || !ordered(nd.layer->params[j])) continue;
                const std::uint32_t order = (*xs)[0] == (*xs)[1] ? 0 : (*xs)[0] < (*xs)[1] ? 1 : 2;
                items.push_back(std::uint32_t{1} << 31 | static_cast<std::uint32_t>(u_->param_item(static_cast<std::size_t>(slot), j, 0)) << 2 | order);
            }
            std::sort(items.begin(), items.end());
            for (std::size_t a = 0; a < items.size(); ++a)
                for (std::size_t b = a + 1; b < items.size(); ++b) f(std::uint64_t{items[a]} << 32 | items[b]);
        }
    }

    static bool ordered(const param& p) {
        const auto* t = std::get_if<int_tuple>(&p.dom.d);
        return p.what != role::inert && t && t->count >= 2;
    }

    const universe* u_;
    std::unordered_set<std::uint64_t> seen_;
    std::size_t total_ = 0;
};

static_assert(coverage_metric<param_pair_coverage, model>);

}  // namespace memo
