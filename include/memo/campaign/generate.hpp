#pragma once
// A generation campaign: the search over seed models with no execution, its live progress line,
// and its directory: stats.json, coverage.csv (a row per second), queue/ (every model that raised
// coverage, named by iteration), seeds/ (the models it started from), store.db (store/store.hpp:
// every model generated, the coverage items with the iteration that covered them, and a
// checkpoint a second, from which a killed or finished campaign resumes exactly) and report.html.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "../cluster/exchange.hpp"
#include "../coverage/checkpoint.hpp"
#include "../engine/loop.hpp"
#include "../io/json.hpp"
#include "../rnn_state/rnn_coverage.hpp"
#include "../search/search.hpp"
#include "../store/store.hpp"
#include "directory.hpp"
#include "progress.hpp"
#include "stage.hpp"

// A checkpoint's counters and search state in JSON, each member under its own name (a member a
// checkpoint of an older memo lacks keeps its default).
namespace memo::engine {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(step_counts, generated, valid, diverse, op_selected, op_valid, op_diverse)
}  // namespace memo::engine
namespace memo {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(search_scores, model_score, op_score, selected, rng, selector, initial, seed_size, stalled)
}  // namespace memo

namespace memo::campaign {

/// The search's selector: MEMO's Metropolis-Hastings (mh), or uniform (random: MEMO_r).
enum class selector_kind { mh, random };
/// The mutation operators: MEMO's (memo), or LEMON's (lemon: MEMO_o).
enum class operator_kind { memo, lemon };

inline std::string_view name_of(selector_kind s) noexcept { return s == selector_kind::mh ? "mh" : "random"; }
inline std::string_view name_of(operator_kind k) noexcept { return k == operator_kind::memo ? "memo" : "lemon"; }
/// The selector or operator set a name stands for (a command line's, a stored campaign's); throws
/// on a name that is none.
inline selector_kind selector_from(std::string_view s) {
    if (s == "mh") return selector_kind::mh;
    if (s == "random") return selector_kind::random;
    throw error("unknown selector '" + std::string(s) + "' (mh or random)");
}
inline operator_kind operators_from(std::string_view s) {
    if (s == "memo") return operator_kind::memo;
    if (s == "lemon") return operator_kind::lemon;
    throw error("unknown operator set '" + std::string(s) + "' (memo or lemon)");
}

/// What a campaign counts as new besides MEMO's criteria, which are always counted: the graph's
/// producer-consumer pairs (coverage/universe.hpp) and DeepStellar's RNN states
/// (rnn_state/rnn_coverage.hpp). Written as a comma-separated list of memo, graph-pairs and
/// rnn-state.
struct coverage_choice {
    bool graph_pairs = false, rnn_state = false;

