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

namespace memo::campaign {

struct generation_options {
    std::string out;               // campaign directory
    double seconds = 60;           // stop after this long...
    std::uint64_t iterations = 0;  // ...or this many iterations (0: no limit), whichever comes first
    std::uint64_t seed = 0;
    std::string selector = "mh";     // mh | random
    std::string operators = "memo";  // memo | lemon
    /// What counts as new (coverage_choice): MEMO's criteria ("memo"), and with them the graph's
    /// producer-consumer pairs ("graph-pairs", coverage/universe.hpp) or DeepStellar's RNN states
    /// ("rnn-state", rnn_state/rnn_coverage.hpp).
    std::string coverage = "memo,graph-pairs";
    double p = 0.05;  // Metropolis-Hastings parameter
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

/// What generation_options::coverage asks to count as new besides MEMO's criteria, which are
/// always counted: a comma-separated list of memo, graph-pairs and rnn-state. Throws on a word it
/// does not know, or a list without memo.
struct coverage_choice {
    bool graph_pairs = false, rnn_state = false;

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
};

/// The coverage a campaign counts with (generation_options::coverage), before its seeds are added.
inline memo_coverage campaign_coverage(const std::vector<model>& seeds, const registry& reg, const generation_options& o) {
    memo_coverage c(reg);
    const auto choice = coverage_choice::parse(o.coverage);
    c.pursue_graph_pairs(choice.graph_pairs);
    if (choice.rnn_state) c.attach(rnn_state::rnn_coverage(reg, seeds, rnn_state::rnn_options{.seed = o.seed}));
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
    io::json slots = io::json::array();
    for (const auto& m : st.models) slots.push_back(model_key(m));
    return {{"iteration", n.generated},
            {"seconds", seconds},
            {"csv_bytes", csv_bytes},
            {"counters",
             {{"generated", n.generated},
              {"valid", n.valid},
              {"diverse", n.diverse},
              {"op_selected", n.op_selected},
              {"op_valid", n.op_valid},
              {"op_diverse", n.op_diverse}}},
            {"search",
             {{"slots", slots},
              {"model_score", st.model_score},
              {"op_score", st.op_score},
              {"selected", st.selected},
              {"rng", st.rng},
              {"selector", st.selector},
              {"initial", st.initial},
              {"seed_size", st.seed_size},
              {"stalled", st.stalled}}},
            {"coverage", save_coverage(s.coverage())},
            {"stage", exec ? exec->save() : io::json::object()},
            {"cluster", peers ? peers->save() : io::json::object()}};
}

template <class Search>
void restore_state(Search& s, loop_counters& n, const io::json& j, store::campaign_store& st, const registry& reg) {
    const auto& c = j.at("counters");
    n.generated = c.at("generated"), n.valid = c.at("valid"), n.diverse = c.at("diverse");
    c.at("op_selected").get_to(n.op_selected), c.at("op_valid").get_to(n.op_valid), c.at("op_diverse").get_to(n.op_diverse);
    const auto& sj = j.at("search");
    typename Search::state state;
    for (const auto& key : sj.at("slots")) {
        auto m = st.find_model(key.get<std::uint64_t>(), reg);
        if (!m) throw error(st.file() + ": the checkpoint names model " + hex(key.get<std::uint64_t>()) + ", which the store lacks");
        state.models.push_back(std::move(*m));
    }
    sj.at("model_score").get_to(state.model_score), sj.at("op_score").get_to(state.op_score), sj.at("selected").get_to(state.selected);
    sj.at("rng").get_to(state.rng), sj.at("selector").get_to(state.selector);
    state.initial = sj.value("initial", state.models.size());
    state.seed_size = sj.value("seed_size", std::size_t{0}), state.stalled = sj.value("stalled", std::size_t{0});
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

template <class Search>
generation_summary run(Search& s, const std::vector<model>& seeds, const generation_options& o, stage* exec, store::campaign_store& st,
                       const std::optional<store::checkpoint>& resumed, const registry& reg) {
    using clock = std::chrono::steady_clock;
    campaign_directory dir(o.out);
    const auto names = Search::operator_names();
    loop_counters n(names.size());
    double t0 = 0;  // seconds of the campaign before this invocation
    cluster::exchange* peers = o.peers;
    memo_coverage recorded(reg);
    // The execution stage's columns of coverage.csv (after the criteria and the extra metric's).
    auto more_columns = [&] { return exec ? exec->columns() : io::json::object(); };
    // The libraries' workers start before the budget does (importing TensorFlow takes seconds):
    // the campaign's seconds are for running models, as AFL's fuzzing starts after its set-up.
    progress bar;
    if (exec && !seeds.empty()) {
        if (!o.quiet) bar.show("starting the backends (each runs the first seed once)", clock::now());
        const double took = exec->warm_up(seeds.front());
        if (!o.quiet) bar.finish(fmt::format("backends ready in {:.1f} s", took));
    }
    std::vector<std::uint64_t> seed_keys;  // each model's identity, computed once (model_key)
    for (const auto& m : seeds) seed_keys.push_back(model_key(m));
    if (resumed) {
        restore_state(s, n, resumed->state, st, reg);
        t0 = resumed->seconds;
        recorded = s.coverage();
        st.rollback_after(n.generated);
        // What came after the checkpoint is made again: its queue files and coverage rows go.
        dir.resume(n.generated, resumed->state.at("csv_bytes").get<std::uint64_t>());
        if (exec) exec->open(st, &resumed->state.at("stage"));
        if (peers) {
            if (resumed->state.value("cluster", io::json::object()).empty())
                throw error(o.out + ": its checkpoint was not made by a rank of a campaign over several");
            peers->restore(resumed->state.at("cluster"));
        }
    } else {
        // A fresh campaign over an old directory keeps its store's runs and its bugs, not its queue.
        for (std::size_t i = 0; i < seeds.size(); ++i) st.add_model(seed_keys[i], seeds[i]);
        record_coverage(st, s.coverage(), recorded, 0);
        dir.start(seeds, extra_columns(s.coverage()), more_columns());
        if (exec) {
            exec->open(st, nullptr);
            // The seeds run first, as AFL dry-runs its corpus: a seed some library fails on is known
            // before its slot could be sent back to it (a failing model breeds nothing, stage::breeds).
            for (std::size_t i = 0; i < seeds.size(); ++i) exec->offer(seeds[i], seed_keys[i], true, 0, 0.0);
        }
        if (peers) peers->seeded(s.models());
    }
    std::vector<std::uint64_t> slot_keys;
    for (const auto& m : s.models()) slot_keys.push_back(model_key(m));
    // Seeds keep to models every backend runs (campaign/declines.hpp): a diverse mutant some
    // backend declines counts for coverage and runs on the others, but breeds no descendants. A
    // slot whose model turns out to be declined goes back to its seed.
    std::uint64_t declines_seen = 0;
    if (exec) {
        s.set_seedable([exec](const model& m) { return exec->breeds(m); });
        s.context().declined = [exec](std::string_view layer, dtype t) { return exec->declines(layer, t); };
    }
    auto reseed_declined = [&] {
        for (std::size_t i = 0; i < s.models().size() && i < seeds.size(); ++i)
            if (!exec->breeds(s.models()[i]) && exec->breeds(seeds[i])) {
                s.reset_slot(i, seeds[i]);
                slot_keys[i] = seed_keys[i];
            }
    };

    generation_summary sum;
    const auto start = clock::now();
    if (exec && o.seconds < 1e7) exec->set_deadline(start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.seconds)));
    auto next_row = start + std::chrono::seconds(1);
    const auto every = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.checkpoint_seconds));
    auto next_checkpoint = start + every;
    const std::uint64_t first = n.generated;
    // The job's counters: this process's, and the other ranks' as of the last exchange.
    auto others = [&] { return peers ? peers->others() : std::array<std::uint64_t, 3>{}; };
    auto row = [&](double t) {
        const auto x = others();
        dir.row(t, {n.generated + x[0], n.valid + x[1], (exec ? exec->executed() : 0) + x[2]}, s.coverage(), extra_columns(s.coverage()), more_columns());
    };
    // Between two steps: the csv so far, the search, the stage.
    auto checkpoint = [&](double t) {
        dir.flush();
        st.save_checkpoint({n.generated, t, save_state(s, n, t, dir.csv_bytes(), exec, peers)});
    };
    auto line = [&](double t) {
        const double rate = t > t0 ? static_cast<double>(n.generated - first) / (t - t0) : 0.0;
        return fmt::format("[{:6.1f}s] {}{} models ({:.0f}/s), valid {:.1f}%, diverse {} | {}", t,
                           peers ? fmt::format("{} ranks, rank 0: ", peers->size()) : std::string(), n.generated, rate,
                           n.generated ? 100.0 * static_cast<double>(n.valid) / static_cast<double>(n.generated) : 0.0, n.diverse,
                           coverage_line(s.coverage())) +
               (exec ? exec->progress(t) : std::string());
    };
    if (!resumed) row(0);
    // The engine's loop (engine/loop.hpp): between steps the books (a csv row a second, a
    // checkpoint, the progress line), the exchange with other ranks and the execution stage's
    // pace; after each, the store, the stage and the queue.
    auto now = clock::now();
    double t = t0;
    auto stop = [&] {
        // Reading the clock every iteration costs ~20 ns; steps take microseconds.
        now = clock::now();
        t = t0 + std::chrono::duration<double>(now - start).count();
        const bool done = (o.iterations && n.generated - first >= o.iterations) || (exec && exec->done()) || t - t0 >= o.seconds;
        if (!peers || !(done || peers->due(t))) return done;
        // Ranks stop together, at the first exchange after any one's budget is spent.
        const auto x = peers->sync(s, st, {n.generated, n.valid, exec ? exec->executed() : 0}, done, t);
        for (std::size_t i = slot_keys.size(); i < s.models().size(); ++i) slot_keys.push_back(model_key(s.models()[i]));
        record_coverage(st, s.coverage(), recorded, n.generated);
        return x.stop;
    };
    // When the search last raised coverage, and when its current slice of steps began (paced; a
    // slice is one step at least).
    auto last_gain = start, slice_start = start;
    std::uint64_t slice_steps = 0;
    const auto pace_after = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.pace_after_seconds));
    const auto slice = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(o.pace_slice_ms));
    auto paced = [&] { return exec && o.pace_after_seconds > 0 && slice_steps && now - last_gain >= pace_after && now - slice_start >= slice; };
    auto wait = [&] {
        if (now >= next_row) {
            row(t);
            next_row += std::chrono::seconds(1);
        }
        if (now >= next_checkpoint) {
            checkpoint(t);
            next_checkpoint = now + every;
        }
        if (!o.quiet && bar.due(now)) bar.show(line(t), now);
        if (exec && exec->poll(t)) {
            exec->wait(t);  // enough models wait for the backends: let them catch up
            return true;
        }
        if (paced()) {
            exec->wait(t);
            slice_start = clock::now(), slice_steps = 0;
            return true;
        }
        if (exec && exec->breeding_learnt() != declines_seen) {
            declines_seen = exec->breeding_learnt();
            reseed_declined();
        }
        return false;
    };
    auto stepped = [&](const auto& r) {
        ++slice_steps;
        if (!r.valid) return;
        const std::uint64_t key = model_key(*r.mutant);
        st.add_generated(n.generated, key, slot_keys[r.slot], names[r.op], r.gain);
        std::string json;  // a model that raised coverage, printed once for the store and queue/
        if (r.gain) {
            last_gain = now;
            json = io::model_to_json(*r.mutant).dump();
            st.add_model_json(key, json);
            record_coverage(st, s.coverage(), recorded, n.generated);
            if (r.mutant == &s.models()[r.slot]) slot_keys[r.slot] = key;
            if (peers) peers->found(*r.mutant, r.gain);
        }
        if (exec && (r.gain || exec->wants_any())) exec->offer(*r.mutant, key, r.gain != 0, n.generated, t);
        if (r.gain) dir.queue(json, n.generated, {{"iteration", n.generated}, {"operator", names[r.op]}, {"slot", r.slot}, {"gain", r.gain}});
    };
    engine::driver d{stop, wait, stepped};
    engine::drive(s, n, d);
    if (exec) exec->drain(t0 + std::chrono::duration<double>(clock::now() - start).count());
    // Reproducers of bugs found late, still running beside the campaign: their verdicts belong in
    // the bugs stored (and shipped). The wait is after the budget, not the campaign's seconds.
    double settling = 0;
    if (exec && exec->unsettled()) {
        const auto from = clock::now();
        if (!o.quiet) bar.finish(fmt::format("waiting for {} reproducer{} to finish", exec->unsettled(), exec->unsettled() == 1 ? "" : "s"));
        exec->settle();
        settling = std::chrono::duration<double>(clock::now() - from).count();
    }
    if (peers) peers->ship_bugs();  // what the last models found
    sum.seconds = t0 + std::chrono::duration<double>(clock::now() - start).count() - settling;
    sum.generated = n.generated, sum.valid = n.valid, sum.diverse = n.diverse;
    for (auto k : all_criteria) {
        sum.covered[static_cast<std::size_t>(k)] = s.coverage().covered(k);
        sum.total[static_cast<std::size_t>(k)] = s.coverage().total(k);
    }
    row(sum.seconds);
    checkpoint(sum.seconds);
    if (!o.quiet) bar.finish(line(sum.seconds));

    io::json stats = stats_json(sum, o, seeds.size(), names, n, s.coverage(), st);
    stats["max_seed_nodes_reached"] = s.max_seed_size();
    if (exec) exec->write_stats(stats);
    if (peers) {
        peers->merge_stats(stats);  // rank 0: the job's figures and each rank's
        if (peers->rank() == 0) sum.generated = stats.at("models_generated"), sum.valid = stats.at("models_valid"), sum.diverse = stats.at("models_diverse");
    }
    dir.finish(stats, s.coverage());
    return sum;
}

