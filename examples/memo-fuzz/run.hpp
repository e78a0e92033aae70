#pragma once
// memo-fuzz run: a campaign.
#include <filesystem>

#include <fmt/core.h>

#include <memo/campaign/generate.hpp>
#include <memo/campaign/seeds.hpp>

#include "cli.hpp"
#include "inspect.hpp"

namespace commands {

inline std::uint64_t to_u64(const std::string& s, const char* what) {
    try {
        std::size_t used = 0;
        const auto v = std::stoull(s, &used);
        if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
    throw memo::error(std::string("--") + what + " expects a non-negative integer, got '" + s + "'");
}
inline double to_double(const std::string& s, const char* what) {
    try {
        std::size_t used = 0;
        const auto v = std::stod(s, &used);
        if (used == s.size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw memo::error(std::string("--") + what + " expects a non-negative number, got '" + s + "'");
}

inline int run(const cli::args& a) {
    a.only({"backends", "seconds", "out", "iterations", "seed", "selector", "operators", "seeds", "p", "max-seed-nodes", "quiet"});
    if (!a.positional().empty()) throw memo::error("unexpected argument '" + a.positional()[0] + "'");
    const auto backends = a.get_or("backends", "none");
    if (backends != "none") throw memo::error("--backends " + backends + ": only 'none' (generation without execution) is available");
    memo::campaign::generation_options o;
    o.out = a.get("out").value_or("");
    if (o.out.empty()) throw memo::error("--out DIR is required (the campaign directory)");
    if (std::filesystem::exists(std::filesystem::path(o.out) / "stats.json"))
        throw memo::error(o.out + ": already holds a campaign (stats.json); choose another --out");
    o.seconds = to_double(a.get_or("seconds", "60"), "seconds");
    o.iterations = to_u64(a.get_or("iterations", "0"), "iterations");
    o.seed = to_u64(a.get_or("seed", "0"), "seed");
    o.selector = a.get_or("selector", "mh");
    o.operators = a.get_or("operators", "memo");
    o.p = to_double(a.get_or("p", "0.05"), "p");
    o.max_seed_nodes = to_u64(a.get_or("max-seed-nodes", "160"), "max-seed-nodes");
    o.quiet = a.has("quiet");
    const auto& reg = memo::default_registry();
    const auto seeds = memo::campaign::load_seeds(a.get_or("seeds", "zoo"), reg);
    const auto s = memo::campaign::generate(seeds, reg, o);
    fmt::print("{}: {} models in {:.1f} s ({:.0f}/s), {} valid, {} raised coverage; see stats.json, coverage.csv, queue/\n", o.out,
               s.generated, s.seconds, static_cast<double>(s.generated) / std::max(s.seconds, 1e-9), s.valid, s.diverse);
    for (auto k : memo::all_criteria) print_coverage_row(k, s.covered[static_cast<std::size_t>(k)], s.total[static_cast<std::size_t>(k)]);
    return 0;
}

inline cli::command run_command() {
    return {"run",
            "run --out DIR [--backends none] [--seconds S] [--iterations N] [--seed N] [--selector mh|random] "
            "[--operators memo|lemon] [--seeds zoo|DIR]",
            "Runs a campaign: MEMO's search over (model, operator) seeds, from the reduced seed models.\n"
            "Stops at whichever of the time or iteration limit comes first. Writes DIR/stats.json,\n"
            "DIR/coverage.csv (a row per second), DIR/queue/ (each model that raised coverage, named by\n"
            "iteration) and DIR/seeds/. The same --seed and --iterations give the same models.\n\n"
            "  --out DIR            the campaign directory (must not hold a campaign already)\n"
            "  --backends none      generation only, no execution\n"
            "  --seconds S          time limit (default 60)\n"
            "  --iterations N       iteration limit (default: none)\n"
            "  --seed N             random seed (default 0)\n"
            "  --selector mh|random Metropolis-Hastings (MEMO) or uniform (MEMO_r); default mh\n"
            "  --p P                the Metropolis-Hastings parameter (default 0.05)\n"
            "  --operators memo|lemon   MEMO's operators, or LEMON's (MEMO_o); default memo\n"
            "  --seeds zoo|DIR      the ten reduced architectures (default), or a directory of .json models\n"
            "  --max-seed-nodes N   larger diverse mutants stay results, not seeds (default 160)\n"
            "  --quiet              no progress line",
            {"backends", "seconds", "out", "iterations", "seed", "selector", "operators", "seeds", "p", "max-seed-nodes"},
            run};
}

}  // namespace commands