    /// Throws on a word it does not know, or a list without memo.
    static coverage_choice parse(const std::string& words) {
        coverage_choice c;
        bool memo = false;
        for (std::size_t at = 0; at <= words.size();) {
            const auto comma = std::min(words.find(',', at), words.size());
            const auto w = words.substr(at, comma - at);
            if (w == "memo") memo = true;
            else if (w == "graph-pairs") c.graph_pairs = true;
            else if (w == "rnn-state") c.rnn_state = true;
            else throw error("unknown coverage '" + w + "' in '" + words + "' (memo, graph-pairs, rnn-state)");
            at = comma + 1;
        }
        if (!memo) throw error("coverage '" + words + "' lacks memo: MEMO's criteria are always counted");
        return c;
    }
    std::string str() const { return std::string("memo") + (graph_pairs ? ",graph-pairs" : "") + (rnn_state ? ",rnn-state" : ""); }
};

// In a campaign's store and stats.json, each choice is written as its name, as on the command line.
inline void to_json(io::json& j, selector_kind s) { j = std::string(name_of(s)); }
inline void from_json(const io::json& j, selector_kind& s) { s = selector_from(j.get<std::string>()); }
inline void to_json(io::json& j, operator_kind k) { j = std::string(name_of(k)); }
inline void from_json(const io::json& j, operator_kind& k) { k = operators_from(j.get<std::string>()); }
inline void to_json(io::json& j, const coverage_choice& c) { j = c.str(); }
inline void from_json(const io::json& j, coverage_choice& c) { c = coverage_choice::parse(j.get<std::string>()); }

struct generation_options {
    std::string out;               // campaign directory
    double seconds = 60;           // stop after this long...
    std::uint64_t iterations = 0;  // ...or this many iterations (0: no limit), whichever comes first
    std::uint64_t seed = 0;
    selector_kind selector = selector_kind::mh;
    operator_kind operators = operator_kind::memo;
    coverage_choice coverage{.graph_pairs = true};  // what counts as new
    double p = 0.05;                                // Metropolis-Hastings parameter
    /// Diverse mutants grown past it are kept as results, not as seeds. 16 holds MEMO's own reduced
    /// models (11 layers on average): small models run fast, and the limit grows when the search stalls.
    std::size_t max_seed_nodes = 16;
    /// The seed size limit doubles, up to this, each time stall_steps steps in a row found no diverse
    /// mutant (basic_search::set_max_seed_size): small seeds run fast, larger ones reach further.
    std::size_t max_seed_nodes_grown = 160;
    std::size_t stall_steps = 5000;
    /// Once no mutant raised coverage for this many seconds, the search steps in slices of
    /// pace_slice_ms, each followed by a wait on the stage (until a lane finishes, 50 ms at most):
    /// a search that finds nothing new would otherwise take a core from the libraries' workers.
    /// 0: never paced.
    double pace_after_seconds = 10;
    double pace_slice_ms = 10;
    bool quiet = false;         // no progress line
    std::int64_t max_cost = 0;  // mutants costlier to run (layers/cost.hpp) are rejected; 0: no limit
    /// Mutants this rejects are invalid (search::set_filter): say, a library's own supports(), so
    /// that a campaign on one library keeps to the models it runs.
    std::function<expected<void>(const model&)> accept;
    /// Continue the campaign in `out` from its store's checkpoint: seconds and iterations are then
    /// what to run beyond it (resume_options() gives what is left of the stored budget).
    bool resume = false;
    double checkpoint_seconds = 1;  // how often the store saves the campaign's state
    /// The caller's own options (a tool's backends, say), stored with the campaign's and given
    /// back by resume_options().
    io::json tool = io::json::object();
    /// This process is one rank of a campaign over several (cluster/exchange.hpp): the loop
    /// exchanges coverage, models and bugs with the others every few seconds, and stops with them.
    cluster::exchange* peers = nullptr;
};

struct generation_summary {
    std::uint64_t generated = 0, valid = 0, diverse = 0;
    double seconds = 0;
    std::array<std::size_t, criteria_count> covered{}, total{};  // by criterion, at the end
};

/// {"layer_type": {"covered": c, "total": t}, ...}: how stats.json and the CLI write coverage,
/// the extra metric's criteria included.
inline io::json coverage_json(const memo_coverage& c) {
    io::json j = io::json::object();
    for (auto k : all_criteria) j[std::string(name_of(k))] = {{"covered", c.covered(k)}, {"total", c.total(k)}};
    if (c.extra()) j.update(criteria_json(c.extra()->criteria()));
    return j;
}

/// The coverage a campaign counts with (generation_options::coverage), before its seeds are added.
inline memo_coverage campaign_coverage(const std::vector<model>& seeds, const registry& reg, const generation_options& o) {
    memo_coverage c(reg);
    c.pursue_graph_pairs(o.coverage.graph_pairs);
    if (o.coverage.rnn_state) c.attach(rnn_state::rnn_coverage(reg, seeds, rnn_state::rnn_options{.seed = o.seed}));
    return c;
}

namespace detail {

inline std::string coverage_line(const memo_coverage& c) {
    auto s = fmt::format("types {}/{} pairs {}/{} params {}/{} inputs {}/{}", c.covered(criterion::layer_type), c.total(criterion::layer_type),
                         c.covered(criterion::layer_pair), c.total(criterion::layer_pair), c.covered(criterion::layer_param), c.total(criterion::layer_param),
                         c.covered(criterion::layer_input), c.total(criterion::layer_input));
    if (c.pursues_graph_pairs())
        s += fmt::format(" graph pairs {}/{}", c.covered(criterion::graph_pair_connectable), c.total(criterion::graph_pair_connectable));
    if (c.extra()) {
        const auto x = criteria_json(c.extra()->criteria());
        s += fmt::format(" rnn states {} transitions {}", x.at("rnn_states").at("covered").dump(), x.at("rnn_transitions").at("covered").dump());
    }
    return s;
}

/// The extra metric's criteria, as coverage.csv columns (none without one).
inline io::json extra_columns(const memo_coverage& c) { return c.extra() ? criteria_json(c.extra()->criteria()) : io::json::object(); }

/// What a checkpoint holds besides the search's own state: the loop's counters.
using loop_counters = engine::step_counts;

/// The coverage items covered since `recorded`, into the store (and into `recorded`).
inline void record_coverage(store::campaign_store& st, const memo_coverage& c, memo_coverage& recorded, std::uint64_t iteration) {
    for (auto k : all_criteria) {
        const auto& now = c.items(k).words();
        const auto& before = recorded.items(k).words();
        for (std::size_t w = 0; w < now.size(); ++w)
            for (std::uint64_t fresh = now[w] & ~before[w]; fresh; fresh &= fresh - 1)
                st.add_covered(name_of(k), 64 * w + static_cast<std::size_t>(std::countr_zero(fresh)), iteration);
    }
    for (auto k : all_criteria) recorded.items(k) = c.items(k);
}

template <class Search>
io::json save_state(const Search& s, const loop_counters& n, double seconds, std::uint64_t csv_bytes, const stage* exec, const cluster::exchange* peers) {
    const auto st = s.save();
    io::json search = static_cast<const search_scores&>(st);
    search["slots"] = io::json::array();
    for (const auto& m : st.models) search["slots"].push_back(model_key(m));
    return {{"iteration", n.generated},
            {"seconds", seconds},
            {"csv_bytes", csv_bytes},
            {"counters", n},
            {"search", std::move(search)},
            {"coverage", save_coverage(s.coverage())},
            {"stage", exec ? exec->save() : io::json::object()},
            {"cluster", peers ? peers->save() : io::json::object()}};
}

template <class Search>
void restore_state(Search& s, loop_counters& n, const io::json& j, store::campaign_store& st, const registry& reg) {
    j.at("counters").get_to(n);
    const auto& sj = j.at("search");
    typename Search::state state;
    sj.get_to(static_cast<search_scores&>(state));
    for (const auto& key : sj.at("slots")) {
        auto m = st.find_model(key.get<std::uint64_t>(), reg);
        if (!m) throw error(st.file() + ": the checkpoint names model " + hex(key.get<std::uint64_t>()) + ", which the store lacks");
        state.models.push_back(std::move(*m));
    }
    memo_coverage cov = s.coverage();  // with its extra metric, if it has one
    restore_coverage(cov, j.at("coverage"));
    s.restore(std::move(state), std::move(cov));
}

/// stats.json's figures of the search and the store (the execution stage and the other ranks
/// add theirs).
template <class Names>
io::json stats_json(const generation_summary& sum, const generation_options& o, std::size_t seeds, const Names& names, const loop_counters& n,
                    const memo_coverage& c, store::campaign_store& st) {
    io::json per_op = io::json::object();
    for (std::size_t i = 0; i < names.size(); ++i)
        per_op[std::string(names[i])] = {{"selected", n.op_selected[i]}, {"valid", n.op_valid[i]}, {"diverse", n.op_diverse[i]}};
    const double secs = std::max(sum.seconds, 1e-9);
    return {{"seconds", sum.seconds},
            {"seed", o.seed},
            {"iterations", sum.generated},
            {"models_generated", sum.generated},
            {"models_valid", sum.valid},
            {"models_diverse", sum.diverse},
            {"models_per_second", static_cast<double>(sum.generated) / secs},
            {"valid_per_second", static_cast<double>(sum.valid) / secs},
            {"selector", o.selector},
            {"p", o.p},
            {"operators", o.operators},
            {"coverage_metrics", o.coverage},
            {"seeds", seeds},
            {"backends", io::json::array()},
            {"coverage", coverage_json(c)},
            {"per_operator", per_op},
            {"store", {{"bytes", st.bytes()}, {"models", st.generated_count()}, {"unique_models", st.unique_models()}, {"executions", st.execution_count()}}}};
}

/// One invocation of a campaign's loop (engine/loop.hpp) over a search: it starts (the backends
/// warmed up, the seeds offered, or the state resumed), steps with the books kept between steps (a
/// csv row a second, a checkpoint, the progress line, the exchange with other ranks, the execution
/// stage's pace) and the store, the stage and the queue after each, and finishes (the stage
/// drained, stats.json written).
template <class Search>
class generation_loop {
    using clock = std::chrono::steady_clock;

public:
    generation_loop(Search& s, const std::vector<model>& seeds, const generation_options& o, stage* exec, store::campaign_store& st,
                    const std::optional<store::checkpoint>& resumed, const registry& reg)
        : s_(s),
          seeds_(seeds),
          o_(o),
          exec_(exec),
          st_(st),
          resumed_(resumed),
          dir_(o.out),
          names_(Search::operator_names()),
          n_(names_.size()),
          peers_(o.peers),
          reg_(reg),
          recorded_(reg),
          every_(seconds_of(o.checkpoint_seconds)),
          pace_after_(seconds_of(o.pace_after_seconds)),
          slice_(seconds_of(o.pace_slice_ms / 1000)) {
        for (const auto& m : seeds) seed_keys_.push_back(model_key(m));
    }

