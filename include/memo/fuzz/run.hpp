#pragma once
// memo-fuzz run: a campaign.
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <fmt/core.h>

#include "../campaign/execute.hpp"
#include "../campaign/generate.hpp"
#include "../campaign/seeds.hpp"
#ifdef MEMO_FUZZ_MPI
#include "../cluster/mpi.hpp"
#endif

#include "backends.hpp"
#include "cli.hpp"
#include "inspect.hpp"

namespace memo::fuzz::commands {

inline std::uint64_t to_u64(const std::string& s, const char* what) {
    try {
        std::size_t used = 0;
        const auto v = std::stoull(s, &used);
        if (used == s.size()) return v;
    } catch (const std::exception&) {}
    throw memo::error(std::string("--") + what + " expects a non-negative integer, got '" + s + "'");
}
inline double to_double(const std::string& s, const char* what) {
    try {
        std::size_t used = 0;
        const auto v = std::stod(s, &used);
        if (used == s.size() && v >= 0) return v;
    } catch (const std::exception&) {}
    throw memo::error(std::string("--") + what + " expects a non-negative number, got '" + s + "'");
}

/// The execution options every command that runs models shares.
inline const std::vector<std::string> execution_flags{"timeout-ms", "memory-mb", "samples", "inputs", "input-range", "dmad-threshold", "in-process"};

inline memo::isolation_limits limits_from(const cli::args& a) {
    memo::isolation_limits lim;
    lim.timeout_ms = to_double(a.get_or("timeout-ms", "10000"), "timeout-ms");
    lim.memory_mb = static_cast<std::int64_t>(to_u64(a.get_or("memory-mb", "4096"), "memory-mb"));
    return lim;
}
inline memo::input_options inputs_from(const cli::args& a) {
    memo::input_options in;
    in.samples = static_cast<std::int64_t>(to_u64(a.get_or("samples", "2"), "samples"));
    if (in.samples < 1) throw memo::error("--samples must be at least 1");
    const auto range = split_list(a.get_or("input-range", "0,1"));
    auto number = [](const std::string& x) {
        try {
            std::size_t used = 0;
            const double v = std::stod(x, &used);
            if (used == x.size()) return v;
        } catch (const std::exception&) {}
        throw memo::error("--input-range expects LO,HI (two numbers), got '" + x + "'");
    };
    if (range.size() != 2) throw memo::error("--input-range expects LO,HI (two numbers)");
    in.lo = number(range[0]);
    in.hi = number(range[1]);
    if (!(in.lo < in.hi)) throw memo::error("--input-range: LO must be below HI");
    const auto kind = a.get_or("inputs", "varied");
    if (kind != "varied" && kind != "uniform") throw memo::error("--inputs expects varied or uniform, got '" + kind + "'");
    in.varied = kind == "varied";
    return in;
}
/// What memo-fuzz itself may hold of a model's values: as much as a worker may (--memory-mb).
inline std::int64_t max_bytes_from(const cli::args& a) { return limits_from(a).memory_mb << 20; }
inline memo::oracle::options oracle_from(const cli::args& a) {
    memo::oracle::options o;
    o.dmad_threshold = to_double(a.get_or("dmad-threshold", "0.5"), "dmad-threshold");
    o.max_bytes = max_bytes_from(a);
    return o;
}
/// Refuses, before any tensor of it exists, a model too large to run within --memory-mb.
inline void check_fits(const memo::model& m, const std::string& file, const cli::args& a) {
    const auto samples = inputs_from(a).samples;
    if (auto fits = memo::within_budget(m, samples, max_bytes_from(a)); !fits)
        throw memo::error(file + ": too large to run within --memory-mb " + std::to_string(limits_from(a).memory_mb) + ": " + fits.reason());
}
/// Which oracles judge: a tester (differential or metamorphic) and the resource oracles.
struct oracle_choice {
    std::string tester = "differential";
    memo::oracle::resource_options resources{};
};
/// --oracle LIST and the resource oracles' flags; a clear error for a name that is no oracle.
inline oracle_choice oracles_from(const cli::args& a) {
    oracle_choice c;
    int testers = 0;
    for (const auto& n : split_list(a.get_or("oracle", "differential"))) {
        if (n == "differential" || n == "metamorphic") c.tester = n, ++testers;
        else if (n == "performance") c.resources.performance = true;
        else if (n == "leak") c.resources.leak = true;
        else if (n == "determinism") c.resources.determinism = true;
        else throw memo::error("--oracle: unknown oracle '" + n + "' (known: differential, metamorphic, performance, leak, determinism)");
    }
    if (testers > 1) throw memo::error("--oracle: differential and metamorphic are two ways to judge a model; choose one");
    auto& r = c.resources;
    r.repeats = static_cast<int>(to_u64(a.get_or("repeats", "5"), "repeats"));
    if (r.repeats < 2 || r.repeats > 100) throw memo::error("--repeats must be between 2 and 100");
    r.slower = to_double(a.get_or("slower", "3"), "slower");
    r.larger = to_double(a.get_or("larger", "3"), "larger");
    if (r.slower < 1 || r.larger < 1) throw memo::error("--slower and --larger are factors of at least 1");
    r.min_ms = to_double(a.get_or("min-ms", "10"), "min-ms");
    r.leak_kb = static_cast<std::int64_t>(to_u64(a.get_or("leak-kb", "1024"), "leak-kb"));
    return c;
}

/// Models in flight at once in a campaign: four lanes keep two cores busy with the libraries'
/// workers while the campaign's own thread judges and generates; with three, the search took the
/// cores the PyTorch and ONNX Runtime workers waited for (docs/benchmarks.md, "Four lanes").
inline constexpr std::size_t default_lanes = 4;

/// The testers a command runs models with: `lanes` of them over the same backends, each with
/// workers of its own (so several models are in flight at once) but for the backends that have one
/// worker for all lanes (backend_kind::one_worker), sharing the in-process references
/// (float64 for the differential oracle's ground truth; the model's dtypes for the metamorphic
/// self-check).
class testers {
public:
    testers(const cli::args& a, const std::string& backends, const memo::registry& reg, const memo::input_options& in, std::size_t lanes = 1,
            const std::string& kind = "differential") {
        for (std::size_t i = 0; i < lanes; ++i) {
            workers_.push_back(make_backends(backends, reg, limits_from(a), !a.has("in-process"), &shared_));
            std::vector<memo::executor*> xs;
            for (const auto& x : workers_.back()) xs.push_back(x.get());
            if (kind == "metamorphic") lanes_.push_back(std::make_unique<memo::oracle::metamorphic_tester>(std::move(xs), reference_, reg, oracle_from(a), in));
            else lanes_.push_back(std::make_unique<memo::oracle::differential>(std::move(xs), truth_, reg, oracle_from(a), in));
        }
    }
    testers(const testers&) = delete;  // the lanes refer to the references
    testers& operator=(const testers&) = delete;

