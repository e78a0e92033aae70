#pragma once
// What a mutation operator sees besides the model: the registry, the coverage reached so far (so
// it can prefer what is not yet covered), the adapters, and the size limit.
#include <concepts>
#include <functional>
#include <string_view>
#include <vector>

#include "../coverage/coverage.hpp"
#include "../engine/concepts.hpp"
#include "edit.hpp"

namespace memo::mutation {

struct context {
    const registry& reg;
    const memo_coverage& cov;
    adapters ad;
    std::size_t max_nodes = 1000;  // a mutant larger than this is rejected (a bound on time and memory)
    std::int64_t max_cost = 0;     // a mutant costlier to run than this (layers/cost.hpp) is rejected; 0: no limit
    bool guided = true;            // prefer what is not yet covered (LEMON's operators turn this off)
    /// Each mutant draws its own weight and input seed, as MEMO builds every model with fresh random
    /// weights: a generator of inputs (tensors/inputs.hpp) or a weight draw that reaches a fault is met
    /// by some descendants, not by none or all. Off, a mutant keeps its parent's seed (LEMON's
    /// weight edits refer to the parent's weights).
    bool fresh_seeds = false;
    /// Whether a library under test is known to decline a class in a dtype (oracle/declines.hpp):
    /// once a (class, dtype) is covered, operators prefer dtypes every library runs. Empty: none.
    std::function<bool(std::string_view layer, dtype)> declined;
    std::vector<const layer_def*> singles;   // universe classes with one input
    std::vector<const layer_def*> merges;    // universe merge classes
    std::vector<const layer_def*> reshapes;  // LResh

    explicit context(const memo_coverage& c) : context(c.space().layers(), c) {}
    context(const registry& r, const memo_coverage& c) : reg(r), cov(c), ad(r) {
        const auto& u = c.space();
        for (std::size_t s = 0; s < u.classes(); ++s) {
            const layer_def* L = &u.class_at(s);
            (L->is_merge() ? merges : singles).push_back(L);
            if (L->fam == family::reshape) reshapes.push_back(L);
        }
    }
    const universe& space() const noexcept { return cov.space(); }
    /// What every valid mutant gets after its operator (the search calls it): its own seed.
    void finish(model& m, rng& r) const {
        if (fresh_seeds) m.seed = r();
    }
    std::size_t slot(const layer_def& L) const noexcept { return static_cast<std::size_t>(space().slot_of(L)); }
    bool in_universe(const layer_def& L) const noexcept { return space().slot_of(L) >= 0; }
    bool type_covered(const layer_def& L) const { return !guided || !in_universe(L) || cov.has(criterion::layer_type, slot(L)); }
    /// Is this item covered? Unguided, everything counts as covered, so nothing is preferred.
    bool has(criterion c, std::size_t item) const { return !guided || cov.has(c, item); }
    bool has(criterion c, int item) const { return !guided || cov.has(c, item); }
    bool is_declined(const layer_def& L, dtype t) const { return declined && declined(L.name, t); }
};

}  // namespace memo::mutation