template <class Ops, class Selector>
generation_summary run_with(const std::vector<model>& seeds, const registry& reg, Selector sel, const generation_options& o, stage* exec,
                            store::campaign_store& st, const std::optional<store::checkpoint>& resumed) {
    search<model, Ops, memo_coverage, Selector> s(seeds, campaign_coverage(seeds, reg, o), std::move(sel), o.seed);
    s.set_max_seed_size(o.max_seed_nodes, o.max_seed_nodes_grown, o.stall_steps);
    s.context().max_cost = o.max_cost;
    s.context().fresh_seeds = std::is_same_v<Ops, mutation::memo_operators>;
    if (o.accept) s.set_filter(o.accept);
    return run(s, seeds, o, exec, st, resumed, reg);
}

/// The options as the store keeps them; the budgets are the campaign's totals.
inline io::json options_json(const generation_options& o, const std::optional<store::checkpoint>& cp) {
    const double t = cp ? cp->seconds : 0;
    const std::uint64_t i = cp ? cp->iteration : 0;
    return {{"seed", o.seed},
            {"selector", o.selector},
            {"operators", o.operators},
            {"coverage", o.coverage},
            {"p", o.p},
            {"max_seed_nodes", o.max_seed_nodes},
            {"max_seed_nodes_grown", o.max_seed_nodes_grown},
            {"stall_steps", o.stall_steps},
            {"max_cost", o.max_cost},
            {"budget_seconds", t + o.seconds},
            {"budget_iterations", o.iterations ? i + o.iterations : 0},
            {"tool", o.tool}};
}

}  // namespace detail

