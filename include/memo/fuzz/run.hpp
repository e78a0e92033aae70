#pragma once
// memo-fuzz run: a campaign.
#include <filesystem>
#include <functional>
#include <optional>
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

/// A number as an option's default reads: 10000, 0.5, 1e-3.
inline std::string typed(double x) { return fmt::format("{}", x); }

/// The options every command that runs models takes; their defaults are the library's.
inline cli::options execution_options() {
    const memo::isolation_limits lim;
    const memo::input_options in = memo::varied_inputs;
    const memo::oracle::options o;
    return {cli::heading("execution options"),
            cli::valued("timeout-ms", "T", "a run past T ms is a timeout verdict; its worker is replaced", typed(lim.timeout_ms)),
            cli::valued("memory-mb", "M", "a worker that grows by more than M MiB resident is killed: a memory verdict", std::to_string(lim.memory_mb)),
            cli::valued("samples", "N", "samples per input batch", std::to_string(in.samples)),
            cli::valued("inputs", "KIND",
                        "varied: each input from a generator its model's seed picks (uniform, symmetric, tiny, wide, normal, sparse, thresholds, "
                        "large; docs/oracles.md); uniform: every input uniform in the --input-range, as MEMO",
                        in.varied ? "varied" : "uniform"),
            cli::valued("input-range", "LO,HI", "the uniform generator's range, MEMO's by default", typed(in.lo) + "," + typed(in.hi)),
            cli::valued("dmad-threshold", "D", "D_MAD above which an output difference counts", typed(o.dmad_threshold)),
            cli::flag("in-process", "run the backends in this process (no isolation; for debugging)")};
}

/// --oracle and the resource oracles' settings; their defaults are the library's.
inline cli::options oracle_options() {
    const memo::oracle::resource_options r;
    return {cli::heading("oracles (see docs/oracles.md)"),
            cli::valued("oracle", "LIST",
                        "comma-separated: differential (the backends against each other) or metamorphic (each backend alone, on a model and a "
                        "variant that must give the same outputs: one library is enough, e.g. --oracle metamorphic --backends torch); and "
                        "performance, leak, determinism (every model that ran is run --repeats more times on each backend, and the time and "
                        "memory figures judged, and whether its outputs stay the same bit for bit: nondeterminism)",
                        "differential"),
            cli::valued("repeats", "R", "runs of each model for performance, leak and determinism", std::to_string(r.repeats)),
            cli::valued("slower", "F", "performance: a median time F times another backend's, or a run F times the median of its own earlier runs",
                        typed(r.slower)),
            cli::valued("larger", "F", "performance: memory a run takes F times another backend's", typed(r.larger)),
            cli::valued("min-ms", "T", "time differences under T ms are noise", typed(r.min_ms)),
            cli::valued("leak-kb", "K", "leak: peak memory growing at least K KiB a run from the second on", std::to_string(r.leak_kb))};
}