    memo::oracle::tester& first() { return *lanes_.front(); }
    std::vector<memo::oracle::tester*> lanes() const {
        std::vector<memo::oracle::tester*> r;
        for (const auto& l : lanes_) r.push_back(l.get());
        return r;
    }

private:
    memo::in_process<memo::reference::interpreter> truth_{memo::reference::interpreter(memo::dtype::float64)};
    memo::in_process<memo::reference::interpreter> reference_{memo::reference::interpreter()};
    shared_workers shared_;  // the workers that serve every lane
    std::vector<std::vector<std::unique_ptr<memo::executor>>> workers_;
    std::vector<std::unique_ptr<memo::oracle::tester>> lanes_;
};

/// The help text of the execution options.
inline const std::string execution_help =
    "\nexecution options:\n"
    "  --timeout-ms T       a run past T ms is a timeout verdict; its worker is replaced (default 10000)\n"
    "  --memory-mb M        a worker that grows by more than M MiB resident is killed: a memory verdict\n"
    "                       (default 4096)\n"
    "  --samples N          samples per input batch (default 2)\n"
    "  --inputs KIND        varied (default): each input from a generator its model's seed picks (uniform,\n"
    "                       symmetric, tiny, wide, normal, sparse, thresholds, large; docs/oracles.md);\n"
    "                       uniform: every input uniform in the --input-range, as MEMO\n"
    "  --input-range LO,HI  the uniform generator's range (default 0,1, as MEMO)\n"
    "  --dmad-threshold D   D_MAD above which an output difference counts (default 0.5)\n"
    "  --in-process         run the backends in this process (no isolation; for debugging)";

/// Options a resumed campaign takes from its first run rather than from its command line.
inline bool stored_option(const std::string& k) { return k != "out" && k != "resume" && k != "seconds" && k != "iterations" && k != "quiet" && k != "mpi"; }

/// Where a rank of a campaign over several keeps its own store, queue and bugs: rank 0 in the
/// campaign directory itself (it owns stats.json, coverage.csv, bugs/ and the report), rank r in
/// DIR/ranks/r (on its own machine's disk when DIR is not shared).
inline std::string rank_dir(const std::string& dir, int rank) {
    return rank == 0 ? dir : (std::filesystem::path(dir) / "ranks" / std::to_string(rank)).string();
}

/// The root causes a --known file names: the first word of each line, # starting a comment.
inline std::set<std::string> known_root_causes(const std::string& file) {
    std::string text;
    try {
        text = memo::io::read_file(file);
    } catch (const std::exception& e) {
        throw memo::error(file + ": cannot read the known root causes: " + e.what());
    }
    std::set<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        if (std::string word; words >> word) out.insert(word);
    }
    return out;
}