    generation_summary run() {
        warm_up();
        if (resumed_) {
            resume();
            for (const auto& m : s_.models()) slot_keys_.push_back(model_key(m));
        } else {
            begin();
            slot_keys_ = seed_keys_;  // the slots hold the seeds
        }
        if (exec_) {
            // Seeds keep to models every backend runs (oracle/declines.hpp): a diverse mutant some
            // backend declines counts for coverage and runs on the others, but breeds no
            // descendants. A slot whose model turns out to be declined goes back to its seed.
            s_.set_seedable([x = exec_](const model& m) { return x->breeds(m); });
            s_.context().declined = [x = exec_](std::string_view layer, dtype t) { return x->declines(layer, t); };
        }
        start_ = clock::now(), now_ = start_, last_gain_ = start_, slice_start_ = start_;
        if (exec_ && o_.seconds < 1e7) exec_->set_deadline(start_ + seconds_of(o_.seconds));
        next_row_ = start_ + std::chrono::seconds(1);
        next_checkpoint_ = start_ + every_;
        first_ = n_.generated;
        t_ = t0_;
        if (!resumed_) row(0);
        engine::driver d{[this] { return stop(); }, [this] { return wait(); }, [this](const auto& r) { stepped(r); }};
        engine::drive(s_, n_, d);
        return finish();
    }

private:
    static clock::duration seconds_of(double s) { return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s)); }

