#pragma once
// The campaign loop over any search, and what it counts. A campaign is this loop and a driver:
// between two steps the driver keeps its books (a checkpoint, a progress line, an exchange with
// other processes) and says whether to stop, or to let its libraries catch up before the next
// step; after each step it takes the result (stores it, runs it, judges it).
//
//   struct my_driver {
//       bool stop();                                       // the budget is spent
//       bool wait();                                       // not now: step again later
//       void stepped(const Search::step_result& r);         // what the step made
//   };
//   memo::engine::step_counts n(Search::operator_names().size());
//   memo::engine::drive(search, n, driver);
//
// engine::campaign (campaign.hpp) drives it over any model type; memo's Keras campaign
// (campaign/generate.hpp) drives it with worker processes, a store and a directory of its own.
#include <concepts>
#include <cstdint>
#include <vector>

namespace memo::engine {

/// What a campaign loop counts: its steps (models generated), the valid mutants and the diverse
/// ones (that raised coverage), in all and per operator.
struct step_counts {
    std::uint64_t generated = 0, valid = 0, diverse = 0;
    std::vector<std::uint64_t> op_selected, op_valid, op_diverse;

    step_counts() = default;
    explicit step_counts(std::size_t operators) : op_selected(operators), op_valid(operators), op_diverse(operators) {}

    /// Counts one step's result (a search's step_result: op, valid, gain).
    template <class Result>
    void add(const Result& r) {
        ++generated;
        ++op_selected.at(r.op);
        if (!r.valid) return;
        ++valid;
        ++op_valid.at(r.op);
        if (!r.gain) return;
        ++diverse;
        ++op_diverse.at(r.op);
    }
};

/// A driver of the campaign loop over a search whose steps give `Result`. Requires:
///   d.stop()       before each step: whether the campaign ends now
///   d.wait()       then: whether to skip this turn (its libraries are behind) and ask again
///   d.stepped(r)   after each step, with the step's result, already counted
template <class D, class Result>
concept loop_driver = requires(D& d, const Result& r) {
    { d.stop() } -> std::convertible_to<bool>;
    { d.wait() } -> std::convertible_to<bool>;
    d.stepped(r);
};

/// A driver made of three callables (lambdas, say):
///   memo::engine::driver d{[&] { return done(); }, [&] { return false; }, [&](const auto& r) { ... }};
template <class Stop, class Wait, class Stepped>
struct driver {
    Stop stop;
    Wait wait;
    Stepped stepped;
};
template <class Stop, class Wait, class Stepped>
driver(Stop, Wait, Stepped) -> driver<Stop, Wait, Stepped>;

/// The campaign loop: until the driver stops it, a step of the search whenever the driver does
/// not wait, counted into `n` and handed to the driver.
template <class Search, class Driver>
void drive(Search& s, step_counts& n, Driver& d) {
    using result = decltype(s.step());
    static_assert(loop_driver<Driver, result>, "a campaign loop's driver needs stop(), wait() and stepped(result) (memo::engine::loop_driver)");
    while (!d.stop()) {
        if (d.wait()) continue;
        const result r = s.step();
        n.add(r);
        d.stepped(r);
    }
}

}  // namespace memo::engine