/// A campaign; `world` when this process is one rank of an MPI job (--mpi).
inline int run_campaign(const cli::args& given, memo::cluster::communicator* world) {
    namespace fs = std::filesystem;
    const auto& reg = memo::fuzz::setup().layers();
    const int rank = world ? world->rank() : 0;
    cli::args a = given;
    memo::campaign::generation_options o;
    std::vector<memo::model> seeds;
    if (given.has("resume")) {
        // The campaign's own options come back from its store; only the budget and --quiet are new.
        for (const auto& [k, v] : given.options())
            if (stored_option(k)) throw memo::error("--resume continues a campaign with its own options; --" + k + " cannot change them");
        const std::string dir = *given.get("resume");
        auto r = memo::campaign::resume_options(rank_dir(dir, rank), reg);
        const int ranks = r.options.tool.value("ranks", 0);
        if (ranks && !world)
            throw memo::error(
                fmt::format("{}: a campaign over {} ranks; resume it with mpirun -np {} memo-fuzz run --mpi --resume {}", dir, ranks, ranks, dir));
        if (world && ranks != world->size())
            throw memo::error(ranks ? fmt::format("{}: a campaign over {} ranks cannot resume over {}; use mpirun -np {}", dir, ranks, world->size(), ranks)
                                    : dir + ": a campaign of one process; resume it without --mpi");
        for (const auto& [k, v] : r.options.tool.at("args").items()) a.set(k, v.get<std::string>());
        if (r.finished && !given.has("seconds") && !given.has("iterations")) {
            // Killed between its last checkpoint and its results: write them, running nothing new.
            if (std::filesystem::exists(std::filesystem::path(r.options.out) / "stats.json"))
                throw memo::error(r.options.out + ": the campaign ran its whole budget; give --seconds S or --iterations N to run it further");
            r.options.seconds = 0;
            r.options.iterations = 0;
        }
        o = std::move(r.options);
        if (given.has("seconds")) o.seconds = to_double(*given.get("seconds"), "seconds");
        if (given.has("iterations")) o.iterations = to_u64(*given.get("iterations"), "iterations");
        seeds = std::move(r.seeds);
    } else {
        o.out = a.get("out").value_or("");
        if (o.out.empty()) throw memo::error("--out DIR is required (the campaign directory)");
        o.out = rank_dir(o.out, rank);
        for (const char* f : {"stats.json", "store.db"})
            if (fs::exists(fs::path(o.out) / f))
                throw memo::error(o.out + ": already holds a campaign (" + f + "); continue it with --resume " + o.out + ", or choose another --out");
        o.seconds = to_double(a.get_or("seconds", "60"), "seconds");
        o.iterations = to_u64(a.get_or("iterations", "0"), "iterations");
        o.seed = to_u64(a.get_or("seed", "0"), "seed") + static_cast<std::uint64_t>(rank);  // each rank its own search
        o.selector = a.get_or("selector", "mh");
        o.operators = a.get_or("operators", "memo");
        o.coverage = a.get_or("coverage", o.coverage);
        memo::campaign::coverage_choice::parse(o.coverage);  // an unknown one fails before anything starts
        o.p = to_double(a.get_or("p", "0.05"), "p");
        o.max_seed_nodes = to_u64(a.get_or("max-seed-nodes", "16"), "max-seed-nodes");
        o.max_seed_nodes_grown = to_u64(a.get_or("grow-seed-nodes-to", "160"), "grow-seed-nodes-to");
        o.stall_steps = to_u64(a.get_or("stall-steps", "5000"), "stall-steps");
        memo::io::json stored = memo::io::json::object();
        for (const auto& [k, v] : a.options())
            if (stored_option(k)) stored[k] = v;
        o.tool = {{"args", stored}, {"program", program_path()}};
        if (world) o.tool["ranks"] = world->size();
        if (!a.has("seeds") && setup().seeds) seeds = setup().seeds(reg);  // the program's own
        else seeds = memo::campaign::load_seeds(a.get_or("seeds", "zoo"), reg, model_readers());
    }
    o.quiet = a.has("quiet") || rank != 0;  // one progress line: rank 0's
    memo::cluster::exchange_options xo;
    xo.seconds = to_double(a.get_or("sync-seconds", "3"), "sync-seconds");
    xo.share = to_u64(a.get_or("share", "8"), "share");
    if (xo.seconds <= 0) throw memo::error("--sync-seconds must be above 0");
    if (world && memo::campaign::coverage_choice::parse(o.coverage).rnn_state)
        throw memo::error("--mpi merges MEMO's four criteria; --coverage memo,rnn-state runs in one process only");
    const auto oracles = oracles_from(a);  // a bad oracle option fails before anything starts
    const auto backends = a.get_or("backends", default_backends());
    if (backends == "none") {
        std::optional<memo::cluster::exchange> x;
        if (world) o.peers = &x.emplace(*world, reg, xo);
        const auto s = memo::campaign::generate(seeds, reg, o);
        if (rank != 0) return 0;
        fmt::print("{}: {} models in {:.1f} s ({:.0f}/s), {} valid, {} raised coverage; see stats.json, coverage.csv, queue/\n", o.out, s.generated, s.seconds,
                   static_cast<double>(s.generated) / std::max(s.seconds, 1e-9), s.valid, s.diverse);
        for (auto k : memo::all_criteria) print_coverage_row(k, s.covered[static_cast<std::size_t>(k)], s.total[static_cast<std::size_t>(k)]);
        return 0;
    }
    // Small tensors by default: execution speed comes from them (--full-size keeps the seeds' own).
    // (A resumed campaign's seeds are those its directory holds, shrunk already.)
    const bool full = a.has("full-size");
    const auto max_cost = static_cast<std::int64_t>(to_u64(a.get_or("max-cost", std::to_string(memo::campaign::execution_options{}.max_cost)), "max-cost"));
    std::vector<memo::model> small;
    for (const auto& m : seeds) small.push_back(full || o.resume ? m : memo::campaign::fit_to_cost(m, max_cost / 10));
    for (std::size_t i = 0; i < small.size(); ++i)
        check_fits(small[i], "seed " + std::to_string(i) + " of --seeds " + a.get_or("seeds", setup().seeds ? "(the program's)" : "zoo"), a);
    const auto lanes = to_u64(a.get_or("lanes", std::to_string(default_lanes)), "lanes");
    if (lanes < 1 || lanes > 16) throw memo::error("--lanes must be between 1 and 16");
    testers t(a, backends, reg, inputs_from(a), lanes, oracles.tester);
    if (a.has("no-trace"))
        for (auto* d : t.lanes())
            for (auto* x : d->participants()) x->set_traceable(false);
    memo::campaign::execution_options eo;
    eo.minimise = !a.has("no-minimise");
    eo.reproducers = !a.has("no-reproducers");
    if (a.has("known")) eo.known_root_causes = known_root_causes(*a.get("known"));
    eo.attach = bug_files();
    eo.replay = replay_command();  // repro.sh calls this program, which knows its backends
    eo.versions = versions_of(split_list(backends));
    eo.max_models = to_u64(a.get_or("models", "0"), "models");
    eo.fill = !a.has("no-fill");
    eo.max_cost = full ? 0 : max_cost;
    eo.max_bytes = max_bytes_from(a);
    eo.resources = oracles.resources;
    o.max_cost = eo.max_cost;  // the search itself keeps to models the backends can run quickly
    memo::campaign::execution exec(t.lanes(), reg, o.out, eo);
    std::optional<memo::cluster::exchange> x;
    if (world) o.peers = &x.emplace(*world, reg, xo, &exec.store());
    const auto s = memo::campaign::generate(small, reg, o, &exec);
    if (rank != 0) return 0;
    const double secs = std::max(s.seconds, 1e-9);
    std::string bugs;
    for (auto k : exec.reported_kinds())
        bugs += fmt::format("{}{} {}", bugs.empty() ? "" : ", ", exec.store().unique(memo::oracle::name_of(k)), memo::oracle::name_of(k));
    // Over several ranks, the job's figures are in rank 0's stats.json.
    const auto job = world ? memo::io::parse_json_file((fs::path(o.out) / "stats.json").string()) : memo::io::json::object();
    if (exec.store().unique()) bugs += fmt::format(" ({} root causes)", exec.store().root_cause_count());
    const std::uint64_t executed = job.value("models_executed", exec.executed());
    fmt::print("{}: {}{} models generated ({:.0f}/s), {} executed on {} ({:.1f}/s; {} run, {} memo hits); bugs: {}\n", o.out,
               world ? fmt::format("{} ranks, ", world->size()) : std::string(), s.generated, static_cast<double>(s.generated) / secs, executed, backends,
               static_cast<double>(executed) / secs, job.value(memo::io::json::json_pointer("/memo/models_run"), exec.models_run()),
               job.value(memo::io::json::json_pointer("/memo/hits"), exec.memo_hits()), bugs);
    for (auto k : memo::all_criteria) print_coverage_row(k, s.covered[static_cast<std::size_t>(k)], s.total[static_cast<std::size_t>(k)]);
    fmt::print("report: {}/report.html\n", o.out);
    if (exec.store().unique())
        fmt::print("bugs are in {}/bugs/<kind>/<signature>/; each replays with its repro.sh ({} replay <that directory>)\n", o.out, setup().program);
    return 0;
}