/// Runs a campaign over these seeds and writes its directory, report.html last; with an execution
/// stage, the models also run on its backends (see execute.hpp). A fresh campaign over a directory
/// that holds a store keeps the store's executions (a model judged before is not run again).
inline generation_summary generate(const std::vector<model>& seeds, const registry& reg, const generation_options& o, stage* exec = nullptr) {
    if (seeds.empty()) throw error("no seed models");
    if (o.selector != "mh" && o.selector != "random") throw error("unknown selector '" + o.selector + "' (mh or random)");
    if (o.operators != "memo" && o.operators != "lemon") throw error("unknown operator set '" + o.operators + "' (memo or lemon)");
    coverage_choice::parse(o.coverage);
    std::filesystem::create_directories(o.out);
    store::campaign_store st(store::campaign_store::file_in(o.out));
    std::optional<store::checkpoint> resumed;
    if (o.resume) {
        resumed = st.load_checkpoint();
        if (!resumed) throw error(o.out + ": nothing to resume (its store holds no checkpoint)");
    } else {
        st.start_over();
    }
    st.begin_run(detail::options_json(o, resumed), o.resume);
    const bool mh = o.selector == "mh", memo_ops = o.operators == "memo";
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
    o.seed = j->at("seed"), o.selector = j->at("selector"), o.operators = j->at("operators"), o.p = j->at("p");
    o.coverage = j->value("coverage", std::string("memo"));
    o.max_seed_nodes = j->at("max_seed_nodes"), o.max_cost = j->at("max_cost"), o.tool = j->at("tool");
    // A campaign stored before the limit grew keeps its fixed limit.
    o.max_seed_nodes_grown = j->value("max_seed_nodes_grown", o.max_seed_nodes), o.stall_steps = j->value("stall_steps", std::size_t{0});
    const double budget_s = j->at("budget_seconds");
    const std::uint64_t budget_i = j->at("budget_iterations");
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
