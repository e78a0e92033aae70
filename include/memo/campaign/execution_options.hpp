#pragma once
// The execution stage's options (execute.hpp), and the clock it keeps of its own thread's time.
#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "../io/json.hpp"
#include "../oracle/resources.hpp"
#include "../store/bugs.hpp"

namespace memo::campaign {

struct execution_options {
    std::size_t queue_limit = 8;  // models that raised coverage, waiting to run; beyond it the search waits
    bool minimise = true;
    /// Each new differential bug gets its reproducers in its libraries' own terms, each run once
    /// (store/bugs.hpp: repro/): seconds a bug, spent where a library's worker writes one.
    bool reproducers = true;
    /// Root causes already reported (oracle/root_cause.hpp; memo-fuzz run --known FILE): a bug of
    /// one is counted apart (stats.json's bugs.known_sightings), neither minimised nor stored.
    std::set<std::string> known_root_causes{};
    // Models costing more per sample (layers/cost.hpp) are not run; 0: no limit. Small tensors keep
    // the workers fast while the layers and parameters stay those of larger models: at 3e6 a
    // campaign executes about half as many again as at 2e7, with as much coverage (docs/benchmarks.md).
    std::int64_t max_cost = 3'000'000;
    std::int64_t max_bytes = 0;               // models whose run holds more float64 bytes (tensors/budget.hpp) are not run; 0: no limit
    store::bug_files attach{};                // writes more files into each new bug's directory (memo-fuzz: model.onnx)
    std::string replay = "memo-fuzz replay";  // the command each bug's repro.sh runs with its directory
    io::json versions{};                      // each backend's library version, for stats.json and every bug.json
    std::uint64_t max_models = 0;             // the campaign stops once this many models were executed (0: no limit)
    /// When no model that raised coverage waits, run the newest valid model rather than idle. Off,
    /// the models run are a function of the seed and the iteration budget alone (then a repeated
    /// or resumed campaign runs exactly the same models), and generation does not follow what the
    /// backends declined at run time (oracle/declines.hpp).
    bool fill = true;
    /// With fill: how long an idle lane passes over models without a new pair of parameter values
    /// before it takes one anyway. A time, not a count: generation slows as the seeds grow, and at
    /// 160 nodes (4,200 valid mutants a second) a count of 256 kept each lane idle for 60 ms: 17
    /// executed models a second in a campaign's tenth minute (docs/benchmarks.md).
    double fill_patience_ms = 2.0;
    /// With fill: every Nth model started is one that raised nothing but brings a pair of
    /// parameter values not executed yet, when one waits, even while models that raised coverage
    /// wait too (their coverage counts each value alone). 0: only when none of those waits.
    std::uint32_t combination_every = 4;
    oracle::resource_options resources{};  // the performance and leak oracles, off by default
};

/// Milliseconds the campaign's own thread spends in each part of the execution stage (stats.json's
/// "time_ms"): what the libraries' workers do meanwhile is theirs, counted in their CPU time.
struct stage_clock {
    double offer = 0;      // deciding what to queue
    double start = 0;      // a model's inputs, its export and checks, sending it to every worker
    double judge = 0;      // reading the results and judging them (truth and localisation included)
    double truth = 0;      // of judge: the float64 reference's runs
    double localise = 0;   // of judge: localising a verdict (the runs minimise makes are minimise's)
    double minimise = 0;   // shrinking a new bug's model
    double store = 0;      // the campaign store and the bug directories
    double wait = 0;       // blocked on the workers (the queue full, or the search paced)
    double resources = 0;  // the resource oracles' extra runs
    double settle = 0;     // after the budget: waiting for the reproducers still running
    double startup = 0;    // before the budget: the workers started, each running a seed once (warm_up)

    /// Adds the time until it goes out of scope to `into`.
    class timer {
    public:
        explicit timer(double& into) : into_(into), t0_(std::chrono::steady_clock::now()) {}
        ~timer() { into_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count(); }
        timer(const timer&) = delete;
        timer& operator=(const timer&) = delete;

    private:
        double& into_;
        std::chrono::steady_clock::time_point t0_;
    };
};

}  // namespace memo::campaign
