#pragma once
// The execution stage of a campaign: the models the search generates run on the backends under
// test (each in its worker), the oracle judges them, and every bug is localised, minimised,
// deduplicated and stored before the campaign goes on. Models that raised coverage run first;
// when none waits, the next valid model that brings a pair not executed yet runs (a pair of
// parameter values, coverage/param_pairs.hpp, or a producer-consumer pair of the graph,
// graph_pair_connectable; or, after a while without one, any), so the workers never idle. Several lanes (each a
// differential tester with workers of its own) keep several models in flight.
//
// The lanes' testers are differential (several libraries against each other) or metamorphic (each
// library against itself on a model and its variant); the resource oracles (time and memory,
// oracle/resources.hpp) may run beside either, on the models that ran.
//
// With the campaign's store, every run is recorded (status, output digest, a digest per node when
// traced, time, memory) with the oracle's judgement, and a model judged before on the same
// backends and inputs is not run again: its stored judgement counts (a memo hit).
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "../coverage/checkpoint.hpp"
#include "../coverage/input_range.hpp"
#include "../coverage/param_pairs.hpp"
#include "../layers/cost.hpp"
#include "../oracle/declines.hpp"
#include "../oracle/metamorphic.hpp"
#include "../oracle/resources.hpp"
#include "../store/bugs.hpp"
#include "../store/store.hpp"
#include "stage.hpp"

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

