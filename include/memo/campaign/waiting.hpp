#pragma once
// The models waiting for one of the execution stage's lanes: those that raised coverage (or fill
// an idle lane), in the order they came, and one combination (of the models that raised nothing,
// the one that brings the most pairs of values not executed yet of those offered since the last
// ran), which takes every Nth turn.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "../core/model.hpp"

namespace memo::campaign {

/// A model waiting for a lane or running on one, with its identity (model_key, computed once
/// where it was made) and the iteration that made it.
struct queued_model {
    model m;
    std::uint64_t key = 0;
    std::uint64_t iteration = 0;
};

class waiting_models {
public:
    /// `combination_every`: every Nth model started is the waiting combination (0: only when
    /// nothing else waits).
    explicit waiting_models(std::uint32_t combination_every) : every_(combination_every) {}

    /// A model that runs in turn; it stops the fill's patience clock.
    void push(queued_model q) {
        passing_since_.reset();
        queue_.push_back(std::move(q));
    }
    /// A combination that brings `gain` new pairs: it waits in place of the one waiting when it
    /// brings more.
    void offer_combination(queued_model q, std::size_t gain) {
        if (combination_ && gain <= combination_gain_) return;
        combination_ = std::move(q);
        combination_gain_ = gain;
    }
    /// Whether fill candidates have been passed over for `patience_ms` (the first starts the clock).
    bool patience_over(double patience_ms) {
        const auto now = std::chrono::steady_clock::now();
        if (!passing_since_) passing_since_ = now;
        return std::chrono::duration<double, std::milli>(now - *passing_since_).count() >= patience_ms;
    }

    /// The next model to start: the combination at its turn or when nothing else waits, else the
    /// first in turn; none when nothing waits. `memoised(q)`: a model in turn that needs no run (its
    /// stored judgement counted), passed over; `still_new(m)`: whether the combination still brings
    /// new pairs (a model run since may have brought them), else it is dropped.
    template <class Memoised, class StillNew>
    std::optional<queued_model> next(const Memoised& memoised, const StillNew& still_new) {
        while (!queue_.empty() && memoised(queue_.front())) queue_.pop_front();
        if (combination_ && !still_new(combination_->m)) combination_.reset();
        if (combination_ && (queue_.empty() || (every_ > 0 && ++started_ % every_ == 0))) {
            auto q = std::move(*combination_);
            combination_.reset();
            ++combinations_run_;
            return q;
        }
        if (queue_.empty()) return std::nullopt;
        auto q = std::move(queue_.front());
        queue_.pop_front();
        return q;
    }

    bool empty() const noexcept { return queue_.empty(); }
    std::size_t size() const noexcept { return queue_.size(); }
    /// The models in turn, first to start first (a checkpoint names them).
    const std::deque<queued_model>& in_turn() const noexcept { return queue_; }
    std::uint64_t combinations_run() const noexcept { return combinations_run_; }

private:
    std::uint32_t every_;
    std::deque<queued_model> queue_;
    std::optional<queued_model> combination_;
    std::size_t combination_gain_ = 0;                                    // how many pairs it brought when offered
    std::optional<std::chrono::steady_clock::time_point> passing_since_;  // the first fill candidate passed over since a model was queued
    std::uint64_t started_ = 0, combinations_run_ = 0;
};

}  // namespace memo::campaign