inline memo::isolation_limits limits_from(const cli::args& a) {
    memo::isolation_limits lim;
    lim.timeout_ms = a.number("timeout-ms");
    lim.memory_mb = static_cast<std::int64_t>(a.count("memory-mb"));
    return lim;
}
inline memo::input_options inputs_from(const cli::args& a) {
    memo::input_options in;
    in.samples = static_cast<std::int64_t>(a.count("samples"));
    if (in.samples < 1) throw memo::error("--samples must be at least 1");
    const auto range = split_list(a.value("input-range"));
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
    const auto kind = a.value("inputs");
    if (kind != "varied" && kind != "uniform") throw memo::error("--inputs expects varied or uniform, got '" + kind + "'");
    in.varied = kind == "varied";
    return in;
}
/// What memo-fuzz itself may hold of a model's values: as much as a worker may (--memory-mb).
inline std::int64_t max_bytes_from(const cli::args& a) { return limits_from(a).memory_mb << 20; }
inline memo::oracle::options oracle_from(const cli::args& a) {
    memo::oracle::options o;
    o.dmad_threshold = a.number("dmad-threshold");
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
    for (const auto& n : split_list(a.value("oracle"))) {
        if (n == "differential" || n == "metamorphic") c.tester = n, ++testers;
        else if (n == "performance") c.resources.performance = true;
        else if (n == "leak") c.resources.leak = true;
        else if (n == "determinism") c.resources.determinism = true;
        else throw memo::error("--oracle: unknown oracle '" + n + "' (known: differential, metamorphic, performance, leak, determinism)");
    }
    if (testers > 1) throw memo::error("--oracle: differential and metamorphic are two ways to judge a model; choose one");
    auto& r = c.resources;
    r.repeats = static_cast<int>(a.count("repeats"));
    if (r.repeats < 2 || r.repeats > 100) throw memo::error("--repeats must be between 2 and 100");
    r.slower = a.number("slower");
    r.larger = a.number("larger");
    if (r.slower < 1 || r.larger < 1) throw memo::error("--slower and --larger are factors of at least 1");
    r.min_ms = a.number("min-ms");
    r.leak_kb = static_cast<std::int64_t>(a.count("leak-kb"));
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
    /// Each lane's workers, made afresh for it.
    using lane_workers = std::function<std::vector<std::unique_ptr<memo::executor>>()>;
    /// `lanes` testers of `kind` (differential or metamorphic), each over the workers `make` gives it.
    testers(std::size_t lanes, const memo::registry& reg, const memo::oracle::options& oo, const memo::input_options& in, const std::string& kind,
            const lane_workers& make) {
        for (std::size_t i = 0; i < lanes; ++i) {
            workers_.push_back(make());
            std::vector<memo::executor*> xs;
            for (const auto& x : workers_.back()) xs.push_back(x.get());
            if (kind == "metamorphic") lanes_.push_back(std::make_unique<memo::oracle::metamorphic_tester>(std::move(xs), reference_, reg, oo, in));
            else lanes_.push_back(std::make_unique<memo::oracle::differential>(std::move(xs), truth_, reg, oo, in));
        }
    }
    /// Over the backends the command line names.
    testers(const cli::args& a, const std::string& backends, const memo::registry& reg, const memo::input_options& in, std::size_t lanes = 1,
            const std::string& kind = "differential")
        : testers(lanes, reg, oracle_from(a), in, kind, [&] { return make_backends(backends, reg, limits_from(a), !a.has("in-process"), &shared_); }) {}
    testers(const testers&) = delete;  // the lanes refer to the references
    testers& operator=(const testers&) = delete;

    memo::oracle::tester& first() { return *lanes_.front(); }
    std::vector<memo::oracle::tester*> lanes() const {
        std::vector<memo::oracle::tester*> r;
        for (const auto& l : lanes_) r.push_back(l.get());
        return r;
    }

private:
    memo::reference::interpreter truth_{memo::dtype::float64};
    memo::in_process<memo::reference::interpreter> reference_{memo::reference::interpreter()};
    shared_workers shared_;  // the workers that serve every lane
    std::vector<std::vector<std::unique_ptr<memo::executor>>> workers_;
    std::vector<std::unique_ptr<memo::oracle::tester>> lanes_;
};

inline cli::options campaign_options();

/// Whether a resumed campaign takes option k from its first run rather than from its command
/// line: all but those declared each_run.
inline bool stored_option(const std::string& k) {
    for (const auto& o : campaign_options())
        if (o.name == k) return !o.each_run;
    return true;
}

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

/// The backends a command runs on: --backends, or the reference and every library installed.
inline std::string backends_from(const cli::args& a) { return a.has("backends") ? a.value("backends") : default_backends(); }

/// A campaign's options and seeds as `run --resume DIR` finds them in its store; only the budget
/// and --quiet are new. Adds the campaign's stored command-line options to `a`.
inline memo::campaign::resumption resumed_campaign(const cli::args& given, cli::args& a, memo::cluster::communicator* world) {
    for (const auto& [k, v] : given.options())
        if (stored_option(k)) throw memo::error("--resume continues a campaign with its own options; --" + k + " cannot change them");
    const std::string dir = *given.get("resume");
    auto r = memo::campaign::resume_options(rank_dir(dir, world ? world->rank() : 0), memo::fuzz::setup().layers());
    const int ranks = r.options.tool.value("ranks", 0);
    if (ranks && !world)
        throw memo::error(fmt::format("{}: a campaign over {} ranks; resume it with mpirun -np {} memo-fuzz run --mpi --resume {}", dir, ranks, ranks, dir));
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
    if (given.has("seconds")) r.options.seconds = given.number("seconds");
    if (given.has("iterations")) r.options.iterations = given.count("iterations");
    return r;
}

