#pragma once
// memo-fuzz run-model and replay: one model on the backends, judged by the oracle.
#include <filesystem>

#include <fmt/format.h>

#include <memo/campaign/bugs.hpp>
#include <memo/campaign/seeds.hpp>

#include "run.hpp"

namespace commands {

inline void print_verdict(const memo::oracle::differential& diff, const memo::oracle::verdict& v, const memo::model& m) {
    for (const auto& o : diff.observations()) {
        std::string outs;
        for (const auto& t : o.result.outputs) outs += (outs.empty() ? "" : ", ") + t.dims_str() + (t.has_non_finite() ? " (non-finite)" : "");
        fmt::print("  {:<18} {:<11} {:>8.2f} ms {:>8} KiB  {}\n", o.backend, memo::name_of(o.result.status), o.result.ms, o.result.peak_kb,
                   o.result.ok() ? outs : o.result.message);
    }
    if (!v) {
        fmt::print("verdict: none (the backends agree{})\n", v.all_failed ? "; every backend failed" : "");
        return;
    }
    fmt::print("verdict: {} on {}", memo::oracle::name_of(v.what), fmt::join(v.culprits, ","));
    if (!v.peers.empty()) fmt::print(" (against {})", fmt::join(v.peers, ","));
    fmt::print("\n");
    if (v.what == memo::oracle::kind::inconsistency) fmt::print("  D_MAD {:.3f}, max abs {:.3g}, max rel {:.3g}\n", v.dmad, v.max_abs, v.max_rel);
    if (!v.message.empty()) fmt::print("  message: {}\n", v.message);
    if (v.node >= 0)
        fmt::print("  localised: node {} {}{}\n", v.node, v.layer, v.producer.empty() ? "" : " (after " + v.producer + ")");
    fmt::print("  signature: {}\n", memo::oracle::signature(v, m));
}

inline int run_model(const cli::args& a) {
    auto flags = std::vector<std::string>{"backends", "seed"};
    flags.insert(flags.end(), execution_flags.begin(), execution_flags.end());
    a.only(flags);
    if (a.positional().size() != 1) throw memo::error("run-model needs one MODEL file (.json: memo or Keras; .onnx)");
    const auto& reg = memo::default_registry();
    auto m = memo::campaign::load_any(a.positional()[0], reg, model_readers());
    if (a.has("seed")) m.seed = to_u64(*a.get("seed"), "seed");
    testers t(a, a.get_or("backends", default_backends()), reg, inputs_from(a));
    auto& diff = t.first();
    const auto v = diff.check(m);
    fmt::print("{}: {} layers, seed {}\n", a.positional()[0], m.layer_count(), m.seed);
    print_verdict(diff, v, m);
    return 0;
}

inline int replay(const cli::args& a) {
    auto flags = std::vector<std::string>{"backends", "original"};
    flags.insert(flags.end(), execution_flags.begin(), execution_flags.end());
    a.only(flags);
    if (a.positional().size() != 1) throw memo::error("replay needs one bug directory (DIR/bugs/<kind>/<signature>)");
    namespace fs = std::filesystem;
    const fs::path dir = a.positional()[0];
    if (!fs::exists(dir / "bug.json")) throw memo::error(dir.string() + ": no bug.json (not a bug directory)");
    const auto bug = memo::io::parse_json_file((dir / "bug.json").string());
    const auto& reg = memo::default_registry();
    const fs::path file = dir / (a.has("original") ? "model.json" : "minimal.json");
    const auto m = memo::io::load_model(file.string(), reg);
    std::string backends;
    for (const auto& b : bug.at("backends")) backends += (backends.empty() ? "" : ",") + b.get<std::string>();
    backends = a.get_or("backends", backends);
    memo::input_options in = inputs_from(a);
    if (!a.has("samples")) in.samples = bug.at("inputs").value("samples", std::int64_t{2});
    if (!a.has("input-range")) in.lo = bug.at("inputs").value("lo", 0.0), in.hi = bug.at("inputs").value("hi", 1.0);
    testers t(a, backends, reg, in);
    auto& diff = t.first();
    const auto v = diff.check(m);
    fmt::print("{}: {} layers on {}\n", file.string(), m.layer_count(), backends);
    print_verdict(diff, v, m);
    const auto want_kind = bug.at("kind").get<std::string>();
    const auto want_culprits = bug.at("culprits").get<std::vector<std::string>>();
    const bool same = v && std::string(memo::oracle::name_of(v.what)) == want_kind && v.culprits == want_culprits;
    fmt::print("stored: {} on {} ({}): {}\n", want_kind, fmt::join(want_culprits, ","), bug.value("signature", std::string("?")),
               same ? "reproduced" : "NOT reproduced");
    return same ? 0 : 2;
}

inline std::vector<cli::command> execution_commands() {
    return {
        {"run-model",
         "run-model MODEL [--backends LIST] [--seed N] [execution options]",
         "Runs one model (memo JSON, Keras JSON or ONNX) on the backends and prints each backend's status, time,\n"
         "peak memory and outputs, then the oracle's verdict with its localisation and signature.\n\n"
         "  --backends LIST      comma-separated: reference, reference-float64, torch, ort, ort-opt\n"
         "                       (default: reference and every library installed)\n"
         "  --seed N             the model's weight and input seed (default: the file's)\n" +
             execution_help,
         {"backends", "seed", "timeout-ms", "memory-mb", "samples", "input-range", "dmad-threshold"},
         run_model},
        {"replay",
         "replay BUGDIR [--original] [--backends LIST] [execution options]",
         "Re-runs a stored bug (a directory DIR/bugs/<kind>/<signature>/ of a campaign) on the backends it\n"
         "was found with, with the same inputs, and prints the verdict. Exit status 0 when the stored verdict\n"
         "(kind and culprits) is reproduced, 2 when not, 1 on an error.\n\n"
         "  --original           replay model.json (the model as found) instead of minimal.json\n"
         "  --backends LIST      other backends than the stored ones (a new library version, say)\n" +
             execution_help,
         {"backends", "timeout-ms", "memory-mb", "samples", "input-range", "dmad-threshold"},
         replay},
    };
}

}  // namespace commands
