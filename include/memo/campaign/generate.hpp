#pragma once
// A generation campaign: the search over seed models with no execution, its live progress line,
// and its directory: stats.json, coverage.csv (a row per second), queue/ (every model that raised
// coverage, named by iteration), seeds/ (the models it started from) and report.html.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "../io/json.hpp"
#include "../report/report.hpp"
#include "../search/search.hpp"
#include "progress.hpp"
#include "stage.hpp"

namespace memo::campaign {

struct generation_options {
    std::string out;                   // campaign directory
    double seconds = 60;               // stop after this long...
    std::uint64_t iterations = 0;      // ...or this many iterations (0: no limit), whichever comes first
    std::uint64_t seed = 0;
    std::string selector = "mh";       // mh | random
    std::string operators = "memo";    // memo | lemon
    double p = 0.05;                   // Metropolis-Hastings parameter
    std::size_t max_seed_nodes = 160;  // larger diverse mutants are kept as results, not as seeds
    bool quiet = false;                // no progress line
    std::int64_t max_cost = 0;         // mutants costlier to run (reduce/cost.hpp) are rejected; 0: no limit
    /// Mutants this rejects are invalid (search::set_filter): say, a library's own supports(), so
    /// that a campaign on one library keeps to the models it runs.
    std::function<expected<void>(const model&)> accept;
};

struct generation_summary {
    std::uint64_t generated = 0, valid = 0, diverse = 0;
    double seconds = 0;
    std::array<std::size_t, criteria_count> covered{}, total{};  // by criterion, at the end
};

/// {"layer_type": {"covered": c, "total": t}, ...}: how stats.json and the CLI write coverage.
inline io::json coverage_json(const memo_coverage& c) {
    io::json j = io::json::object();
    for (auto k : all_criteria) j[std::string(name_of(k))] = {{"covered", c.covered(k)}, {"total", c.total(k)}};
    return j;
}

namespace detail {

inline std::string coverage_line(const memo_coverage& c) {
    return fmt::format("types {}/{} pairs {}/{} params {}/{} inputs {}/{}", c.covered(criterion::layer_type), c.total(criterion::layer_type),
                       c.covered(criterion::layer_pair), c.total(criterion::layer_pair), c.covered(criterion::layer_param),
                       c.total(criterion::layer_param), c.covered(criterion::layer_input), c.total(criterion::layer_input));
}

template <class Search>
generation_summary run(Search& s, const std::vector<model>& seeds, const generation_options& o, stage* exec) {
    namespace fs = std::filesystem;
    using clock = std::chrono::steady_clock;
    const fs::path dir(o.out);
    fs::create_directories(dir / "queue");
    fs::create_directories(dir / "seeds");
    for (std::size_t i = 0; i < seeds.size(); ++i)
        io::write_file((dir / "seeds" / fmt::format("{:03}.json", i)).string(), io::model_to_json(seeds[i]).dump() + "\n");

    std::ofstream csv(dir / "coverage.csv");
    if (!csv) throw error((dir / "coverage.csv").string() + ": cannot write");
    csv << "seconds,models,valid,executed";
    for (auto k : all_criteria) csv << ',' << name_of(k);
    csv << '\n';

    const auto names = Search::operator_names();
    std::vector<std::uint64_t> op_selected(names.size()), op_valid(names.size()), op_diverse(names.size());
    generation_summary sum;
    progress bar;
    const auto start = clock::now();
    auto next_row = start + std::chrono::seconds(1);
    auto row = [&](double t) {
        csv << fmt::format("{:.3f},{},{},{}", t, sum.generated, sum.valid, exec ? exec->executed() : 0);
        for (auto k : all_criteria) csv << ',' << s.coverage().covered(k);
        csv << '\n';
    };
    auto line = [&](double t) {
        return fmt::format("[{:6.1f}s] {} models ({:.0f}/s), valid {:.1f}%, diverse {} | {}", t, sum.generated,
                           t > 0 ? static_cast<double>(sum.generated) / t : 0.0,
                           sum.generated ? 100.0 * static_cast<double>(sum.valid) / static_cast<double>(sum.generated) : 0.0, sum.diverse,
                           coverage_line(s.coverage())) +
               (exec ? exec->progress(t) : std::string());
    };
    row(0);
    for (;;) {
        if (o.iterations && sum.generated >= o.iterations) break;
        if (exec && exec->done()) break;
        // Reading the clock every iteration costs ~20 ns; steps take microseconds.
        const auto now = clock::now();
        const double t = std::chrono::duration<double>(now - start).count();
        if (t >= o.seconds) break;
        if (now >= next_row) {
            row(t);
            next_row += std::chrono::seconds(1);
        }
        if (!o.quiet && bar.due(now)) bar.show(line(t), now);
        if (exec && exec->poll(t)) {
            exec->wait(t);  // enough models wait for the backends: let them catch up
            continue;
        }

        const auto r = s.step();
        ++sum.generated;
        ++op_selected[r.op];
        if (!r.valid) continue;
        ++sum.valid;
        ++op_valid[r.op];
        if (exec && (r.gain || exec->wants_any())) exec->offer(*r.mutant, r.gain != 0, sum.generated, t);
        if (!r.gain) continue;
        ++sum.diverse;
        ++op_diverse[r.op];
        io::json j = io::model_to_json(*r.mutant);
        j["origin"] = {{"iteration", sum.generated}, {"operator", names[r.op]}, {"slot", r.slot}, {"gain", r.gain}};
        io::write_file((dir / "queue" / fmt::format("{:09}.json", sum.generated)).string(), j.dump() + "\n");
    }
    if (exec) exec->drain(std::chrono::duration<double>(clock::now() - start).count());
    sum.seconds = std::chrono::duration<double>(clock::now() - start).count();
    for (auto k : all_criteria) {
        sum.covered[static_cast<std::size_t>(k)] = s.coverage().covered(k);
        sum.total[static_cast<std::size_t>(k)] = s.coverage().total(k);
    }
    row(sum.seconds);
    if (!o.quiet) bar.finish(line(sum.seconds));

    io::json per_op = io::json::object();
    for (std::size_t i = 0; i < names.size(); ++i)
        per_op[std::string(names[i])] = {{"selected", op_selected[i]}, {"valid", op_valid[i]}, {"diverse", op_diverse[i]}};
    const double secs = std::max(sum.seconds, 1e-9);
    io::json stats = {{"seconds", sum.seconds},
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
                      {"seeds", seeds.size()},
                      {"backends", io::json::array()},
                      {"coverage", coverage_json(s.coverage())},
                      {"per_operator", per_op}};
    if (exec) exec->write_stats(stats);
    io::write_file((dir / "stats.json").string(), stats.dump(2) + "\n");
    return sum;
}

template <class Ops, class Selector>
generation_summary run_with(const std::vector<model>& seeds, const registry& reg, Selector sel, const generation_options& o, stage* exec) {
    search<model, Ops, memo_coverage, Selector> s(seeds, memo_coverage(reg), std::move(sel), o.seed);
    s.set_max_seed_size(o.max_seed_nodes);
    s.context().max_cost = o.max_cost;
    if (o.accept) s.set_filter(o.accept);
    return run(s, seeds, o, exec);
}

}  // namespace detail

/// Runs a campaign over these seeds and writes its directory, report.html last; with an execution
/// stage, the models also run on its backends (see execute.hpp).
inline generation_summary generate(const std::vector<model>& seeds, const registry& reg, const generation_options& o, stage* exec = nullptr) {
    if (seeds.empty()) throw error("no seed models");
    if (o.selector != "mh" && o.selector != "random") throw error("unknown selector '" + o.selector + "' (mh or random)");
    if (o.operators != "memo" && o.operators != "lemon") throw error("unknown operator set '" + o.operators + "' (memo or lemon)");
    const bool mh = o.selector == "mh", memo_ops = o.operators == "memo";
    using namespace mutation;
    const auto sum = mh && memo_ops ? detail::run_with<memo_operators>(seeds, reg, mh_selector(o.p), o, exec)
                     : mh           ? detail::run_with<lemon_operators>(seeds, reg, mh_selector(o.p), o, exec)
                     : memo_ops     ? detail::run_with<memo_operators>(seeds, reg, random_selector{}, o, exec)
                                    : detail::run_with<lemon_operators>(seeds, reg, random_selector{}, o, exec);
    report::write_report(o.out, reg);
    return sum;
}

}  // namespace memo::campaign