/// A new campaign's options and seeds from the command line.
inline memo::campaign::resumption fresh_campaign(const cli::args& a, memo::cluster::communicator* world) {
    namespace fs = std::filesystem;
    const auto& reg = memo::fuzz::setup().layers();
    const int rank = world ? world->rank() : 0;
    memo::campaign::resumption r;
    auto& o = r.options;
    o.out = a.value("out");
    if (o.out.empty()) throw memo::error("--out DIR is required (the campaign directory)");
    o.out = rank_dir(o.out, rank);
    for (const char* f : {"stats.json", "store.db"})
        if (fs::exists(fs::path(o.out) / f))
            throw memo::error(o.out + ": already holds a campaign (" + f + "); continue it with --resume " + o.out + ", or choose another --out");
    o.seconds = a.number("seconds");
    o.iterations = a.count("iterations");
    o.seed = a.count("seed") + static_cast<std::uint64_t>(rank);      // each rank its own search
    o.selector = memo::campaign::selector_from(a.value("selector"));  // an unknown one fails before anything starts
    o.operators = memo::campaign::operators_from(a.value("operators"));
    o.coverage = memo::campaign::coverage_choice::parse(a.value("coverage"));
    o.p = a.number("p");
    o.max_seed_nodes = a.count("max-seed-nodes");
    o.max_seed_nodes_grown = a.count("grow-seed-nodes-to");
    o.stall_steps = a.count("stall-steps");
    memo::io::json stored = memo::io::json::object();
    for (const auto& [k, v] : a.options())
        if (stored_option(k)) stored[k] = v;
    o.tool = {{"args", stored}, {"program", program_path()}};
    if (world) o.tool["ranks"] = world->size();
    if (!a.has("seeds") && setup().seeds) r.seeds = setup().seeds(reg);  // the program's own
    else r.seeds = memo::campaign::load_seeds(a.value("seeds"), reg, model_readers());
    return r;
}

/// What the execution stage runs with, from the command line.
inline memo::campaign::execution_options stage_options(const cli::args& a, const std::string& backends, const oracle_choice& oracles) {
    memo::campaign::execution_options eo;
    eo.minimise = !a.has("no-minimise");
    eo.reproducers = !a.has("no-reproducers");
    if (a.has("known")) eo.known_root_causes = known_root_causes(a.value("known"));
    eo.attach = bug_files();
    eo.replay = replay_command();  // repro.sh calls this program, which knows its backends
    eo.versions = versions_of(split_list(backends));
    eo.max_models = a.count("models");
    eo.fill = !a.has("no-fill");
    eo.max_cost = a.has("full-size") ? 0 : static_cast<std::int64_t>(a.count("max-cost"));
    eo.max_bytes = max_bytes_from(a);
    eo.resources = oracles.resources;
    return eo;
}

/// The seeds a campaign's search starts from, shrunk to small tensors (execution speed comes from
/// them) unless --full-size keeps their own; a resumed campaign's are shrunk already.
inline std::vector<memo::model> runnable_seeds(const std::vector<memo::model>& seeds, const cli::args& a, bool resumed) {
    std::vector<memo::model> small;
    const auto max_cost = static_cast<std::int64_t>(a.count("max-cost"));
    for (const auto& m : seeds) small.push_back(a.has("full-size") || resumed ? m : memo::campaign::fit_to_cost(m, max_cost / 10));
    const std::string from = a.has("seeds") || !setup().seeds ? "--seeds " + a.value("seeds") : "the program's seeds";
    for (std::size_t i = 0; i < small.size(); ++i) check_fits(small[i], "seed " + std::to_string(i) + " of " + from, a);
    return small;
}

