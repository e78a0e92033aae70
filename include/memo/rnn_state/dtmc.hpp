#pragma once
// DeepStellar's abstract model: the grid cells that profiled runs visit, and how often each run
// steps from one cell to the next, as a discrete-time Markov chain. Test runs are scored against it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../engine/rng.hpp"
#include "abstraction.hpp"

namespace memo::rnn_state {

/// One sequence's cells, in step order.
using trace = std::vector<cell>;

/// A step from one cell to the next.
using transition = std::pair<cell, cell>;

namespace detail {
struct transition_hash {
    std::size_t operator()(const transition& t) const noexcept {
        std::uint64_t x = t.first ^ (t.second * 0x9e3779b97f4a7c15ULL);
        return static_cast<std::size_t>(splitmix64(x));
    }
};

template <class Map>
auto sorted_keys(const Map& m) {
    std::vector<typename Map::key_type> keys;
    keys.reserve(m.size());
    for (const auto& kv : m) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
    return keys;
}
}  // namespace detail

/// The abstract model: states, and transitions from a fixed initial state, with their frequencies.
class dtmc {
public:
    /// The state before the first step (never a grid cell).
    static constexpr cell initial = ~cell{0};

    /// Counts each visit and each transition of t, initial -> t[0] first; an empty trace adds nothing.
    void add(const trace& t) {
        cell from = initial;
        for (cell to : t) {
            ++visits_[to];
            ++counts_[{from, to}];
            ++out_[from];
            from = to;
        }
        total_ += t.size();
    }

    /// Distinct cells visited (initial excluded).
    std::size_t states() const noexcept { return visits_.size(); }
    /// Distinct (from, to) pairs, those from initial included.
    std::size_t transitions() const noexcept { return counts_.size(); }

    /// Visits of s.
    std::uint64_t frequency(cell s) const { return lookup(visits_, s); }
    /// Steps from `from` to `to`.
    std::uint64_t count(cell from, cell to) const { return lookup(counts_, transition{from, to}); }
    /// count(from, to) over all steps out of `from`; 0 when there are none.
    double probability(cell from, cell to) const {
        const auto all = lookup(out_, from);
        return all ? static_cast<double>(count(from, to)) / static_cast<double>(all) : 0.0;
    }

    /// The states, sorted.
    std::vector<cell> state_list() const { return detail::sorted_keys(visits_); }
    /// The transitions, sorted.
    std::vector<transition> transition_list() const { return detail::sorted_keys(counts_); }

    /// Sum of all visits.
    std::uint64_t total_visits() const noexcept { return total_; }
    /// Sum of all transition counts; each visit is entered by one step, so this equals total_visits().
    std::uint64_t total_transitions() const noexcept { return total_; }

    /// Cells within L1 distance `steps` of a state that are not states themselves (DeepStellar's k-step boundary), sorted.
    std::vector<cell> boundary(const abstraction& a, int steps) const {
        std::vector<cell> out;
        for (const auto& [s, n] : visits_)
            for (cell c : a.within(s, steps))
                if (!visits_.contains(c)) out.push_back(c);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

private:
    template <class Map, class Key>
    static std::uint64_t lookup(const Map& m, const Key& k) {
        const auto it = m.find(k);
        return it == m.end() ? 0 : it->second;
    }

    std::unordered_map<cell, std::uint64_t> visits_, out_;
    std::unordered_map<transition, std::uint64_t, detail::transition_hash> counts_;
    std::uint64_t total_ = 0;
};

}  // namespace memo::rnn_state