    // The libraries' workers start before the budget does (importing TensorFlow takes seconds):
    // the campaign's seconds are for running models, as AFL's fuzzing starts after its set-up.
    void warm_up() {
        if (!exec_ || seeds_.empty()) return;
        if (!o_.quiet) bar_.show("starting the backends (each runs the first seed once)", clock::now());
        const double took = exec_->warm_up(seeds_.front());
        if (!o_.quiet) bar_.finish(fmt::format("backends ready in {:.1f} s", took));
    }

    void resume() {
        restore_state(s_, n_, resumed_->state, st_, reg_);
        t0_ = resumed_->seconds;
        recorded_ = s_.coverage();
        st_.rollback_after(n_.generated);
        // What came after the checkpoint is made again: its queue files and coverage rows go.
        dir_.resume(n_.generated, resumed_->state.at("csv_bytes").get<std::uint64_t>());
        if (exec_) exec_->open(st_, &resumed_->state.at("stage"));
        if (peers_) {
            if (resumed_->state.value("cluster", io::json::object()).empty())
                throw error(o_.out + ": its checkpoint was not made by a rank of a campaign over several");
            peers_->restore(resumed_->state.at("cluster"));
        }
    }

    // A fresh campaign over an old directory keeps its store's runs and its bugs, not its queue.
    void begin() {
        for (std::size_t i = 0; i < seeds_.size(); ++i) st_.add_model(seed_keys_[i], seeds_[i]);
        record_coverage(st_, s_.coverage(), recorded_, 0);
        dir_.start(seeds_, extra_columns(s_.coverage()), more_columns());
        if (exec_) {
            exec_->open(st_, nullptr);
            // The seeds run first, as AFL dry-runs its corpus: a seed some library fails on is known
            // before its slot could be sent back to it (a failing model breeds nothing, stage::breeds).
            for (std::size_t i = 0; i < seeds_.size(); ++i) exec_->offer(seeds_[i], seed_keys_[i], true, 0, 0.0);
        }
        if (peers_) peers_->seeded(s_.models());
    }