inline int run(const cli::args& given) {
    auto flags = std::vector<std::string>{"backends",
                                          "seconds",
                                          "out",
                                          "iterations",
                                          "seed",
                                          "selector",
                                          "operators",
                                          "coverage",
                                          "seeds",
                                          "p",
                                          "max-seed-nodes",
                                          "quiet",
                                          "no-minimise",
                                          "no-reproducers",
                                          "known",
                                          "full-size",
                                          "max-cost",
                                          "lanes",
                                          "models",
                                          "resume",
                                          "no-fill",
                                          "no-trace",
                                          "oracle",
                                          "repeats",
                                          "slower",
                                          "larger",
                                          "min-ms",
                                          "leak-kb",
                                          "mpi",
                                          "sync-seconds",
                                          "share",
                                          "grow-seed-nodes-to",
                                          "stall-steps"};
    flags.insert(flags.end(), execution_flags.begin(), execution_flags.end());
    given.only(flags);
    if (!given.positional().empty()) throw memo::error("unexpected argument '" + given.positional()[0] + "'");
    if (!given.has("mpi")) {
        if (given.has("sync-seconds") || given.has("share")) throw memo::error("--sync-seconds and --share are options of --mpi");
        return run_campaign(given, nullptr);
    }
#ifdef MEMO_FUZZ_MPI
    memo::cluster::mpi_session session;
    memo::cluster::mpi_communicator world;
    try {
        return run_campaign(given, &world);
    } catch (const std::exception& e) {
        // The other ranks would wait for this one in their next exchange: the job goes down.
        fmt::print(stderr, "memo-fuzz: rank {}: error: {}\n", world.rank(), e.what());
        memo::cluster::mpi_session::abort(1);
    }
#else
    throw memo::error("--mpi: this memo-fuzz was built without MPI (install libopenmpi-dev and openmpi-bin, then rebuild)");
#endif
}

