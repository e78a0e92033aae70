#pragma once
// DeepStellar's five coverage criteria: what test runs cover of a profile DTMC's states, its
// transitions, and the cells just outside its states (the k-step boundary), plain and weighted by
// how often profiling saw them. Counts are kept up to date as traces arrive, so values() is free.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include "abstraction.hpp"
#include "dtmc.hpp"

namespace memo::rnn_state {

/// One criterion's value: covered out of total (counts, or summed frequencies for the weighted ones).
struct criterion_value {
    std::uint64_t covered = 0, total = 0;
    /// covered / total; 0 when total is 0.
    double ratio() const noexcept { return total ? static_cast<double>(covered) / static_cast<double>(total) : 0.0; }
    friend bool operator==(const criterion_value&, const criterion_value&) = default;
};

/// DeepStellar's five criteria.
struct criteria_values {
    criterion_value basic_state, boundary, weighted_state, basic_transition, weighted_transition;
    friend bool operator==(const criteria_values&, const criteria_values&) = default;
    /// Adds another's counts, criterion by criterion (several layers' values summed into one).
    criteria_values& operator+=(const criteria_values& o) noexcept {
        for (auto [to, from] : {std::pair{&basic_state, &o.basic_state},
                                {&boundary, &o.boundary},
                                {&weighted_state, &o.weighted_state},
                                {&basic_transition, &o.basic_transition},
                                {&weighted_transition, &o.weighted_transition}}) {
            to->covered += from->covered;
            to->total += from->total;
        }
        return *this;
    }
};

/// Test traces scored against a profile DTMC: what they cover of its states, transitions and k-step boundary.
class state_coverage {
public:
    state_coverage(dtmc profile, const abstraction& a, int boundary_steps = 1) : profile_(std::move(profile)) {
        const auto b = profile_.boundary(a, boundary_steps);
        boundary_.insert(b.begin(), b.end());
        v_.basic_state.total = profile_.states();
        v_.boundary.total = boundary_.size();
        v_.weighted_state.total = profile_.total_visits();
        v_.basic_transition.total = profile_.transitions();
        v_.weighted_transition.total = profile_.total_transitions();
    }

    /// Records t; returns how many states and transitions it visited that no earlier trace did (in the profile or not).
    std::size_t add(const trace& t) {
        std::size_t fresh = 0;
        cell from = dtmc::initial;
        for (cell to : t) {
            fresh += see(to) + see(transition{from, to});
            from = to;
        }
        return fresh;
    }

    /// Records several traces (a model's samples); returns what they visited first, each item once.
    std::size_t add(std::span<const trace> ts) {
        std::size_t fresh = 0;
        for (const auto& t : ts) fresh += add(t);
        return fresh;
    }

    /// What add(t) would return, recording nothing.
    std::size_t gain(const trace& t) const { return gain(std::span<const trace>(&t, 1)); }
    /// What add(ts) would return: an item two of the traces visit counts once.
    std::size_t gain(std::span<const trace> ts) const {
        std::unordered_set<cell> states;
        std::unordered_set<transition, detail::transition_hash> transitions;
        for (const auto& t : ts) {
            cell from = dtmc::initial;
            for (cell to : t) {
                if (!states_.contains(to)) states.insert(to);
                if (const transition e{from, to}; !transitions_.contains(e)) transitions.insert(e);
                from = to;
            }
        }
        return states.size() + transitions.size();
    }

    criteria_values values() const noexcept { return v_; }

    /// Distinct states seen, in the profile or not.
    std::size_t seen_states() const noexcept { return states_.size(); }
    /// Distinct transitions seen, in the profile or not.
    std::size_t seen_transitions() const noexcept { return transitions_.size(); }

    const dtmc& profile() const noexcept { return profile_; }

    /// The states seen, sorted, to save.
    std::vector<cell> seen_state_list() const { return sorted(states_); }
    /// The transitions seen, sorted, to save.
    std::vector<transition> seen_transition_list() const { return sorted(transitions_); }

    /// Replaces what was seen with saved lists.
    void restore(const std::vector<cell>& states, const std::vector<transition>& transitions) {
        states_.clear();
        transitions_.clear();
        for (auto* c : {&v_.basic_state, &v_.boundary, &v_.weighted_state, &v_.basic_transition, &v_.weighted_transition}) c->covered = 0;
        for (cell s : states) see(s);
        for (const auto& e : transitions) see(e);
    }

private:
    bool see(cell s) {
        if (!states_.insert(s).second) return false;
        if (const auto f = profile_.frequency(s)) {
            ++v_.basic_state.covered;
            v_.weighted_state.covered += f;
        } else if (boundary_.contains(s)) {
            ++v_.boundary.covered;
        }
        return true;
    }

    bool see(const transition& e) {
        if (!transitions_.insert(e).second) return false;
        if (const auto n = profile_.count(e.first, e.second)) {
            ++v_.basic_transition.covered;
            v_.weighted_transition.covered += n;
        }
        return true;
    }

    template <class Set>
    static std::vector<typename Set::key_type> sorted(const Set& s) {
        std::vector<typename Set::key_type> out(s.begin(), s.end());
        std::sort(out.begin(), out.end());
        return out;
    }

    dtmc profile_;
    std::unordered_set<cell> boundary_;
    std::unordered_set<cell> states_;
    std::unordered_set<transition, detail::transition_hash> transitions_;
    criteria_values v_;
};

}  // namespace memo::rnn_state