    void reseed_declined() {
        for (std::size_t i = 0; i < s_.models().size() && i < seeds_.size(); ++i)
            if (!exec_->breeds(s_.models()[i]) && exec_->breeds(seeds_[i])) {
                s_.reset_slot(i, seeds_[i]);
                slot_keys_[i] = seed_keys_[i];
            }
    }

    // The execution stage's columns of coverage.csv (after the criteria and the extra metric's).
    io::json more_columns() const { return exec_ ? exec_->columns() : io::json::object(); }
    // The job's counters: this process's, and the other ranks' as of the last exchange.
    std::array<std::uint64_t, 3> others() const { return peers_ ? peers_->others() : std::array<std::uint64_t, 3>{}; }

    void row(double t) {
        const auto x = others();
        dir_.row(t, {n_.generated + x[0], n_.valid + x[1], (exec_ ? exec_->executed() : 0) + x[2]}, s_.coverage(), extra_columns(s_.coverage()),
                 more_columns());
    }
    // Between two steps: the csv so far, the search, the stage.
    void checkpoint(double t) {
        dir_.flush();
        st_.save_checkpoint({n_.generated, t, save_state(s_, n_, t, dir_.csv_bytes(), exec_, peers_)});
    }
    std::string line(double t) const {
        const double rate = t > t0_ ? static_cast<double>(n_.generated - first_) / (t - t0_) : 0.0;
        return fmt::format("[{:6.1f}s] {}{} models ({:.0f}/s), valid {:.1f}%, diverse {} | {}", t,
                           peers_ ? fmt::format("{} ranks, rank 0: ", peers_->size()) : std::string(), n_.generated, rate,
                           n_.generated ? 100.0 * static_cast<double>(n_.valid) / static_cast<double>(n_.generated) : 0.0, n_.diverse,
                           coverage_line(s_.coverage())) +
               (exec_ ? exec_->progress(t) : std::string());
    }