inline cli::command run_command() {
    return {"run",
            "run (--out DIR | --resume DIR) [--backends LIST|none] [--seconds S] [--iterations N] [--models N] [--seed N] "
            "[--selector mh|random] [--operators memo|lemon] [--coverage LIST] [--seeds zoo|DIR] [--oracle LIST] [--mpi] [execution options]",
            "Runs a campaign: MEMO's search over (model, operator) seeds, from the reduced seed models, with\n"
            "the generated models run on the backends under test (each in its own worker process) and judged\n"
            "by the differential oracle (crash, nan, inconsistency; shape when ONNX's checks disagree), or by the\n"
            "metamorphic one (metamorphic; crash), with the performance, leak and determinism oracles beside\n"
            "either. Models that raised coverage run first. Stops at whichever of the time or iteration\n"
            "limit comes first. Writes DIR/stats.json, DIR/coverage.csv (a row per second), DIR/queue/ (each\n"
            "model that raised coverage, named by iteration), DIR/seeds/ and DIR/bugs/<kind>/<signature>/ (one\n"
            "directory per distinct bug, with its model, minimal model, verdict, localisation and a replay\n"
            "command), and last DIR/report.html (charts, bug table, missing coverage; see memo-fuzz report).\n"
            "The same --seed and --iterations give the same models.\n\n"
            "DIR/store.db keeps every model generated, every run (status, output digests, time, memory), the\n"
            "oracle's judgements and a checkpoint a second: a model judged before on the same backends is not\n"
            "run again (a memo hit), and --resume DIR continues a finished or killed campaign exactly where its\n"
            "checkpoint left it (see memo-fuzz replay DIR and memo-fuzz stats DIR).\n\n"
            "  --out DIR            the campaign directory (must not hold a campaign already)\n"
            "  --resume DIR         continue the campaign in DIR with its own options; --seconds and --iterations\n"
            "                       then say how much more to run (default: what is left of its budget)\n"
            "  --backends LIST      comma-separated backend names, as `memo-fuzz backends` lists them (default:\n"
            "                       reference and every library installed among torch, ort and, where a GPU is,\n"
            "                       cuda); none: generation only\n"
            "  --seconds S          time limit (default 60)\n"
            "  --iterations N       iteration limit (default: none)\n"
            "  --models N           stop once N models were executed (default: no limit)\n"
            "  --seed N             random seed (default 0)\n"
            "  --selector mh|random Metropolis-Hastings (MEMO) or uniform (MEMO_r); default mh\n"
            "  --p P                the Metropolis-Hastings parameter (default 0.05)\n"
            "  --operators memo|lemon   MEMO's operators, or LEMON's (MEMO_o); default memo\n"
            "  --coverage LIST      what counts as new: memo (MEMO's four criteria, always), graph-pairs\n"
            "                       (every producer-consumer pair of classes in the graph a library runs,\n"
            "                       adapters and Dense included; docs/coverage.md), rnn-state (DeepStellar's\n"
            "                       RNN states and transitions, on the reference; docs/rnn-state.md);\n"
            "                       default memo,graph-pairs (memo alone: MEMO's search as published)\n"
            "  --seeds zoo|zoo:NAME,...|DIR   the ten reduced architectures (default), some of them by name\n"
            "                       (zoo:lstm0-sinewave,lstm2-price), or a directory of .json and .onnx models\n"
            "  --max-seed-nodes N   diverse mutants grown past N nodes stay results, not seeds (default 16)\n"
            "  --grow-seed-nodes-to M   the limit doubles, up to M, each time the search stalls (default\n"
            "                       160; M = N keeps it fixed)\n"
            "  --stall-steps K      the search stalls after K steps in a row with no diverse mutant\n"
            "                       (default 5000; 0: the limit never grows)\n"
            "  --quiet              no progress line\n"
            "  --no-minimise        store bugs without shrinking their models\n"
            "  --no-reproducers     store bugs without their reproducers in repro/ (see memo-fuzz reproduce)\n"
            "  --known FILE         root causes already reported, one a line as bug.json names them (# starts a\n"
            "                       comment): their bugs are counted (bugs.known_sightings), not minimised or stored\n"
            "  --max-cost C         generate and run only models costing at most C multiply-add equivalents\n"
            "                       per sample (default 3000000; see docs/execution.md); seeds are shrunk\n"
            "                       (inputs, filters, units) to a tenth of it\n"
            "  --full-size          no shrinking and no cost limit\n"
            "  --lanes N            models in flight at once, each lane with workers of its own (default 4)\n"
            "  --no-fill            run only models that raised coverage, never another valid model when a\n"
            "                       worker idles: the models run then depend on --seed and --iterations alone, so\n"
            "                       a resumed campaign finds the same bugs as one run in one go\n"
            "  --no-trace           store only each run's output digests, not one per node: runs return only\n"
            "                       the model's outputs (faster), and replay cannot name the first divergent node\n"
            "\noracles (see docs/oracles.md):\n"
            "  --oracle LIST        comma-separated: differential (default: the backends against each other) or\n"
            "                       metamorphic (each backend alone, on a model and a variant that must give the\n"
            "                       same outputs: one library is enough, e.g. --oracle metamorphic --backends\n"
            "                       torch); and performance, leak, determinism (every model that ran is run\n"
            "                       --repeats more times on each backend, and the time and memory figures judged,\n"
            "                       and whether its outputs stay the same bit for bit: nondeterminism)\n"
            "  --repeats R          runs of each model for performance, leak and determinism (default 5)\n"
            "  --slower F           performance: a median time F times another backend's, or a run F times the\n"
            "                       median of its own earlier runs (default 3)\n"
            "  --larger F           performance: memory a run takes F times another backend's (default 3)\n"
            "  --min-ms T           time differences under T ms are noise (default 10)\n"
            "  --leak-kb K          leak: peak memory growing at least K KiB a run from the second on (default 1024)\n"
            "\nover several processes (see docs/cluster.md):\n"
            "  --mpi                this process is one rank of an MPI job: mpirun -np N memo-fuzz run --mpi ...\n"
            "                       Each rank runs its own search (seed + rank) on backends of its own; every\n"
            "                       --sync-seconds they merge their coverage (a bitwise OR), send one another the\n"
            "                       models that raised it (adopted into the seed pools of the ranks they are new\n"
            "                       to), and send rank 0 their bugs, stored once per signature. Rank 0 owns DIR\n"
            "                       (stats.json with ranks and per_rank, coverage.csv of the whole job, bugs/,\n"
            "                       report.html); rank r keeps its own store in DIR/ranks/r. The job stops at the\n"
            "                       first exchange after any rank's budget; a job that died resumes with\n"
            "                       mpirun -np N memo-fuzz run --mpi --resume DIR\n"
            "  --sync-seconds S     seconds between two exchanges (default 3)\n"
            "  --share N            models each rank sends per exchange, at most (default 8)\n" +
                execution_help,
            {"backends",       "seconds",  "out",     "iterations", "seed",       "selector",  "operators", "coverage",     "seeds",       "p",
             "max-seed-nodes", "max-cost", "lanes",   "models",     "timeout-ms", "memory-mb", "samples",   "inputs",       "input-range", "dmad-threshold",
             "resume",         "oracle",   "repeats", "slower",     "larger",     "min-ms",    "leak-kb",   "sync-seconds", "share",       "grow-seed-nodes-to",
             "stall-steps",    "known"},
            run};
}

}  // namespace memo::fuzz::commands
