#pragma once
// memo-fuzz run-model, replay and reproduce: one model on the backends, judged by the oracle; replay
// of a whole campaign's stored executions, for divergences; a stored bug's reproducers in its
// libraries' own terms.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "../campaign/progress.hpp"
#include "../campaign/seeds.hpp"
#include "../oracle/reproducers.hpp"
#include "../store/bugs.hpp"
#include "../store/replay.hpp"

#include "run.hpp"

namespace memo::fuzz::commands {

inline void print_observations(const std::vector<memo::oracle::observation>& obs, std::string_view suffix = {}) {
    for (const auto& o : obs) {
        std::string outs;
        for (const auto& t : o.result.outputs) outs += (outs.empty() ? "" : ", ") + t.dims_str() + (t.has_non_finite() ? " (non-finite)" : "");
        const auto compiling = o.result.compile_ms > 0 ? fmt::format(" ({:.0f} ms of it compiling)", o.result.compile_ms) : std::string();
        fmt::print("  {:<18} {:<11} {:>8.2f} ms {:>8} KiB  {}{}\n", o.backend + std::string(suffix), memo::name_of(o.result.status), o.result.ms,
                   o.result.peak_kb, o.result.ok() ? outs : o.result.message, compiling);
    }
}

inline void print_verdict(const memo::oracle::tester& diff, const memo::oracle::verdict& v, const memo::model& m) {
    print_observations(diff.observations());
    if (const auto* meta = dynamic_cast<const memo::oracle::metamorphic_tester*>(&diff)) {
        if (const auto& x = meta->last_variant()) {
            print_observations(meta->variant_observations(), " (variant)");
            fmt::print("variant: relation {}, {} nodes added\n", memo::metamorphic::name_of(x->rel), x->m.size() - static_cast<std::size_t>(x->first_new));
        } else {
            fmt::print("variant: none passed the self-check on the reference\n");
        }
    }
    if (!v) {
        fmt::print("verdict: none (the backends agree{})\n", v.every_backend_failed() ? "; every backend failed" : "");
        return;
    }
    fmt::print("verdict: {} on {}", memo::oracle::name_of(v.what), fmt::join(v.culprits, ","));
    if (!v.peers.empty()) fmt::print(" (against {})", fmt::join(v.peers, ","));
    fmt::print("\n");
    if (const auto* d = v.differs()) fmt::print("  D_MAD {:.3f}, max abs {:.3g}, max rel {:.3g}\n", d->dmad, d->max_abs, d->max_rel);
    if (!v.message.empty()) fmt::print("  message: {}\n", v.message);
    if (v.node >= 0) fmt::print("  localised: node {} {}{}\n", v.node, v.layer, v.producer.empty() ? "" : " (after " + v.producer + ")");
    fmt::print("  signature: {}\n", memo::oracle::signature(v, memo::oracle::localised_in(v, m)));
}

/// Prints resource verdicts and the figures they came from.
inline void print_resources(const memo::oracle::resources& r, const std::vector<memo::oracle::verdict>& vs) {
    for (const auto& x : r.last_runs()) {
        std::string ms, kb;
        for (std::size_t i = 0; i < x.ms.size(); ++i) {
            ms += fmt::format("{}{:.1f}", i ? " " : "", x.ms[i]);
            kb += fmt::format("{}{}", i ? " " : "", x.peak_kb[i]);
        }
        fmt::print("  {:<18} ms: {}\n  {:<18} peak KiB: {}\n", x.backend, ms, "", kb);
    }
    for (const auto& v : vs) fmt::print("verdict: {} on {}: {}\n", memo::oracle::name_of(v.what), fmt::join(v.culprits, ","), v.message);
    if (vs.empty()) fmt::print("verdict: none from the resource oracles\n");
}

/// Runs the resource oracles on the backends that ran the tester's last model; their verdicts.
inline std::vector<memo::oracle::verdict> print_resources_of(memo::oracle::tester& diff, const memo::model& m, const memo::oracle::resource_options& o) {
    memo::oracle::resources r(o);
    const auto vs = r.check(m, diff.last_inputs(), memo::oracle::ran_ok(diff.participants(), diff.observations()));
    print_resources(r, vs);
    return vs;
}

inline int run_model(const cli::args& a) {
    if (a.positional().empty()) throw memo::error("run-model needs a MODEL file (.json: memo or Keras; .onnx)");
    const auto& reg = memo::fuzz::setup().layers();
    // Every file is read and checked before a worker starts: a bad one is reported with nothing run.
    std::vector<memo::model> ms;
    for (const auto& file : a.positional()) {
        ms.push_back(memo::campaign::load_any(file, reg, model_readers()));
        if (a.has("seed")) ms.back().seed = a.count("seed");
        check_fits(ms.back(), file, a);
    }
    const auto oracles = oracles_from(a);
    // One set of workers for every model: a library's start-up is paid once.
    testers t(a, backends_from(a), reg, inputs_from(a), 1, oracles.tester);
    auto& diff = t.first();
    for (std::size_t i = 0; i < ms.size(); ++i) {
        const auto v = diff.check(ms[i]);
        fmt::print("{}: {} layers, seed {}\n", a.positional()[i], ms[i].layer_count(), ms[i].seed);
        print_verdict(diff, v, ms[i]);
        if (oracles.resources.any()) print_resources_of(diff, ms[i], oracles.resources);
    }
    return 0;
}

/// replay DIR of a campaign: every stored execution again, compared with its record.
inline int replay_campaign(const cli::args& a, const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    if (a.has("original")) throw memo::error("--original is for a bug directory, not a campaign");
    const auto& reg = memo::fuzz::setup().layers();
    memo::store::campaign_store st(memo::store::campaign_store::file_in(dir));
    std::string backends = a.get("backends").value_or("");
    if (backends.empty())
        if (const auto o = st.last_options(); o && o->contains("tool") && o->at("tool").contains("args"))
            backends = o->at("tool").at("args").value("backends", std::string());
    if (backends.empty()) backends = default_backends();
    auto xs = make_backends(backends, reg, limits_from(a), !a.has("in-process"));
    std::vector<memo::executor*> ptrs;
    for (const auto& x : xs) ptrs.push_back(x.get());
    memo::store::replay_options ro;
    ro.tolerant = a.has("tolerant");
    ro.tolerance = oracle_from(a);
    memo::campaign::progress bar;
    const auto start = std::chrono::steady_clock::now();
    ro.progress = [&](std::size_t done, std::size_t total) {
        const auto now = std::chrono::steady_clock::now();
        if (bar.due(now)) bar.show(fmt::format("[{:6.1f}s] replayed {}/{} executions", std::chrono::duration<double>(now - start).count(), done, total), now);
    };
    const auto sum = memo::store::replay(st, reg, ptrs, ro);
    bar.finish(
        fmt::format("replayed {} executions in {:.1f} s", sum.replayed, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
    // Each divergent model, and the list, beside the store: replayable from the directory.
    memo::io::json list = memo::io::json::array();
    for (const auto& d : sum.divergences) {
        const auto name = memo::hex(d.model);
        if (const auto m = st.find_model(d.model, reg)) {
            fs::create_directories(dir / "divergences");
            memo::io::write_file((dir / "divergences" / (name + ".json")).string(), memo::io::model_to_json(*m).dump(1) + "\n");
        }
        list.push_back({{"model", name},
                        {"backend", d.backend},
                        {"inputs", d.inputs},
                        {"what", d.what},
                        {"node", d.node},
                        {"layer", d.layer},
                        {"file", "divergences/" + name + ".json"}});
        fmt::print("divergence: model {} on {}: {}{}\n", name, d.backend, d.what, d.layer.empty() ? "" : " (" + d.layer + ")");
    }
    memo::io::write_file((dir / "divergences.json").string(), list.dump(2) + "\n");
    fmt::print("{}: {} executions replayed on {}: {} identical, {} within tolerance, {} divergences ({} skipped: other backends or declined)\n", dir.string(),
               sum.replayed, backends, sum.same, sum.within_tolerance, sum.divergences.size(), sum.skipped);
    if (!sum.divergences.empty()) fmt::print("divergences are listed in {}/divergences.json\n", dir.string());
    return sum.divergences.empty() ? 0 : 2;
}

/// A stored bug as replay and reproduce read it from its directory: bug.json, the model to run
/// (minimal.json; with --original, or where the bug is not minimised, model.json), the backends
/// and the inputs it was found with (options given on the command line win).
struct stored_bug {
    memo::io::json bug;
    std::string kind;
    std::vector<std::string> culprits;
    bool metamorphic = false, resource = false;
    std::filesystem::path file;
    memo::model m;
    std::string backends;
    memo::input_options in;
    std::string tester;
};

inline stored_bug load_bug(const cli::args& a, const std::filesystem::path& dir) {
    stored_bug b;
    b.bug = memo::io::parse_json_file((dir / "bug.json").string());
    b.kind = b.bug.at("kind").get<std::string>();
    b.culprits = b.bug.at("culprits").get<std::vector<std::string>>();
    b.metamorphic = b.kind == "metamorphic", b.resource = b.kind == "performance" || b.kind == "leak" || b.kind == "nondeterminism";
    // A metamorphic bug's variant was spliced into the model as found; resource bugs are not minimised.
    b.file = dir / (a.has("original") || b.metamorphic || b.resource ? "model.json" : "minimal.json");
    b.m = memo::io::load_model(b.file.string(), memo::fuzz::setup().layers());
    for (const auto& x : b.bug.at("backends")) b.backends += (b.backends.empty() ? "" : ",") + x.get<std::string>();
    if (a.has("backends")) b.backends = a.value("backends");
    check_fits(b.m, b.file.string(), a);
    b.in = inputs_from(a);
    if (!a.has("samples")) b.in.samples = b.bug.at("inputs").value("samples", std::int64_t{2});
    if (!a.has("input-range")) b.in.lo = b.bug.at("inputs").value("lo", 0.0), b.in.hi = b.bug.at("inputs").value("hi", 1.0);
    if (!a.has("inputs")) b.in.varied = b.bug.at("inputs").value("varied", false);
    b.tester = b.metamorphic || b.bug.value("tester", std::string("differential")) == "metamorphic" ? "metamorphic" : "differential";
    return b;
}

inline int replay(const cli::args& a) {
    if (a.positional().size() != 1) throw memo::error("replay needs one directory: a campaign (DIR) or a bug (DIR/bugs/<kind>/<signature>)");
    namespace fs = std::filesystem;
    const fs::path dir = a.positional()[0];
    if (!fs::exists(dir)) throw memo::error(dir.string() + ": no such directory");
    if (!fs::exists(dir / "bug.json") && fs::exists(memo::store::campaign_store::file_in(dir))) return replay_campaign(a, dir);
    if (a.has("tolerant")) throw memo::error("--tolerant is for a campaign directory, not a bug");
    if (!fs::exists(dir / "bug.json")) throw memo::error(dir.string() + ": neither a bug directory (no bug.json) nor a campaign (no store.db)");
    const auto& reg = memo::fuzz::setup().layers();
    const auto b = load_bug(a, dir);
    const auto& bug = b.bug;
    const auto& m = b.m;
    const auto& want_kind = b.kind;
    const auto& file = b.file;
    const auto& want_culprits = b.culprits;
    const bool metamorphic = b.metamorphic, resource = b.resource;
    const auto& backends = b.backends;
    testers t(a, backends, reg, b.in, 1, b.tester);
    auto& diff = t.first();
    diff.set_trace(true);  // as the campaign ran it: a difference masked at the outputs shows in the traces
    memo::oracle::verdict v;
    const auto stored = [&](const memo::oracle::verdict& x) {
        return x && std::string(memo::oracle::name_of(x.what)) == want_kind && x.culprits == want_culprits;
    };
    int runs = 1;
    if (auto* meta = dynamic_cast<memo::oracle::metamorphic_tester*>(&diff); meta && metamorphic) {
        const auto& w = bug.at("variant");
        memo::metamorphic::variant x;
        x.m = memo::io::load_model((dir / "variant.json").string(), reg);
        if (!memo::metamorphic::relation_from(w.at("relation").get<std::string>(), x.rel))
            throw memo::error((dir / "bug.json").string() + ": unknown relation '" + w.at("relation").get<std::string>() + "'");
        x.output = w.at("output"), x.first_new = w.at("first_new");
        w.at("gate").get_to(x.gate);
        meta->begin(m, std::move(x));
        v = meta->finish();
    } else {
        // Asked up to three times, as the reproducers ask (tools/reproducing.py): a library that
        // reads memory it never wrote answers right in a fresh worker, wrong once it has run before.
        for (v = diff.check(m); !resource && !stored(v) && runs < 3; ++runs) v = diff.check(m);
    }
    fmt::print("{}: {} layers on {}{}\n", file.string(), m.layer_count(), backends, runs > 1 ? fmt::format(" (run {} of 3)", runs) : "");
    print_verdict(diff, v, m);
    bool same = stored(v);
    if (resource) {
        auto ro = memo::store::resource_options_from(bug.value("resource_options", memo::io::json::object()));
        ro.performance = want_kind == "performance", ro.leak = want_kind == "leak", ro.determinism = want_kind == "nondeterminism";
        same = false;
        for (const auto& r : print_resources_of(diff, m, ro))
            same = same || (std::string(memo::oracle::name_of(r.what)) == want_kind && r.culprits == want_culprits);
    }
    fmt::print("stored: {} on {} ({}): {}\n", want_kind, fmt::join(want_culprits, ","), bug.value("signature", std::string("?")),
               same ? "reproduced" : "NOT reproduced");
    return same ? 0 : 2;
}

/// reproduce BUGDIR: the bug's model run again, then each culprit's reproducer in its library's own
/// terms written into BUGDIR/repro/ by the culprit's worker, which runs it there.
inline int reproduce(const cli::args& a) {
    if (a.positional().size() != 1) throw memo::error("reproduce needs one bug directory (DIR/bugs/<kind>/<signature>)");
    namespace fs = std::filesystem;
    const fs::path dir = a.positional()[0];
    if (!fs::exists(dir / "bug.json")) throw memo::error(dir.string() + ": not a bug directory (no bug.json)");
    const auto b = load_bug(a, dir);
    if (b.tester != "differential" || b.resource)
        throw memo::error(dir.string() + ": a " + b.kind + " bug; reproducers are written for the differential oracle's (crash, nan, inconsistency, shape)");
    testers t(a, b.backends, memo::fuzz::setup().layers(), b.in, 1, b.tester);
    auto& diff = dynamic_cast<memo::oracle::differential&>(t.first());
    const auto r = memo::oracle::write_reproducers(diff, b.m, (dir / "repro").string());
    fmt::print("{}: {} layers on {}\n", b.file.string(), b.m.layer_count(), b.backends);
    print_verdict(diff, r.v, b.m);
    if (!r.v) {
        fmt::print("the bug does not show: no reproducer written\n");
        return 2;
    }
    int written = 0, shown = 0;
    for (const auto& w : r.culprits) {
        written += w.written, shown += w.shows;
        fmt::print("  {}: {}{}\n", w.backend, w.written ? w.script + ": " : "", w.said);
    }
    return written > 0 && shown == written ? 0 : 2;
}

inline std::vector<cli::command> execution_commands() {
    using cli::flag, cli::valued;
    return {
        {"run-model", "run-model MODEL... [--backends LIST] [--seed N] [--oracle LIST] [execution options]",
         "Runs each model (memo JSON, Keras JSON or ONNX) on the backends and prints each backend's status,\n"
         "time, peak memory and outputs, then the oracle's verdict with its localisation and signature. The\n"
         "backends' workers start once for all the models.",
         cli::options{valued("backends", "LIST",
                             "comma-separated backend names, as `memo-fuzz backends` lists them (default: reference and every library installed "
                             "among torch and ort)"),
                      valued("seed", "N", "the model's weight and input seed (default: the file's)")} +
             oracle_options() + execution_options(),
         run_model},
        {"replay", "replay (BUGDIR | DIR) [--original] [--tolerant] [--backends LIST] [execution options]",
         "BUGDIR (DIR/bugs/<kind>/<signature>/ of a campaign): re-runs the stored bug on the backends it was\n"
         "found with, with the same inputs, and prints the verdict. Exit status 0 when the stored verdict (kind\n"
         "and culprits) is reproduced, 2 when not, 1 on an error. A metamorphic bug runs its model and its\n"
         "stored variant.json; a performance or leak bug runs its model again as often as it was judged.\n\n"
         "DIR (a campaign): re-runs every execution its store.db holds, on the same backend with the same\n"
         "inputs, and compares it with its record: status, and digests of the outputs and, for traced runs,\n"
         "of every node. A difference is a divergence: the library gave another answer for the same model\n"
         "(nondeterminism, or a regression when another version of it replays an old campaign). Divergences\n"
         "are reported apart from cross-library inconsistency, each with the first node whose digest\n"
         "differs, listed in DIR/divergences.json (their models in DIR/divergences/) and counted by\n"
         "memo-fuzz stats. Exit status 0 when there are none, 2 when there are, 1 on an error.",
         cli::options{flag("original", "(BUGDIR) replay model.json (the model as found) instead of minimal.json"),
                      flag("tolerant",
                           "(DIR) digests may differ where each node's sum of magnitudes stays within its dtype's tolerance (for libraries that "
                           "are not bit-for-bit deterministic)"),
                      valued("backends", "LIST",
                             "other backends than the stored ones (a new library version, say); DIR: only the executions of these backends are "
                             "replayed")} +
             execution_options(),
         replay},
        {"reproduce", "reproduce BUGDIR [--original] [--backends LIST] [execution options]",
         "Re-runs the stored bug (as replay does), then has each culprit's worker write a reproducer in its\n"
         "library's own terms into BUGDIR/repro/: a script that imports only that library and numpy, with the\n"
         "model's inputs and weights in an .npz beside it. The script prints the culprit's values against the\n"
         "expected ones (memo's float64 reference; for a compiled backend, the same program run eagerly) within\n"
         "memo's rounding bound, or the call that fails, and exits 1 while the fault shows, 0 once it does not.\n"
         "The worker runs it once, and its result is printed. Every library's worker writes one (PyTorch eager\n"
         "and compiled, Keras on its backends, TensorFlow.js, ONNX Runtime, OpenVINO, TVM); the reference and\n"
         "the CUDA backend say they write none. Exit status 0 when every reproducer written shows the fault, 2\n"
         "when one does not or none was written, 1 on an error.",
         cli::options{flag("original", "reproduce model.json (the model as found) instead of minimal.json"),
                      valued("backends", "LIST", "other backends than the stored ones")} +
             execution_options(),
         reproduce},
    };
}

}  // namespace memo::fuzz::commands