    bool stop() {
        // Reading the clock every iteration costs ~20 ns; steps take microseconds.
        now_ = clock::now();
        t_ = t0_ + std::chrono::duration<double>(now_ - start_).count();
        const bool done = (o_.iterations && n_.generated - first_ >= o_.iterations) || (exec_ && exec_->done()) || t_ - t0_ >= o_.seconds;
        if (!peers_ || !(done || peers_->due(t_))) return done;
        // Ranks stop together, at the first exchange after any one's budget is spent.
        const auto x = peers_->sync(s_, st_, {n_.generated, n_.valid, exec_ ? exec_->executed() : 0}, done, t_);
        for (std::size_t i = slot_keys_.size(); i < s_.models().size(); ++i) slot_keys_.push_back(model_key(s_.models()[i]));
        record_coverage(st_, s_.coverage(), recorded_, n_.generated);
        return x.stop;
    }

    /// Whether the search, having raised no coverage for pace_after_seconds, is due to wait on the
    /// stage (at the end of a slice of steps, one step at least).
    bool paced() const {
        if (!exec_ || o_.pace_after_seconds <= 0 || !slice_steps_) return false;
        return now_ - last_gain_ >= pace_after_ && now_ - slice_start_ >= slice_;
    }

    bool wait() {
        if (now_ >= next_row_) {
            row(t_);
            next_row_ += std::chrono::seconds(1);
        }
        if (now_ >= next_checkpoint_) {
            checkpoint(t_);
            next_checkpoint_ = now_ + every_;
        }
        if (!o_.quiet && bar_.due(now_)) bar_.show(line(t_), now_);
        if (exec_ && exec_->poll(t_)) {
            exec_->wait(t_);  // enough models wait for the backends: let them catch up
            return true;
        }
        if (paced()) {
            exec_->wait(t_);
            slice_start_ = clock::now(), slice_steps_ = 0;
            return true;
        }
        if (exec_ && exec_->breeding_learnt() != declines_seen_) {
            declines_seen_ = exec_->breeding_learnt();
            reseed_declined();
        }
        return false;
    }

    template <class Result>
    void stepped(const Result& r) {
        ++slice_steps_;
        if (!r.valid) return;
        const std::uint64_t key = model_key(*r.mutant);
        st_.add_generated(n_.generated, key, slot_keys_[r.slot], names_[r.op], r.gain);
        std::string json;  // a model that raised coverage, printed once for the store and queue/
        if (r.gain) {
            last_gain_ = now_;
            json = io::model_to_json(*r.mutant, [this](const given_weights& g) {
                       st_.keep(g);
                       dir_.keep(g);
                   }).dump();
            st_.add_model_json(key, json);
            record_coverage(st_, s_.coverage(), recorded_, n_.generated);
            if (r.mutant == &s_.models()[r.slot]) slot_keys_[r.slot] = key;
            if (peers_) peers_->found(*r.mutant, r.gain);
        }
        if (exec_ && (r.gain || exec_->wants_any())) exec_->offer(*r.mutant, key, r.gain != 0, n_.generated, t_);
        if (r.gain) dir_.queue(json, n_.generated, {{"iteration", n_.generated}, {"operator", names_[r.op]}, {"slot", r.slot}, {"gain", r.gain}});
    }