class execution final : public stage {
public:
    /// `lanes`: differential testers over the same backends (their own workers each).
    execution(std::vector<oracle::tester*> lanes, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : bugs_(dir, o.attach, o.replay), cov_(reg), ranges_(reg), pairs_(reg), o_(o), resources_(o.resources) {
        if (lanes.empty()) throw error("an execution needs at least one lane");
        // The lanes' testers learn what the backends decline into one table, which generation reads.
        for (auto* d : lanes) {
            lanes_.push_back({d, {}, false, 0});
            if (!d->share_declines(declines_)) testers_learn_declines_ = false;
        }
        for (auto* x : lanes.front()->participants()) names_.emplace_back(x->name());
        bugs_.set_versions(o_.versions);
    }
    execution(oracle::tester& t, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : execution(std::vector<oracle::tester*>{&t}, reg, std::move(dir), o) {}

    /// With fill: a valid model that raised nothing is wanted when a lane idles with no model
    /// waiting, and as a combination waiting for its turn (see offer()).
    bool wants_any() const override { return o_.fill && ((queue_.empty() && idle() != nullptr) || o_.combination_every); }

    void set_deadline(std::chrono::steady_clock::time_point t) override {
        for (auto& l : lanes_) l.diff->set_deadline(t);
    }

    /// Every lane's participants take m at once (a worker serving several lanes queues them), so
    /// the workers start side by side; what they answer is dropped.
    double warm_up(const model& m) override {
        const stage_clock::timer timed(clock_.startup);
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::vector<tensor>> inputs;
        std::vector<executor*> sent;
        for (auto& l : lanes_) {
            inputs.push_back(make_inputs(m, l.diff->inputs()));
            for (auto* x : l.diff->participants())
                if (x->supports(m)) {
                    x->submit(m, inputs.back(), {});
                    sent.push_back(x);
                }
        }
        for (auto* x : sent) (void)x->collect();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    void offer(const model& m, std::uint64_t key, bool diverse, std::uint64_t iteration, double) override {
        const stage_clock::timer timed(clock_.offer);
        if (!diverse && !wants_any()) return;
        const bool to_fill = !diverse && queue_.empty() && idle() != nullptr;
        const bool new_pairs = !diverse && brings_pairs(m);
        if (!diverse && !new_pairs && !to_fill) return;
        if (!diverse && !runnable(m)) return;  // run to keep the workers busy: only what all of them take
        // Of the models that raised nothing, those that combine parameter values in a way not run
        // yet: a fault that needs two values in one layer is reached by design, not by chance. An
        // idle lane takes any after a while; a combination's turn waits for one.
        if (!diverse && !new_pairs && (!to_fill || !patience_over())) return;
        if (o_.max_cost > 0 && execution_cost(m) > o_.max_cost) {
            ++too_costly_;
            return;
        }
        if (!within_budget(m, lanes_.front().diff->inputs().samples, o_.max_bytes)) {
            ++too_large_;
            return;
        }
        if (!diverse && !to_fill) {
            // The waiting combination is the one with the most new pairs of those offered since.
            const auto gain = pair_gain(m);
            if (combination_ && gain <= combination_gain_) return;
            combination_ = pending{m, key, iteration};
            combination_gain_ = gain;
            return;
        }
        passing_since_.reset();
        if (store_) store_->add_model(key, m);  // a checkpoint names waiting models by key
        queue_.push_back({m, key, iteration});
    }

    /// What the backends said they take (supports()), and what they declined at run time. Without
    /// fill, what runs depends on the seed alone, so generation does not follow run-time declines:
    /// when a worker answers would change the models made.
    expected<void> runnable(const model& m) const override {
        for (auto* x : lanes_.front().diff->participants())
            if (auto ok = x->supports(m); !ok) return fail(std::string(x->name()) + ": " + ok.reason());
        return o_.fill ? declines_.runs_everywhere(m) : expected<void>{};
    }
    std::uint64_t declines_learnt() const override { return o_.fill ? declines_.learnt() : 0; }
    /// Without fill, what breeds depends on the seed alone, as runnable() does.
    bool breeds(const model& m) const override { return runnable(m) && (!o_.fill || !failed_.count(model_key(m))); }
    std::uint64_t breeding_learnt() const override { return declines_learnt() + (o_.fill ? failed_.size() : 0); }
    bool declines(std::string_view layer, dtype t) const override { return o_.fill && declines_.declined(layer, t); }

    bool poll(double t) override {
        bugs_.poll_reproducers();
        for (auto& l : lanes_)
            if (l.running && l.diff->ready()) complete(l, t);
        start_idle();
        return queue_.size() >= o_.queue_limit;
    }

    /// Waits for a lane to finish, judges what finished and refills the idle lanes. With fill, it
    /// takes whichever lane finishes first (blocked on all their workers' pipes at once), and waits
    /// a moment at most, so that the loop looks at its clock: a library that hangs does not hold
    /// the campaign past its budget. Without fill, it waits for the lane that started first, so
    /// that models are judged in the order they started.
    void wait(double t) override {
        if (o_.fill) {
            if (idle() == nullptr) {  // an idle lane wants a model, not a wait
                const stage_clock::timer waiting(clock_.wait);
                await_any_lane(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
            }
            poll(t);
            return;
        }
        lane* oldest = nullptr;
        for (auto& l : lanes_)
            if (l.running && (!oldest || l.ticket < oldest->ticket)) oldest = &l;
        if (oldest) complete(*oldest, t);
        start_idle();
    }

    /// At the budget's end. With fill, the runs in flight are abandoned, not waited for (a hanging
    /// library would hold the campaign past its budget). Without fill, it finishes what runs and
    /// every model still waiting, so that each model that raised coverage runs whatever the timing
    /// (a resumed campaign then ends as one run in one go).
    void drain(double t) override {
        if (o_.fill) {
            for (auto& l : lanes_)
                if (l.running) {
                    l.diff->abandon();
                    l.running = false;
                    ++abandoned_;
                }
            return;
        }
        for (;;) {
            for (auto& l : lanes_)
                if (l.running) complete(l, t);
            if (o_.fill || queue_.empty()) return;
            start_idle();
        }
    }

    std::size_t unsettled() const override { return bugs_.reproducers_running(); }
    void settle() override {
        const stage_clock::timer timed(clock_.settle);
        bugs_.wait_reproducers();
    }

    std::string progress(double t) const override {
        std::string kinds;
        for (auto k : reported_kinds()) kinds += fmt::format(" {} {}", bugs_.unique(oracle::name_of(k)), short_name(k));
        const std::size_t causes = bugs_.root_cause_count();
        return fmt::format(" | exec {} ({:.0f}/s){} bugs{}{}", executed_, t > 0 ? static_cast<double>(executed_) / t : 0.0,
                           hits_ ? fmt::format(", {} memo hits", hits_) : std::string(), kinds,
                           causes ? fmt::format(" ({} root causes)", causes) : std::string());
    }

    void write_stats(io::json& s) const override {
        s["backends"] = names_;
        if (o_.versions.is_object()) s["versions"] = o_.versions;
        s["models_executed"] = executed_;
        s["models_over_cost"] = too_costly_;
        s["models_over_memory"] = too_large_;
        s["models_abandoned"] = abandoned_;
        s["models_combinations"] = combinations_run_;
        s["max_bytes"] = o_.max_bytes;
        s["models_single_backend"] = single_backend_;
        s["max_cost"] = o_.max_cost;
        s["replay"] = o_.replay;
        io::json bugs = {{"unique", bugs_.unique()},
                         {"root_causes", bugs_.root_cause_count()},
                         {"known_sightings", known_sightings_},
                         {"suppressed_rounding", suppressed_},
                         {"all_backends_failed", all_failed_}};
        for (std::size_t k = 1; k < std::size(oracle::kind_names); ++k) {
            const std::string name(oracle::kind_names[k]);
            if (name != "shape") bugs[name] = found_.count(name) ? found_.at(name) : 0;  // sightings
            bugs["unique_" + name] = bugs_.unique(name);
        }
        s["bugs"] = bugs;
        s["oracle"] = oracle_json();
        io::json per = io::json::object();
        for (const auto& [name, c0] : per_backend_) {
            auto c = c0;
            c.restarts = 0;
            for (const auto& l : lanes_)
                for (auto* x : l.diff->participants())
                    if (x->name() == name) c.restarts += x->restarts();
            io::json st = io::json::object();
            for (std::size_t k = 0; k < c.status.size(); ++k)
                if (c.status[k]) st[std::string(run_status_names[k])] = c.status[k];
            per[name] = {{"runs", c.runs},           {"status", st},
                         {"ms_total", c.ms},         {"ms_mean", c.runs ? c.ms / static_cast<double>(c.runs) : 0.0},
                         {"cpu_ms_total", c.cpu_ms}, {"compile_ms_total", c.compile_ms},
                         {"peak_kb_max", c.peak_kb}, {"restarts", c.restarts}};
            // How many executed models it declined, and why (layer and dtype).
            const auto declined = c.status[static_cast<std::size_t>(run_status::unsupported)];
            per[name]["declined"] = declines_.stats(name);
            per[name]["declined"]["runs"] = declined;
            per[name]["declined"]["share"] = c.runs ? static_cast<double>(declined) / static_cast<double>(c.runs) : 0.0;
        }
        s["executions"] = per;
        io::json cov = io::json::object();
        for (auto k : all_criteria) cov[std::string(name_of(k))] = {{"covered", cov_.covered(k)}, {"total", cov_.total(k)}};
        cov[std::string(layer_input_range_name)] = {{"covered", ranges_.covered()}, {"total", ranges_.total()}};
        cov[std::string(layer_param_pairs_name)] = {{"covered", pairs_.covered()}, {"total", pairs_.total()}};
        s["coverage_executed"] = cov;
        s["memo"] = {{"models_run", runs_}, {"hits", hits_}, {"saved_seconds", saved_ms_ / 1000.0}};
        // Where this run's own thread spent its time in the stage; the rest of the campaign's
        // seconds went to the search and its books.
        s["time_ms"] = {{"offer", clock_.offer},   {"start", clock_.start},       {"judge", clock_.judge - clock_.truth - clock_.localise},
                        {"truth", clock_.truth},   {"localise", clock_.localise}, {"minimise", clock_.minimise},
                        {"store", clock_.store},   {"wait", clock_.wait},         {"resources", clock_.resources},
                        {"settle", clock_.settle}, {"startup", clock_.startup}};
    }

    void open(store::campaign_store& st, const io::json* resumed) override {
        store_ = &st;
        for (auto& l : lanes_) l.diff->set_trace(true);
        if (resumed) restore(*resumed);
    }

    io::json save() const override {
        io::json pending = io::json::array();
        std::vector<const lane*> running;
        for (const auto& l : lanes_)
            if (l.running) running.push_back(&l);
        std::sort(running.begin(), running.end(), [](const lane* a, const lane* b) { return a->ticket < b->ticket; });
        for (const auto* l : running) pending.push_back({l->current.key, l->current.iteration});
        for (const auto& p : queue_) pending.push_back({p.key, p.iteration});
        io::json per = io::json::object();
        for (const auto& [name, c] : per_backend_)
            per[name] = {{"runs", c.runs}, {"status", c.status}, {"ms", c.ms}, {"cpu_ms", c.cpu_ms}, {"compile_ms", c.compile_ms}, {"peak_kb", c.peak_kb}};
        return {{"executed", executed_},
                {"suppressed", suppressed_},
                {"all_failed", all_failed_},
                {"too_costly", too_costly_},
                {"too_large", too_large_},
                {"single_backend", single_backend_},
                {"resource_checks", resource_checks_},
                {"runs", runs_},
                {"hits", hits_},
                {"saved_ms", saved_ms_},
                {"found", found_},
                {"known", known_},
                {"known_sightings", known_sightings_},
                {"per_backend", per},
                {"coverage", save_coverage(cov_)},
                {"input_ranges", ranges_.save()},
                {"param_pairs", pairs_.save()},
                {"pending", pending},
                {"declines", declines_.save()},
                {"failed", failed_}};
    }

    /// The kinds of bug the oracles at work can report (the progress line's).
    std::vector<oracle::kind> reported_kinds() const {
        using oracle::kind;
        std::vector<kind> r;
        if (lanes_.front().diff->name() == "metamorphic") r = {kind::crash, kind::metamorphic};
        else r = {kind::crash, kind::nan, kind::inconsistency, kind::shape};
        if (o_.resources.performance) r.push_back(kind::performance);
        if (o_.resources.leak) r.push_back(kind::leak);
        if (o_.resources.determinism) r.push_back(kind::nondeterminism);
        return r;
    }
    static std::string_view short_name(oracle::kind k) {
        switch (k) {
            case oracle::kind::inconsistency: return "incons";
            case oracle::kind::metamorphic: return "meta";
            case oracle::kind::performance: return "perf";
            case oracle::kind::nondeterminism: return "nondet";
            default: return oracle::name_of(k);
        }
    }

    std::uint64_t executed() const noexcept override { return executed_; }
    io::json columns() const override { return {{std::string(layer_input_range_name), ranges_.covered()}}; }
    const input_range_coverage& input_ranges() const noexcept { return ranges_; }
    bool done() const override { return o_.max_models && executed_ >= o_.max_models; }
    const store::bug_store& store() const noexcept { return bugs_; }
    store::bug_store& store() noexcept { return bugs_; }
    std::uint64_t memo_hits() const noexcept { return hits_; }
    /// Models run on the backends by this campaign (memo hits excluded).
    std::uint64_t models_run() const noexcept { return runs_; }

private:
    /// A model waiting for a lane or running on one, with its identity (model_key, computed once
    /// where it was made) and the iteration that made it.
    struct pending {
        model m;
        std::uint64_t key = 0;
        std::uint64_t iteration = 0;
    };
    struct counters {
        std::uint64_t runs = 0, restarts = 0;
        std::array<std::uint64_t, run_status_count> status{};
        double ms = 0, cpu_ms = 0, compile_ms = 0;  // compile_ms: the part of ms the library spent compiling
        std::int64_t peak_kb = 0;
    };

    struct lane {
        oracle::tester* diff;
        pending current;
        bool running;
        std::uint64_t ticket;  // order of starting, for wait()
    };

    /// The connectable graph pairs of m that no executed model had, each once.
    std::vector<std::size_t> new_graph_pairs(const model& m) const {
        std::vector<std::size_t> fresh;
        for (std::size_t i = 0; i < m.nodes.size(); ++i)
            cov_.space().graph_pair_items(m, i, [&](criterion c, std::size_t item) {
                if (c == criterion::graph_pair_connectable && !cov_.has(c, item) && std::find(fresh.begin(), fresh.end(), item) == fresh.end())
                    fresh.push_back(item);
            });
        return fresh;
    }
    /// Whether m brings a pair not executed yet: of parameter values in one node, or of producer
    /// and consumer in the graph.
    bool brings_pairs(const model& m) const { return pairs_.raises(m) || !new_graph_pairs(m).empty(); }
    /// How many pairs m brings that no executed model had: parameter pairs, and graph pairs
    /// weighted by how much rarer they are (a model has dozens of new parameter pairs for each
    /// new graph pair; each graph pair is a pattern a library's optimiser may rewrite).
    std::size_t pair_gain(const model& m) const { return pairs_.gain(m) + graph_pair_weight * new_graph_pairs(m).size(); }
    static constexpr std::size_t graph_pair_weight = 16;

    /// Whether fill candidates have been passed over for fill_patience_ms (the first starts the clock).
    bool patience_over() {
        const auto now = std::chrono::steady_clock::now();
        if (!passing_since_) passing_since_ = now;
        return std::chrono::duration<double, std::milli>(now - *passing_since_).count() >= o_.fill_patience_ms;
    }

    const lane* idle() const {
        for (const auto& l : lanes_)
            if (!l.running) return &l;
        return nullptr;
    }

    /// Blocks until some running lane is ready or `until`. ready() also turns true when a worker
    /// runs past its time limit, which no descriptor tells, so the wait looks again every 5 ms (and
    /// every 1 ms where no descriptor is there to wait on).
    void await_any_lane(std::chrono::steady_clock::time_point until) {
        std::vector<int> fds;
        std::vector<pollfd> ps;
        for (;;) {
            fds.clear();
            for (auto& l : lanes_) {
                if (!l.running) continue;
                if (l.diff->ready()) return;
                l.diff->awaited_fds(fds);
            }
            const auto now = std::chrono::steady_clock::now();
            if (now >= until) return;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
            ps.clear();
            for (int fd : fds) ps.push_back({fd, POLLIN, 0});
            ::poll(ps.data(), ps.size(), static_cast<int>(std::clamp<long long>(left, 1, fds.empty() ? 1 : 5)));
        }
    }

    void start_idle() {
        for (auto& l : lanes_) {
            if (l.running) continue;
            while (!queue_.empty() && memoised(queue_.front())) queue_.pop_front();
            // A combination waiting for its turn, still new (a model run since may have brought it).
            if (combination_ && !brings_pairs(combination_->m)) combination_.reset();
            // (A combination waits only where combination_every > 0: wants_any() offers none otherwise.)
            if (combination_ && (queue_.empty() || (o_.combination_every > 0 && ++started_ % o_.combination_every == 0))) {
                l.current = std::move(*combination_);
                combination_.reset();
                ++combinations_run_;
                if (store_) store_->add_model(l.current.key, l.current.m);
            } else {
                if (queue_.empty()) return;
                l.current = std::move(queue_.front());
                queue_.pop_front();
            }
            {
                const stage_clock::timer timed(clock_.start);
                l.diff->begin(l.current.m);
            }
            l.running = true;
            l.ticket = ++tickets_;
        }
    }

    /// The store's key for a model's judgement: the backends and the inputs matter besides the model.
    std::string inputs_key() const { return store::inputs_text(lanes_.front().diff->inputs()); }
    /// The backends, and the oracles when they are not the differential one alone.
    std::string backends_key() const {
        std::string s;
        for (const auto& n : names_) s += (s.empty() ? "" : ",") + n;
        if (const auto t = lanes_.front().diff->name(); t != "differential") s = std::string(t) + ":" + s;
        if (o_.resources.performance) s += "+performance";
        if (o_.resources.leak) s += "+leak";
        if (o_.resources.determinism) s += "+determinism";
        return s;
    }

    /// Which oracles judged, with their own figures.
    io::json oracle_json() const {
        io::json j = {{"tester", std::string(lanes_.front().diff->name())}};
        std::uint64_t discarded = 0, without = 0;
        std::array<std::uint64_t, std::size(metamorphic::relation_names)> used{};
        bool meta = false;
        for (const auto& l : lanes_)
            if (const auto* m = dynamic_cast<const oracle::metamorphic_tester*>(l.diff)) {
                meta = true;
                discarded += m->discarded(), without += m->without_variant();
                for (std::size_t k = 0; k < used.size(); ++k) used[k] += m->used()[k];
            }
        std::uint64_t short_runs = 0, unconfirmed = 0, masked_checks = 0, masked_found = 0, masked_skipped = 0;
        bool differential = false;
        for (const auto& l : lanes_)
            if (const auto* d = dynamic_cast<const oracle::differential*>(l.diff)) {
                differential = true;
                short_runs += d->short_limit_runs(), unconfirmed += d->unconfirmed_timeouts();
                masked_checks += d->masked_checks(), masked_found += d->masked_found(), masked_skipped += d->masked_skipped();
            }
        if (differential) {
            // Runs under short limits (a known hang's or blow-up's trigger), time-outs that did not
            // come again alone with the limit doubled, and models whose outputs agreed while a
            // node's traced values did not (localised; found: a node beyond rounding).
            j["short_limit_runs"] = short_runs;
            j["unconfirmed_timeouts"] = unconfirmed;
            j["masked"] = {{"checked", masked_checks}, {"found", masked_found}, {"skipped", masked_skipped}};
        }
        if (meta) {
            io::json rel = io::json::object();
            for (std::size_t k = 0; k < used.size(); ++k) rel[std::string(metamorphic::relation_names[k])] = used[k];
            j["metamorphic"] = {{"variants", rel}, {"discarded_self_check", discarded}, {"models_without_variant", without}};
        }
        if (const auto& r = o_.resources; r.any()) {
            j["resources"] = store::resource_options_json(r);
            j["resources"]["performance"] = r.performance;
            j["resources"]["leak"] = r.leak;
            j["resources"]["determinism"] = r.determinism;
            j["resources"]["models_checked"] = resource_checks_;
        }
        return j;
    }

    /// A model judged before counts as executed, with its stored judgement, and is not run.
    bool memoised(const pending& p) {
        if (!store_) return false;
        const auto j = store_->find_judgement(p.key, inputs_key(), backends_key());
        if (!j) return false;
        ++hits_;
        saved_ms_ += j->ms;
        if (j->kind == "skipped") {
            ++single_backend_;
            return true;
        }
        ++executed_;
        cov_.add(p.m);
        pairs_.add(p.m);
        if (j->kind != "none") {
            ++found_[j->kind];
            if (const auto k = oracle::kind_from(j->kind); k != oracle::kind::none) bugs_.count(k, j->signature);
        }
        return true;
    }

    /// Every run of the model, and the oracle's judgement of it, into the store.
    void record(const pending& p, const std::vector<oracle::observation>& obs, bool skipped, oracle::kind what, const std::string& signature) {
        if (!store_) return;
        const stage_clock::timer timed(clock_.store);
        const auto key = p.key;
        const auto inputs = inputs_key();
        store_->add_model(key, p.m);
        double ms = 0;
        for (const auto& ob : obs) {
            if (skipped) break;
            store::execution_record e;
            e.model = key, e.backend = ob.backend, e.inputs = inputs, e.status = ob.result.status;
            e.outputs = digest_of(ob.result.outputs);
            e.nodes = ob.nodes;
            e.ms = ob.result.ms, e.peak_kb = ob.result.peak_kb, e.message = ob.result.message;
            store_->add_execution(e);
            ms += ob.result.ms;
        }
        const std::string kind = skipped ? "skipped" : std::string(oracle::name_of(what));
        store_->add_judgement(key, inputs, backends_key(), {kind, signature, ms});
    }

    void restore(const io::json& j) {
        executed_ = j.at("executed"), suppressed_ = j.at("suppressed"), all_failed_ = j.at("all_failed"), too_costly_ = j.at("too_costly");
        too_large_ = j.value("too_large", std::uint64_t{0});
        single_backend_ = j.at("single_backend"), resource_checks_ = j.value("resource_checks", std::uint64_t{0}), runs_ = j.at("runs"), hits_ = j.at("hits"),
        saved_ms_ = j.at("saved_ms");
        j.at("found").get_to(found_);
        j.at("known").get_to(known_);
        known_sightings_ = j.value("known_sightings", std::uint64_t{0});
        const auto& per = j.at("per_backend");
        for (auto it = per.begin(); it != per.end(); ++it) {
            auto& c = per_backend_[it.key()];
            c.runs = it.value().at("runs"), c.ms = it.value().at("ms"), c.peak_kb = it.value().at("peak_kb");
            c.cpu_ms = it.value().value("cpu_ms", 0.0);
            c.compile_ms = it.value().value("compile_ms", 0.0);
            it.value().at("status").get_to(c.status);
        }
        restore_coverage(cov_, j.at("coverage"));
        if (j.contains("input_ranges")) ranges_.restore(j.at("input_ranges"));
        if (j.contains("param_pairs")) pairs_.restore(j.at("param_pairs").get<std::vector<std::uint64_t>>());
        if (j.contains("failed")) j.at("failed").get_to(failed_);  // a resumed campaign breeds from them no more than one run in one go
        if (j.contains("declines")) declines_.restore(j.at("declines"));
        for (const auto& p : j.at("pending")) {
            const auto key = p.at(0).get<std::uint64_t>();
            if (auto m = store_->find_model(key, cov_.space().layers())) queue_.push_back({std::move(*m), key, p.at(1).get<std::uint64_t>()});
        }
    }

    void complete(lane& l, double t) {
        l.running = false;
        oracle::tester& diff = *l.diff;
        const pending& cur = l.current;
        oracle::verdict v;
        {
            // The differential oracle times its truth and localisation itself, whoever calls it:
            // what it adds while judging is judge's share (what it adds while minimising, minimise's).
            const auto* d = dynamic_cast<const oracle::differential*>(&diff);
            const double truth0 = d ? d->truth_ms() : 0, localise0 = d ? d->localise_ms() : 0;
            const stage_clock::timer timed(clock_.judge);
            v = diff.finish();
            if (d) clock_.truth += d->truth_ms() - truth0, clock_.localise += d->localise_ms() - localise0;
        }
        // Declines are learnt from a skipped model too: when every library but the reference
        // declines it (two backends of one library), it is skipped for that very reason. (A tester
        // that shares the table learnt them as it judged.)
        if (!testers_learn_declines_) declines_.learn(cur.m, diff.observations());
        if (diff.last_skipped()) {
            ++single_backend_;
            record(cur, diff.observations(), true, v.what, {});
            return;
        }
        ++executed_;
        ++runs_;
        cov_.add(cur.m);
        pairs_.add(cur.m);
        const auto obs = diff.observations();
        for (const auto& ob : obs) ranges_.add(cur.m, ob.spans);  // what each layer received, on each library that traced it
        if (std::any_of(obs.begin(), obs.end(), [](const oracle::observation& o) { return oracle::failed(o.result.status); })) failed_.insert(cur.key);
        for (std::size_t i = 0; i < obs.size(); ++i) {
            auto& c = per_backend_[obs[i].backend];
            ++c.runs;
            ++c.status[static_cast<std::size_t>(obs[i].result.status)];
            c.ms += obs[i].result.ms;
            c.cpu_ms += obs[i].result.cpu_ms;
            c.compile_ms += obs[i].result.compile_ms;
            c.peak_kb = std::max(c.peak_kb, obs[i].result.peak_kb);
        }
        if (v.all_failed) ++all_failed_;
        if (!v && diff.last_suppressed()) ++suppressed_;
        const std::string signature = v ? report(diff, cur, v, obs, t, true) : std::string();
        // A model that showed a bug breeds nothing either: its descendants would show it again,
        // and each sighting of an inconsistency costs its localisation (five runs of the model).
        if (v) failed_.insert(cur.key);
        for (const auto& also : v.more) report(diff, cur, also, obs, t, true, true);
        if (o_.resources.any()) check_resources(diff, cur, obs, t);
        // The judgement goes into the store last: a campaign killed before it runs the model again
        // when resumed, while one stored first would count as judged and never store the bugs
        // found beside the first or by the resource oracles.
        record(cur, obs, false, v.what, signature);
    }

    /// Runs the model again on the backends that ran it, for the resource oracles.
    void check_resources(oracle::tester& diff, const pending& cur, const std::vector<oracle::observation>& obs, double t) {
        const auto xs = oracle::ran_ok(diff.participants(), obs);  // obs: minimising a bug ran other models since
        if (xs.empty()) return;
        const stage_clock::timer timed(clock_.resources);
        ++resource_checks_;
        for (const auto& v : resources_.check(cur.m, diff.last_inputs(), xs)) report(diff, cur, v, obs, t, false);
    }

    /// Stores a bug (or counts a known one); returns its signature. A second fault in a model
    /// (`beside`: a verdict's `more`) is stored only once minimised away from the first, so that
    /// its reproducer shows it and not the first.
    std::string report(oracle::tester& diff, const pending& cur, const oracle::verdict& v, const std::vector<oracle::observation>& obs, double t, bool minimise,
                       bool beside = false) {
        // A bug seen before (same first sighting signature) is counted, not minimised again.
        const std::string first = oracle::signature(v, v.variant ? v.variant->m : cur.m);
        if (const auto it = known_.find(first); it != known_.end()) {
            if (it->second.empty()) return {};  // a second fault that could not be shown alone
            if (beside) return it->second;      // sightings are counted for a model's first verdict, as a store's replay counts them
            ++found_[std::string(oracle::name_of(v.what))];
            bugs_.count(v.what, it->second);
            return it->second;
        }
        // A root cause already reported upstream: a sighting, no minimisation spent on it.
        if (!o_.known_root_causes.empty() && o_.known_root_causes.count(oracle::root_cause(v, v.variant ? v.variant->m : cur.m))) {
            ++known_sightings_;
            return {};
        }
        store::bug_report b;
        b.original = cur.m;
        b.observations = obs;
        b.inputs = diff.inputs();
        b.tester = std::string(diff.name());
        b.iteration = cur.iteration;
        b.seconds = t;
        b.v = v;
        b.minimal = cur.m;
        if (minimise && o_.minimise) {
            const stage_clock::timer timed(clock_.minimise);
            auto small = diff.minimise(cur.m, v);
            b.minimal = std::move(small.m);
            b.v = small.v;
            b.minimise_checks = small.checks;
        }
        if (beside && b.minimal.size() == cur.m.size()) {
            known_.emplace(first, std::string());
            return {};
        }
        if (!beside) ++found_[std::string(oracle::name_of(v.what))];
        auto* differential = dynamic_cast<oracle::differential*>(&diff);
        if (o_.reproducers && differential && oracle::differential_kind(b.v.what))
            // Written now (the worker is at hand), run beside the campaign: a reproducer imports
            // its library afresh, seconds that would hold every lane up (bug_store::record).
            b.reproduce = [differential, &b](const std::filesystem::path& dir) {
                return oracle::write_reproducers(*differential, b.minimal, dir.string(), false);
            };
        // The stored signature is the minimal model's: its non-default parameters are those that matter.
        b.signature = oracle::signature(b.v, b.v.variant ? b.v.variant->m : b.minimal);
        if (b.v.what == oracle::kind::performance || b.v.what == oracle::kind::leak || b.v.what == oracle::kind::nondeterminism) {
            b.resources = resources_.last_runs();
            b.resource_options = o_.resources;
        }
        known_.emplace(first, b.signature);
        const stage_clock::timer timed(clock_.store);
        bugs_.record(b, names_);
        return b.signature;
    }

    std::vector<lane> lanes_;
    stage_clock clock_;
    std::uint64_t tickets_ = 0;
    store::bug_store bugs_;
    store::campaign_store* store_ = nullptr;  // the campaign's, once open()
    memo_coverage cov_;
    input_range_coverage ranges_;                                         // known only once a model ran: executed models alone count
    param_pair_coverage pairs_;                                           // of the executed models: what fill prefers
    std::optional<std::chrono::steady_clock::time_point> passing_since_;  // the first fill candidate passed over since a model was queued
    std::optional<pending> combination_;                                  // a model that brings new pairs of values, waiting for its turn
    std::size_t combination_gain_ = 0;                                    // how many, when it was offered
    std::uint64_t started_ = 0, combinations_run_ = 0;
    execution_options o_;
    oracle::resources resources_;
    std::vector<std::string> names_;
    std::deque<pending> queue_;
    std::uint64_t executed_ = 0, suppressed_ = 0, all_failed_ = 0, too_costly_ = 0, too_large_ = 0, single_backend_ = 0;
    std::uint64_t known_sightings_ = 0;  // bugs of a root cause in o_.known_root_causes
    std::uint64_t abandoned_ = 0;        // in flight at the budget's end
    std::uint64_t runs_ = 0, hits_ = 0;  // models run on the backends; models whose stored judgement counted instead
    double saved_ms_ = 0;                // the backends' time those judgements took when they were made
    std::map<std::string, std::uint64_t> found_;
    std::map<std::string, std::string> known_;  // first-sighting signature -> stored signature
    std::map<std::string, counters> per_backend_;
    oracle::decline_table declines_;      // what each backend was seen to decline, and how often
    bool testers_learn_declines_ = true;  // every lane's tester learns into declines_ (share_declines)
    std::set<std::uint64_t> failed_;      // models some backend failed on or that showed a bug (keys): they breed no descendants
    std::uint64_t resource_checks_ = 0;   // models run again for the resource oracles
};

}  // namespace memo::campaign