/// The last lines of a campaign with an execution stage: its figures, coverage and where its results are.
inline void print_campaign(const memo::campaign::generation_summary& s, const memo::campaign::execution& exec, const std::string& out,
                           const std::string& backends, memo::cluster::communicator* world) {
    const double secs = std::max(s.seconds, 1e-9);
    std::string bugs;
    for (auto k : exec.reported_kinds())
        bugs += fmt::format("{}{} {}", bugs.empty() ? "" : ", ", exec.store().unique(memo::oracle::name_of(k)), memo::oracle::name_of(k));
    // Over several ranks, the job's figures are in rank 0's stats.json.
    const auto job = world ? memo::io::parse_json_file((std::filesystem::path(out) / "stats.json").string()) : memo::io::json::object();
    if (exec.store().unique()) bugs += fmt::format(" ({} root causes)", exec.store().root_cause_count());
    const std::uint64_t executed = job.value("models_executed", exec.executed());
    fmt::print("{}: {}{} models generated ({:.0f}/s), {} executed on {} ({:.1f}/s; {} run, {} memo hits); bugs: {}\n", out,
               world ? fmt::format("{} ranks, ", world->size()) : std::string(), s.generated, static_cast<double>(s.generated) / secs, executed, backends,
               static_cast<double>(executed) / secs, job.value(memo::io::json::json_pointer("/memo/models_run"), exec.models_run()),
               job.value(memo::io::json::json_pointer("/memo/hits"), exec.memo_hits()), bugs);
    for (auto k : memo::all_criteria) print_coverage_row(k, s.covered[static_cast<std::size_t>(k)], s.total[static_cast<std::size_t>(k)]);
    fmt::print("report: {}/report.html\n", out);
    if (exec.store().unique())
        fmt::print("bugs are in {}/bugs/<kind>/<signature>/; each replays with its repro.sh ({} replay <that directory>)\n", out, setup().program);
}

/// A campaign; `world` when this process is one rank of an MPI job (--mpi).
inline int run_campaign(const cli::args& given, memo::cluster::communicator* world) {
    const auto& reg = memo::fuzz::setup().layers();
    const int rank = world ? world->rank() : 0;
    cli::args a = given;
    auto [o, seeds, finished] = given.has("resume") ? resumed_campaign(given, a, world) : fresh_campaign(a, world);
    o.quiet = a.has("quiet") || rank != 0;  // one progress line: rank 0's
    memo::cluster::exchange_options xo;
    xo.seconds = a.number("sync-seconds");
    xo.share = a.count("share");
    if (xo.seconds <= 0) throw memo::error("--sync-seconds must be above 0");
    if (world && o.coverage.rnn_state) throw memo::error("--mpi merges MEMO's four criteria; --coverage memo,rnn-state runs in one process only");
    const auto oracles = oracles_from(a);  // a bad oracle option fails before anything starts
    const auto backends = backends_from(a);
    std::optional<memo::cluster::exchange> x;
    if (backends == "none") {
        if (world) o.peers = &x.emplace(*world, reg, xo);
        const auto s = memo::campaign::generate(seeds, reg, o);
        if (rank != 0) return 0;
        fmt::print("{}: {} models in {:.1f} s ({:.0f}/s), {} valid, {} raised coverage; see stats.json, coverage.csv, queue/\n", o.out, s.generated, s.seconds,
                   static_cast<double>(s.generated) / std::max(s.seconds, 1e-9), s.valid, s.diverse);
        for (auto k : memo::all_criteria) print_coverage_row(k, s.covered[static_cast<std::size_t>(k)], s.total[static_cast<std::size_t>(k)]);
        return 0;
    }
    const auto small = runnable_seeds(seeds, a, o.resume);
    const auto lanes = a.count("lanes");
    if (lanes < 1 || lanes > 16) throw memo::error("--lanes must be between 1 and 16");
    testers t(a, backends, reg, inputs_from(a), lanes, oracles.tester);
    if (a.has("no-trace"))
        for (auto* d : t.lanes())
            for (auto* x : d->participants()) x->set_traceable(false);
    const auto eo = stage_options(a, backends, oracles);
    o.max_cost = eo.max_cost;  // the search itself keeps to models the backends can run quickly
    memo::campaign::execution exec(t.lanes(), reg, o.out, eo);
    if (world) o.peers = &x.emplace(*world, reg, xo, &exec.store());
    const auto s = memo::campaign::generate(small, reg, o, &exec);
    if (rank == 0) print_campaign(s, exec, o.out, backends, world);
    return 0;
}