    generation_summary finish() {
        if (exec_) exec_->drain(t0_ + std::chrono::duration<double>(clock::now() - start_).count());
        // Reproducers of bugs found late, still running beside the campaign: their verdicts belong in
        // the bugs stored (and shipped). The wait is after the budget, not the campaign's seconds.
        double settling = 0;
        if (exec_ && exec_->unsettled()) {
            const auto from = clock::now();
            if (!o_.quiet) bar_.finish(fmt::format("waiting for {} reproducer{} to finish", exec_->unsettled(), exec_->unsettled() == 1 ? "" : "s"));
            exec_->settle();
            settling = std::chrono::duration<double>(clock::now() - from).count();
        }
        if (peers_) peers_->ship_bugs();  // what the last models found
        generation_summary sum;
        sum.seconds = t0_ + std::chrono::duration<double>(clock::now() - start_).count() - settling;
        sum.generated = n_.generated, sum.valid = n_.valid, sum.diverse = n_.diverse;
        for (auto k : all_criteria) {
            sum.covered[static_cast<std::size_t>(k)] = s_.coverage().covered(k);
            sum.total[static_cast<std::size_t>(k)] = s_.coverage().total(k);
        }
        row(sum.seconds);
        checkpoint(sum.seconds);
        if (!o_.quiet) bar_.finish(line(sum.seconds));

        io::json stats = stats_json(sum, o_, seeds_.size(), names_, n_, s_.coverage(), st_);
        stats["max_seed_nodes_reached"] = s_.max_seed_size();
        if (exec_) exec_->write_stats(stats);
        if (peers_) {
            peers_->merge_stats(stats);  // rank 0: the job's figures and each rank's
            if (peers_->rank() == 0)
                sum.generated = stats.at("models_generated"), sum.valid = stats.at("models_valid"), sum.diverse = stats.at("models_diverse");
        }
        dir_.finish(stats, s_.coverage());
        return sum;
    }

    Search& s_;
    const std::vector<model>& seeds_;
    const generation_options& o_;
    stage* exec_;
    store::campaign_store& st_;
    const std::optional<store::checkpoint>& resumed_;
    campaign_directory dir_;
    decltype(Search::operator_names()) names_;
    loop_counters n_;
    cluster::exchange* peers_;
    const registry& reg_;
    memo_coverage recorded_;
    progress bar_;
    std::vector<std::uint64_t> seed_keys_, slot_keys_;  // each model's identity, computed once (model_key)
    std::uint64_t declines_seen_ = 0;
    double t0_ = 0;  // seconds of the campaign before this invocation
    double t_ = 0;   // seconds of the campaign now (as of the last stop())
    std::uint64_t first_ = 0;
    clock::time_point start_, now_, next_row_, next_checkpoint_;
    const clock::duration every_, pace_after_, slice_;  // the options' checkpoint interval and pace, as clock durations
    // When the search last raised coverage, and when its current slice of steps began (paced).
    clock::time_point last_gain_, slice_start_;
    std::uint64_t slice_steps_ = 0;
};

template <class Ops, class Selector>
generation_summary run_with(const std::vector<model>& seeds, const registry& reg, Selector sel, const generation_options& o, stage* exec,
                            store::campaign_store& st, const std::optional<store::checkpoint>& resumed) {
    search<model, Ops, memo_coverage, Selector> s(seeds, campaign_coverage(seeds, reg, o), std::move(sel), o.seed);
    s.set_max_seed_size(o.max_seed_nodes, o.max_seed_nodes_grown, o.stall_steps);
    s.context().max_cost = o.max_cost;
    s.context().fresh_seeds = std::is_same_v<Ops, mutation::memo_operators>;
    if (o.accept) s.set_filter(o.accept);
    return generation_loop<decltype(s)>(s, seeds, o, exec, st, resumed, reg).run();
}

/// What a campaign's store keeps of its options, so that a resumed campaign runs as it began: the
/// search's settings, and the budgets as the campaign's totals. A store written before a field
/// existed reads its default: MEMO's coverage, no stall steps, a seed size limit that never grew (0).
struct stored_options {
    std::uint64_t seed = 0;
    selector_kind selector = selector_kind::mh;
    operator_kind operators = operator_kind::memo;
    coverage_choice coverage;
    double p = 0;
    std::size_t max_seed_nodes = 0, max_seed_nodes_grown = 0, stall_steps = 0;
    std::int64_t max_cost = 0;
    double budget_seconds = 0;
    std::uint64_t budget_iterations = 0;
    io::json tool = io::json::object();
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(stored_options, seed, selector, operators, coverage, p, max_seed_nodes, max_seed_nodes_grown, stall_steps,
                                                max_cost, budget_seconds, budget_iterations, tool)

/// The options as the store keeps them, the budgets counted from the campaign's start.
inline stored_options options_to_store(const generation_options& o, const std::optional<store::checkpoint>& cp) {
    const double t = cp ? cp->seconds : 0;
    const std::uint64_t i = cp ? cp->iteration : 0;
    return {o.seed,
            o.selector,
            o.operators,
            o.coverage,
            o.p,
            o.max_seed_nodes,
            o.max_seed_nodes_grown,
            o.stall_steps,
            o.max_cost,
            t + o.seconds,
            o.iterations ? i + o.iterations : 0,
            o.tool};
}

}  // namespace detail

