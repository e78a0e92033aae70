#pragma once
// memo-fuzz selftest: recall as a figure. A campaign runs memo's reference interpreter beside a
// copy of it with planted faults, each behind a trigger (a parameter value) that a generated model
// reaches only sometimes, and covering every verdict kind: a crash by signal, an abort, a library
// error, NaN, wrong results in several layer families, a hang and a memory blow-up. Then each fault
// is looked up among the stored bugs: found or not, when, and stored under the right kind and
// layer; a stored bug that matches no fault is a false alarm. (Like Magma and LAVA-M for program
// fuzzers: a user checks their set-up on it, and every change to the search, inputs or oracles is
// measured on it.)
//
// The faulty library is written on memo's public extension point, the reference interpreter's
// kernels (interpreter::wrap_kernel): the worked example of wrapping a library's kernel.
#include <csignal>
#include <filesystem>
#include <functional>
#include <thread>

#include "../campaign/execute.hpp"
#include "../campaign/generate.hpp"
#include "../report/campaign_data.hpp"

#include "run.hpp"

namespace memo::fuzz::commands {

namespace detail::selftest {

using memo::reference::array;
using memo::reference::params;

/// One planted fault: the layer whose kernel carries it, the verdict kind it should be stored
/// under, what it does, and when (its trigger, on the node's parameters and the largest value the
/// node received).
struct planted {
    std::string_view layer;
    std::string_view kind;  // crash, nan, inconsistency, timeout, memory
    std::string_view what;
    std::function<bool(const params&, double top)> trigger;
    enum class act { segfault, abort, error, nan, scale, offset, hang, memory } action;
};

inline const std::vector<planted>& faults() {
    using a = planted::act;
    static const std::vector<planted> all{
        {"Conv1D", "crash", "segfault on causal padding", [](const params& p, double) { return p.str("padding") == "causal"; }, a::segfault},
        {"MaxPooling2D", "crash", "abort on a non-square window with 'same' padding",
         [](const params& p, double) {
             const auto k = p.ints("pool_size", 2);
             return p.str("padding") == "same" && k[0] != k[1];
         },
         a::abort},
        {"Cropping2D", "crash", "library error when more is cropped from the top than the bottom",
         [](const params& p, double) {
             const auto c = p.ints("cropping", 4);
             return c[0] > c[1];
         },
         a::error},
        {"Softmax", "nan", "NaN over any axis but the last", [](const params& p, double) { return p.integer("axis") != -1; }, a::nan},
        {"Conv2DTranspose", "inconsistency", "outputs scaled by 1.5 with strides of 2 or more",
         [](const params& p, double) { return p.ints("strides", 2)[0] >= 2; }, a::scale},
        {"DepthwiseConv2D", "inconsistency", "outputs scaled by 1.5 with a depth multiplier above 1",
         [](const params& p, double) { return p.integer("depth_multiplier") > 1; }, a::scale},
        {"AveragePooling1D", "inconsistency", "outputs offset with 'same' padding", [](const params& p, double) { return p.str("padding") == "same"; },
         a::offset},
        {"GRU", "inconsistency", "outputs offset without reset_after", [](const params& p, double) { return !p.flag("reset_after"); }, a::offset},
        {"BatchNormalization", "inconsistency", "outputs scaled by 1.5 without centering", [](const params& p, double) { return !p.flag("center"); }, a::scale},
        {"ReLU", "inconsistency", "outputs offset when an input lies above max_value",
         [](const params& p, double top) { return !p.none("max_value") && top > p.real("max_value"); }, a::offset},
        {"LSTM", "timeout", "hangs when going backwards", [](const params& p, double) { return p.flag("go_backwards"); }, a::hang},
        {"UpSampling2D", "memory", "allocates without bound with bilinear interpolation",
         [](const params& p, double) { return p.str("interpolation") == "bilinear"; }, a::memory},
    };
    return all;
}

/// The reference interpreter named "faulty", with the planted faults of these layers' kernels
/// (all of them by default; none: a clean copy, for the campaign to compare with).
inline memo::reference::interpreter faulty_reference(const std::vector<std::string>& only = {}) {
    memo::reference::interpreter b(std::nullopt, "faulty");
    for (const auto& f : faults())
        if (only.empty() || std::find(only.begin(), only.end(), f.layer) != only.end())
            b.wrap_kernel(f.layer,
                          [&f]<class T>(std::type_identity<T>, const memo::reference::kernel_in_context<T>& good, const memo::reference::kernel_context& c,
                                        std::span<const array<T>> in, std::span<const array<T>> w) -> memo::expected<array<T>> {
                              double top = -std::numeric_limits<double>::infinity();
                              for (const auto& x : in)
                                  for (const auto& y : x.data) top = std::max(top, static_cast<double>(y));
                              if (!f.trigger(params{c.n}, top)) return good(c, in, w);
                              using act = planted::act;
                              switch (f.action) {
                                  case act::segfault: std::raise(SIGSEGV); break;
                                  case act::abort: std::abort();
                                  case act::error: return memo::fail("planted library error in " + std::string(f.layer));
                                  case act::hang:
                                      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
                                  case act::memory:
                                      for (std::vector<std::vector<char>> hog;;) hog.emplace_back(std::size_t{32} << 20, 1);
                                  default: break;
                              }
                              auto out = good(c, in, w);
                              if (!out || out->data.empty()) return out;
                              for (auto& x : out->data) {
                                  const float v = static_cast<float>(x);
                                  if (f.action == act::nan) x = T(std::numeric_limits<float>::quiet_NaN());  // a 0/0 over the tensor
                                  if (f.action == act::scale) x = T(v * 1.5f);
                                  if (f.action == act::offset) x = T(v + 0.25f * (1.0f + std::abs(v)));
                              }
                              return out;
                          });
    return b;
}

/// The faulty copy as a backend named "faulty" (not among the defaults): what the selftest's
/// bugs replay on (memo-fuzz replay BUGDIR), and what `run --backends reference,faulty` runs.
inline backend_kind faulty_kind() {
    backend_kind k;
    k.name = "faulty";
    k.make = [](const memo::registry& reg, memo::isolation_limits lim, bool isolate) -> std::unique_ptr<memo::executor> {
        if (isolate) return memo::make_isolated<memo::reference::interpreter>([] { return faulty_reference(); }, reg, lim);
        return memo::make_in_process(faulty_reference());
    };
    k.by_default = false;
    return k;
}

/// A stored bug as the selftest reads it: its bug.json, as the campaign's bug store holds it.
struct stored {
    std::string kind, layer, key;  // kind: crash, nan, inconsistency, timeout or memory
    std::vector<std::string> culprits;
    double seconds = 0;
};

inline std::vector<stored> stored_bugs(const memo::store::bug_store& store) {
    std::vector<stored> r;
    for (const auto& [key, j] : store.all()) {
        stored b;
        b.key = key;
        b.kind = j.value("kind", "");
        const auto status = j.value("status", "");
        if (b.kind == "crash" && (status == "timeout" || status == "memory")) b.kind = status;
        if (j.contains("localisation")) b.layer = j["localisation"].value("layer", "");
        if (j.contains("culprits")) j["culprits"].get_to(b.culprits);
        if (j.contains("first_seen")) b.seconds = j["first_seen"].value("seconds", 0.0);
        r.push_back(std::move(b));
    }
    return r;
}

/// The campaign directory: --out, which must not hold a campaign, or a new temporary one.
inline std::string campaign_directory(const cli::args& a) {
    namespace fs = std::filesystem;
    if (a.has("out")) {
        const auto out = a.value("out");
        if (fs::exists(fs::path(out) / "stats.json")) throw memo::error(out + ": already holds a campaign; choose another --out");
        return out;
    }
    std::string tmpl = (fs::temp_directory_path() / "memo-selftest-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw memo::error("cannot make a directory in " + fs::temp_directory_path().string());
    return tmpl;
}

/// Which faults to plant (--faults): all, none (a clean copy: the same campaign without them), or
/// some layers'. `layers` is what the faulty reference is made with: empty for all, "-" for none.
struct fault_choice {
    std::vector<std::string> layers;
    std::vector<const planted*> planted_now;
};
inline fault_choice choose_faults(const std::string& which) {
    fault_choice c;
    if (which != "all" && which != "none") {
        c.layers = split_list(which);
        for (const auto& l : c.layers)
            if (std::none_of(faults().begin(), faults().end(), [&](const planted& f) { return f.layer == l; }))
                throw memo::error("--faults: no fault is planted in '" + l + "' (the layers: see memo-fuzz selftest --help)");
    } else if (which == "none") {
        c.layers = {"-"};  // matches no layer
    }
    for (const auto& f : faults())
        if (c.layers.empty() || std::find(c.layers.begin(), c.layers.end(), f.layer) != c.layers.end()) c.planted_now.push_back(&f);
    return c;
}

/// Each fault against the stored bugs: found when a bug blames 'faulty' at its layer; right when
/// that bug is also of the fault's kind (the bug that blames it best: of its kind first, then the
/// first seen). Bugs that match no fault are false alarms.
struct recall {
    memo::io::json rows = memo::io::json::array();
    memo::io::json false_alarms = memo::io::json::array();
    std::size_t found = 0, right = 0;
};
inline recall score(const std::vector<const planted*>& planted_now, const std::vector<stored>& bugs) {
    recall r;
    std::vector<bool> matched(bugs.size(), false);
    for (const auto* fp : planted_now) {
        const auto& f = *fp;
        const stored* best = nullptr;
        auto rank = [&f](const stored& b) { return std::pair{b.kind != f.kind, b.seconds}; };
        for (std::size_t i = 0; i < bugs.size(); ++i) {
            const auto& b = bugs[i];
            const bool blames = std::find(b.culprits.begin(), b.culprits.end(), "faulty") != b.culprits.end();
            if (!blames || b.layer != f.layer) continue;
            matched[i] = true;
            if (!best || rank(b) < rank(*best)) best = &b;
        }
        const bool is_right = best && best->kind == f.kind;
        r.found += best != nullptr;
        r.right += is_right;
        memo::io::json row = {{"layer", f.layer}, {"kind", f.kind}, {"fault", f.what}, {"found", best != nullptr}, {"right", is_right}};
        row["seconds"] = best ? memo::io::json(best->seconds) : memo::io::json(nullptr);
        row["stored_as"] = best ? memo::io::json(best->kind + " at " + best->layer) : memo::io::json(nullptr);
        r.rows.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < bugs.size(); ++i)
        if (!matched[i]) r.false_alarms.push_back("bugs/" + bugs[i].key);
    return r;
}

/// Executed models per second after the first minute (once a hang or a blow-up is known, its
/// trigger runs under short limits: the rate should recover); -1 for a campaign of 90 s or less.
inline double rate_after_minute(const std::string& out, double seconds, double executed) {
    if (seconds <= 90) return -1;
    const auto csv = memo::report::read_csv(std::filesystem::path(out) / "coverage.csv");
    const int t = csv.column("seconds"), e = csv.column("executed");
    for (const auto& row : csv.rows)
        if (t >= 0 && e >= 0 && row[static_cast<std::size_t>(t)] >= 60) {
            const double dt = seconds - row[static_cast<std::size_t>(t)];
            return dt > 0 ? (executed - row[static_cast<std::size_t>(e)]) / dt : -1;
        }
    return -1;
}

inline void print_recall(const recall& r, std::size_t planted, const memo::io::json& rate, const std::string& out) {
    fmt::print("\n{:<20} {:<14} {:<6} {:>8}  {}\n", "layer", "kind", "found", "seconds", "stored as");
    for (const auto& row : r.rows)
        fmt::print("{:<20} {:<14} {:<6} {:>8}  {}{}\n", row["layer"].get<std::string>(), row["kind"].get<std::string>(),
                   row["found"].get<bool>() ? "yes" : "no", row["seconds"].is_null() ? std::string("-") : fmt::format("{:.1f}", row["seconds"].get<double>()),
                   row["stored_as"].is_null() ? std::string("-") : row["stored_as"].get<std::string>(),
                   row["found"].get<bool>() && !row["right"].get<bool>() ? "  (wrong kind)" : "");
    fmt::print("\n{} of {} planted faults found, {} stored under the right kind and layer; {} false alarms", r.found, planted, r.right, r.false_alarms.size());
    fmt::print("\n{} models executed, {:.1f}/s", rate["executed"].get<std::uint64_t>(), rate["per_second"].get<double>());
    if (!rate["per_second_after_60s"].is_null()) fmt::print(" ({:.1f}/s after the first minute)", rate["per_second_after_60s"].get<double>());
    for (const auto& d : r.false_alarms) fmt::print("\n  false alarm: {}", d.get<std::string>());
    fmt::print("\ncampaign: {}\n", out);
}

}  // namespace detail::selftest

inline int selftest(const cli::args& a) {
    using namespace detail::selftest;
    if (!a.positional().empty()) throw memo::error("unexpected argument '" + a.positional()[0] + "'");
    const auto& reg = memo::default_registry();
    memo::campaign::generation_options o;
    o.seconds = a.number("seconds");
    o.seed = a.count("seed");
    o.quiet = a.has("json");
    o.out = campaign_directory(a);
    // Short limits: each sighting of the hang or the blow-up costs one of them. The memory limit is
    // low enough that the blow-up passes it well inside the time limit on a loaded machine too
    // (2048 MiB could take over 3 s there, and the hog was then stored as a hang).
    memo::isolation_limits lim;
    lim.timeout_ms = a.number("timeout-ms");
    lim.memory_mb = static_cast<std::int64_t>(a.count("memory-mb"));
    const auto lanes = a.count("lanes");
    if (lanes < 1 || lanes > 16) throw memo::error("--lanes must be between 1 and 16");
    const auto chosen = choose_faults(a.value("faults"));
    // In each lane, the clean reference and the faulty copy, isolated, judged against float64.
    memo::oracle::options oo;
    oo.max_bytes = lim.memory_mb << 20;
    const testers t(lanes, reg, oo, memo::varied_inputs, "differential", [&] {
        std::vector<std::unique_ptr<memo::executor>> pair;
        pair.push_back(memo::make_isolated<memo::reference::interpreter>([] { return memo::reference::interpreter(); }, reg, lim));
        pair.push_back(memo::make_isolated<memo::reference::interpreter>([layers = chosen.layers] { return faulty_reference(layers); }, reg, lim));
        return pair;
    });

    memo::campaign::execution_options eo;
    eo.max_bytes = lim.memory_mb << 20;
    eo.replay = replay_command();
    std::vector<memo::model> small;
    for (const auto& m : memo::campaign::load_seeds("zoo", reg, model_readers()))
        small.push_back(memo::campaign::fit_to_cost(m, eo.max_cost / 10));  // as memo-fuzz run shrinks them
    o.max_cost = eo.max_cost;
    if (!o.quiet)
        fmt::print("selftest: {} planted faults in 'faulty', beside the clean 'reference', for {} s -> {}\n", chosen.planted_now.size(), o.seconds, o.out);
    memo::campaign::execution exec(t.lanes(), reg, o.out, eo);
    memo::campaign::generate(small, reg, o, &exec);

    const auto r = score(chosen.planted_now, stored_bugs(exec.store()));
    const double executed = static_cast<double>(exec.executed()), after_minute = rate_after_minute(o.out, o.seconds, executed);
    memo::io::json rate = {{"executed", exec.executed()}, {"per_second", executed / std::max(o.seconds, 1e-9)}};
    rate["per_second_after_60s"] = after_minute >= 0 ? memo::io::json(after_minute) : memo::io::json(nullptr);
    if (!a.has("json")) {
        print_recall(r, chosen.planted_now.size(), rate, o.out);
        return 0;
    }
    fmt::print("{}\n", memo::io::json{{"faults", r.rows},
                                      {"false_alarms", r.false_alarms.size()},
                                      {"false_alarm_bugs", r.false_alarms},
                                      {"models", rate},
                                      {"seconds", o.seconds},
                                      {"out", o.out}}
                           .dump(2));
    return 0;
}

inline cli::command selftest_command() {
    return {"selftest",
            "selftest [--seconds S] [--json] [--out DIR] [--seed N] [--faults LIST]",
            "Measures recall: a campaign runs memo's reference interpreter beside a copy of it with planted\n"
            "faults ('faulty'), each behind a parameter value that generated models reach only sometimes, of\n"
            "every verdict kind (a crash by signal, an abort, a library error, NaN, wrong results in several\n"
            "layer families, a hang, a memory blow-up). Then prints, per fault, whether a stored bug blames\n"
            "it (found), when (seconds to first sighting), and under which kind and layer it was stored;\n"
            "stored bugs that match no fault are false alarms.",
            {cli::valued("seconds", "S", "the campaign's length", "120"),
             cli::flag("json",
                       "print {\"faults\": [{\"layer\", \"kind\", \"found\", \"right\", \"seconds\"}, ...], \"false_alarms\": N, \"models\": "
                       "{\"executed\", \"per_second\", \"per_second_after_60s\"}}"),
             cli::valued("faults", "LIST",
                         "plant only the faults of these layers (comma-separated), or none: the same campaign against a clean copy, to "
                         "compare its models per second",
                         "all"),
             cli::valued("out", "DIR", "the campaign directory (default: a new one in the temporary directory)"),
             cli::valued("seed", "N", "the search's seed", "1"),
             cli::valued("lanes", "N", "models in flight at once, as memo-fuzz run", std::to_string(default_lanes)),
             // Short limits: each sighting of the hang or the blow-up costs one of them (see selftest()).
             cli::valued("timeout-ms", "T", "the workers' time limit (each sighting of the hang costs it)", "3000"),
             cli::valued("memory-mb", "M", "the workers' memory limit", "512")},
            selftest};
}

}  // namespace memo::fuzz::commands
