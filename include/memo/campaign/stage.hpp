#pragma once
// What a campaign does with the models its search generates, beyond coverage: the generation
// loop offers valid models to a stage and drives it without blocking, so that backends run in
// their workers while the search goes on.
#include <chrono>
#include <cstdint>
#include <string>

#include "../core/model.hpp"
#include "../io/json.hpp"

namespace memo::store {
class campaign_store;
}

namespace memo::campaign {

/// A stage's functions, by what the generation loop asks of it: to take and run models, to finish
/// after the budget, to report, to keep its state with the campaign's, and what the search learns
/// from it (which models may breed).
class stage {
public:
    virtual ~stage() = default;

    // Taking and running models.
    /// Before the campaign's clock starts: runs m once on every backend, judging nothing, so that
    /// each library's worker is up (TensorFlow or PyTorch import for seconds) and the budget goes
    /// to running models. Returns the seconds it took.
    virtual double warm_up(const model&) { return 0; }
    /// When the campaign's budget ends (the stage's extra work, such as minimisation, stops there).
    virtual void set_deadline(std::chrono::steady_clock::time_point) {}
    /// Whether the stage would take a model that raised no coverage now (it is idle).
    virtual bool wants_any() const = 0;
    /// Offers a valid model (diverse: it raised coverage) with its key (model_key, computed once
    /// by the search). The stage copies what it keeps.
    virtual void offer(const model& m, std::uint64_t key, bool diverse, std::uint64_t iteration, double seconds) = 0;
    /// Drives the stage; returns true when the loop should wait for it rather than generate more.
    virtual bool poll(double seconds) = 0;
    /// Blocks until the stage has room again (the loop's back-pressure), or for a moment, after
    /// which the loop looks at its budget and calls again.
    virtual void wait(double seconds) = 0;
    /// Whether the stage has done all it was asked to (a budget of models): the campaign stops.
    virtual bool done() const { return false; }

    // After the budget.
    /// Finishes what runs, at the end of the campaign.
    virtual void drain(double seconds) = 0;
    /// Work the stage does beside the campaign that outlives its budget (a new bug's reproducers,
    /// each a fresh process of its library): how much is left, and waiting for it to finish, after
    /// the budget and before stats.json is written.
    virtual std::size_t unsettled() const { return 0; }
    virtual void settle() {}

    // Reporting.
    /// Models executed so far (coverage.csv's executed column).
    virtual std::uint64_t executed() const { return 0; }
    /// More coverage.csv columns, as {"name": value, ...}: the same names on every call.
    virtual io::json columns() const { return io::json::object(); }
    /// The stage's part of the progress line.
    virtual std::string progress(double seconds) const = 0;
    /// Adds the stage's figures to stats.json.
    virtual void write_stats(io::json& stats) const = 0;

    // Its state, kept with the campaign's.
    /// Called once before the first model, with the campaign's store (for what the stage records
    /// or memoises) and, when the campaign resumes, the state save() gave at its checkpoint.
    virtual void open(store::campaign_store&, const io::json* /*resumed*/) {}
    /// The stage's state, saved with each checkpoint of the campaign.
    virtual io::json save() const { return io::json::object(); }

    // What the search learns from it.
    /// Whether m may breed descendants in the search: every backend runs it (supports(), and what
    /// they declined at run time so far: oracle/declines.hpp), and none failed on it (a crash, a
    /// library error, a time-out or a blow-up: its descendants would fail the same way, and a
    /// known failure hides whatever else a model would show).
    virtual bool breeds(const model&) const { return true; }
    /// Grows each time the stage learns something that may change breeds() for a model.
    virtual std::uint64_t breeding_learnt() const { return 0; }
    /// Whether some backend is known to decline class `layer` in dtype t.
    virtual bool declines(std::string_view /*layer*/, dtype) const { return false; }
};

}  // namespace memo::campaign