/// Runs a campaign over these seeds and writes its directory, report.html last; with an execution
/// stage, the models also run on its backends (see execute.hpp). A fresh campaign over a directory
/// that holds a store keeps the store's executions (a model judged before is not run again).
inline generation_summary generate(const std::vector<model>& seeds, const registry& reg, const generation_options& o, stage* exec = nullptr) {
    if (seeds.empty()) throw error("no seed models");
    std::filesystem::create_directories(o.out);
    store::campaign_store st(store::campaign_store::file_in(o.out));
    std::optional<store::checkpoint> resumed;
    if (o.resume) {
        resumed = st.load_checkpoint();
        if (!resumed) throw error(o.out + ": nothing to resume (its store holds no checkpoint)");
    } else {
        st.start_over();
    }
    st.begin_run(detail::options_to_store(o, resumed), o.resume);
    const bool mh = o.selector == selector_kind::mh, memo_ops = o.operators == operator_kind::memo;
    using namespace mutation;
    const auto sum = mh && memo_ops ? detail::run_with<memo_operators>(seeds, reg, mh_selector(o.p), o, exec, st, resumed)
                     : mh           ? detail::run_with<lemon_operators>(seeds, reg, mh_selector(o.p), o, exec, st, resumed)
                     : memo_ops     ? detail::run_with<memo_operators>(seeds, reg, random_selector{}, o, exec, st, resumed)
                                    : detail::run_with<lemon_operators>(seeds, reg, random_selector{}, o, exec, st, resumed);
    return sum;
}

/// What resuming the campaign in `dir` runs with: its stored options, the budget left at its
/// checkpoint, and its seeds. `finished` when nothing of the budget is left.
struct resumption {
    generation_options options;
    std::vector<model> seeds;
    bool finished = false;
};
inline resumption resume_options(const std::string& dir, const registry& reg) {
    namespace fs = std::filesystem;
    if (!fs::exists(store::campaign_store::file_in(dir))) throw error(dir + ": not a campaign directory (no store.db)");
    store::campaign_store st(store::campaign_store::file_in(dir));
    const auto cp = st.load_checkpoint();
    const auto j = st.last_options();
    if (!cp || !j) throw error(dir + ": nothing to resume (its store holds no checkpoint)");
    resumption r;
    auto& o = r.options;
    o.out = dir;
    o.resume = true;
    const auto stored = j->get<detail::stored_options>();
    o.seed = stored.seed, o.selector = stored.selector, o.operators = stored.operators, o.coverage = stored.coverage, o.p = stored.p;
    o.max_seed_nodes = stored.max_seed_nodes, o.max_cost = stored.max_cost, o.tool = stored.tool, o.stall_steps = stored.stall_steps;
    o.max_seed_nodes_grown = stored.max_seed_nodes_grown ? stored.max_seed_nodes_grown : stored.max_seed_nodes;
    const double budget_s = stored.budget_seconds;
    const std::uint64_t budget_i = stored.budget_iterations;
    o.seconds = std::max(0.0, budget_s - cp->seconds);
    o.iterations = budget_i > cp->iteration ? budget_i - cp->iteration : 0;
    r.finished = o.seconds <= 0 || (budget_i && cp->iteration >= budget_i);
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(fs::path(dir) / "seeds")) files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) r.seeds.push_back(io::load_model(f.string(), reg));
    return r;
}

}  // namespace memo::campaign