inline int run(const cli::args& given) {
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

/// run's own options; their defaults are the library's (generation_options, execution_options).
inline cli::options campaign_options() {
    const memo::campaign::generation_options g;
    const memo::campaign::execution_options e;
    const memo::cluster::exchange_options x;
    using cli::flag, cli::valued, cli::heading, cli::each_run;
    return {
        each_run(valued("out", "DIR", "the campaign directory (must not hold a campaign already)")),
        each_run(valued("resume", "DIR",
                        "continue the campaign in DIR with its own options; --seconds and --iterations then say how much more to run (default: what is "
                        "left of its budget)")),
        valued("backends", "LIST",
               "comma-separated backend names, as `memo-fuzz backends` lists them (default: reference and every library installed among "
               "torch, ort and, where a GPU is, cuda); none: generation only"),
        each_run(valued("seconds", "S", "time limit", typed(g.seconds))),
        each_run(valued("iterations", "N", "iteration limit; 0: none", std::to_string(g.iterations))),
        valued("models", "N", "stop once N models were executed; 0: no limit", std::to_string(e.max_models)),
        valued("seed", "N", "random seed", std::to_string(g.seed)),
        valued("selector", "mh|random", "Metropolis-Hastings (MEMO) or uniform (MEMO_r)", std::string(memo::campaign::name_of(g.selector))),
        valued("p", "P", "the Metropolis-Hastings parameter", typed(g.p)),
        valued("operators", "memo|lemon", "MEMO's operators, or LEMON's (MEMO_o)", std::string(memo::campaign::name_of(g.operators))),
        valued("coverage", "LIST",
               "what counts as new: memo (MEMO's four criteria, always), graph-pairs (every producer-consumer pair of classes in the graph a "
               "library runs, adapters and Dense included; docs/coverage.md), rnn-state (DeepStellar's RNN states and transitions, on the "
               "reference; docs/rnn-state.md); memo alone: MEMO's search as published",
               g.coverage.str()),
        // A program that registers seeds of its own starts from them when --seeds is absent.
        valued("seeds", "zoo|zoo:NAME,...|DIR",
               "the ten reduced architectures, some of them by name (zoo:lstm0-sinewave,lstm2-price), or a directory of .json and .onnx models" +
                   std::string(setup().seeds ? "; absent: this program's own seeds" : ""),
               setup().seeds ? "" : "zoo"),
        valued("max-seed-nodes", "N", "diverse mutants grown past N nodes stay results, not seeds", std::to_string(g.max_seed_nodes)),
        valued("grow-seed-nodes-to", "M", "the limit doubles, up to M, each time the search stalls (M = N keeps it fixed)",
               std::to_string(g.max_seed_nodes_grown)),
        valued("stall-steps", "K", "the search stalls after K steps in a row with no diverse mutant; 0: the limit never grows", std::to_string(g.stall_steps)),
        each_run(flag("quiet", "no progress line")),
        flag("no-minimise", "store bugs without shrinking their models"),
        flag("no-reproducers", "store bugs without their reproducers in repro/ (see memo-fuzz reproduce)"),
        valued("known", "FILE",
               "root causes already reported, one a line as bug.json names them (# starts a comment): their bugs are counted "
               "(bugs.known_sightings), not minimised or stored"),
        valued("max-cost", "C",
               "generate and run only models costing at most C multiply-add equivalents per sample (see docs/execution.md); seeds are "
               "shrunk (inputs, filters, units) to a tenth of it",
               std::to_string(e.max_cost)),
        flag("full-size", "no shrinking and no cost limit"),
        valued("lanes", "N", "models in flight at once, each lane with workers of its own", std::to_string(default_lanes)),
        flag("no-fill",
             "run only models that raised coverage, never another valid model when a worker idles: the models run then depend on --seed and "
             "--iterations alone, so a resumed campaign finds the same bugs as one run in one go"),
        flag("no-trace",
             "store only each run's output digests, not one per node: runs return only the model's outputs (faster), and replay cannot name "
             "the first divergent node"),
        heading("over several processes (see docs/cluster.md)"),
        each_run(flag("mpi",
                      "this process is one rank of an MPI job: mpirun -np N memo-fuzz run --mpi ... Each rank runs its own search (seed + rank) on "
                      "backends of its own; every --sync-seconds they merge their coverage (a bitwise OR), send one another the models that raised "
                      "it (adopted into the seed pools of the ranks they are new to), and send rank 0 their bugs, stored once per signature. Rank 0 "
                      "owns DIR (stats.json with ranks and per_rank, coverage.csv of the whole job, bugs/, report.html); rank r keeps its own store "
                      "in DIR/ranks/r. The job stops at the first exchange after any rank's budget; a job that died resumes with mpirun -np N "
                      "memo-fuzz run --mpi --resume DIR")),
        valued("sync-seconds", "S", "seconds between two exchanges", typed(x.seconds)),
        valued("share", "N", "models each rank sends per exchange, at most", std::to_string(x.share)),
    };
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
            "checkpoint left it (see memo-fuzz replay DIR and memo-fuzz stats DIR).",
            campaign_options() + oracle_options() + execution_options(), run};
}

}  // namespace memo::fuzz::commands
