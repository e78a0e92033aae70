#pragma once
// The bug store: DIR/bugs/<kind>/<signature>/ per distinct bug, written atomically (a temporary
// directory renamed into place) before the campaign goes on, so a kill loses nothing stored.
//   model.json    the model that first showed the bug
//   minimal.json  the smallest model that still shows it
//   variant.json  a metamorphic bug's variant: the model with a relation spliced in
//   bug.json      verdict, culprits, localisation, each backend's status, error text, time, memory
//                 and output summary, the inputs' options, sizes, first seen, count, reproduction
//   repro.sh      the one-line reproduction: the replay command of the program that found it
//                 (memo-fuzz replay <this directory>, or a memo::fuzz program's own)
//   repro/        a differential bug's reproducers in its libraries' own terms (oracle/reproducers.hpp),
//                 one per culprit whose worker writes one, each run once (beside the campaign,
//                 after the bug is stored): bug.json's "reproducers"
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "../io/json.hpp"
#include "../oracle/differential.hpp"
#include "../oracle/reproducers.hpp"
#include "../oracle/resources.hpp"
#include "../oracle/root_cause.hpp"

namespace memo::store {

struct bug_report {
    oracle::verdict v;  // localised on the minimal model
    std::string signature;
    model original, minimal;
    std::vector<oracle::observation> observations;  // of the original model
    input_options inputs;
    std::uint64_t iteration = 0;
    double seconds = 0;
    int minimise_checks = 0;
    std::vector<oracle::resource_runs> resources;  // performance and leak: every run's figures
    oracle::resource_options resource_options{};   // and the options they were judged with
    std::string tester = "differential";           // which tester judged the model (oracle/tester.hpp)
    /// Writes the reproducers into the folder given (the bug's repro/, before the bug is moved into
    /// place); none: the bug gets none.
    std::function<oracle::reproducers_written(const std::filesystem::path&)> reproduce;
};

/// bug.json's "reproducers": each culprit's script (relative to the bug's folder), whether it
/// showed the fault when run, and its last line.
inline io::json reproducers_json(const oracle::reproducers_written& r) {
    io::json j = io::json::object();
    if (!r.v) j["not_shown"] = "the minimal model did not show the bug when judged again";
    for (const auto& w : r.culprits) {
        io::json c = {{"said", w.waits() ? std::string("running") : w.said}};
        if (w.written) c["script"] = "repro/" + std::filesystem::path(w.script).filename().string(), c["shows"] = w.shows;
        j[w.backend] = std::move(c);
    }
    return j;
}

inline io::json resource_options_json(const oracle::resource_options& r) {
    return {{"repeats", r.repeats}, {"slower", r.slower}, {"larger", r.larger}, {"min_ms", r.min_ms}, {"min_kb", r.min_kb}, {"leak_kb", r.leak_kb}};
}
inline oracle::resource_options resource_options_from(const io::json& j) {
    oracle::resource_options r;
    r.repeats = j.value("repeats", r.repeats), r.slower = j.value("slower", r.slower), r.larger = j.value("larger", r.larger);
    r.min_ms = j.value("min_ms", r.min_ms), r.min_kb = j.value("min_kb", r.min_kb), r.leak_kb = j.value("leak_kb", r.leak_kb);
    return r;
}

inline io::json summary_json(const tensor& t) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    std::int64_t bad = 0, n = 0;
    for (double x : t.data) {
        if (!std::isfinite(x)) {
            ++bad;
            continue;
        }
        lo = std::min(lo, x), hi = std::max(hi, x), sum += x, ++n;
    }
    return {{"dims", t.dims},      {"dtype", std::string(name_of(t.type))},          {"min", n ? lo : 0.0},
            {"max", n ? hi : 0.0}, {"mean", n ? sum / static_cast<double>(n) : 0.0}, {"non_finite", bad}};
}

inline io::json observation_json(const oracle::observation& o) {
    io::json outs = io::json::array();
    for (const auto& t : o.result.outputs) outs.push_back(summary_json(t));
    io::json j = {
        {"backend", o.backend}, {"status", std::string(name_of(o.result.status))}, {"ms", o.result.ms}, {"peak_kb", o.result.peak_kb}, {"outputs", outs}};
    if (!o.result.message.empty()) j["message"] = o.result.message;
    if (o.result.signal) j["signal"] = o.result.signal;
    if (o.result.node >= 0) j["node"] = o.result.node;
    return j;
}

inline io::json verdict_json(const oracle::verdict& v, const model& m) {
    // Every kind writes the same keys (0 where its kind has no such figure): readers need not know the kinds.
    const oracle::outputs_differ none;
    const auto& d = v.differs() ? *v.differs() : none;
    const double max_abs = v.broken() ? v.broken()->max_abs : d.max_abs, max_rel = v.broken() ? v.broken()->max_rel : d.max_rel;
    io::json j = {{"kind", std::string(oracle::name_of(v.what))},       {"culprits", v.culprits}, {"peers", v.peers},
                  {"status", std::string(name_of(v.status()))},         {"dmad", d.dmad},         {"max_abs", std::isfinite(max_abs) ? max_abs : -1.0},
                  {"max_rel", std::isfinite(max_rel) ? max_rel : -1.0}, {"message", v.message}};
    if (d.masked) j["masked"] = true;    // the outputs agreed; a node's traced values did not
    if (d.carried) j["carried"] = true;  // seen as NaN in the outputs, carried from a difference at this node
    io::json where = {{"node", v.node}, {"layer", v.layer}, {"producer", v.producer}};
    if (!v.producer.empty()) where["pair"] = v.producer + " -> " + v.layer;
    if (v.node >= 0 && static_cast<std::size_t>(v.node) < m.size()) {
        io::json ps = io::json::object();
        const node& n = m[v.node];
        for (std::size_t i = 0; i < n.params.size(); ++i)
            if (n.layer->params[i].what != role::inert) ps[std::string(n.layer->params[i].name)] = io::to_json(n.params[i]);
        where["params"] = ps;
        where["dtype"] = std::string(name_of(n.type));
    }
    // What the localised node alone did on identical inputs, against what rounding explains there.
    if (const auto& at = d.at_node; at.bound > 0)
        where["difference"] = {{"max_abs", at.max_abs}, {"scale", at.scale}, {"bound", at.bound}, {"relative", at.scale > 0 ? at.max_abs / at.scale : -1.0}};
    j["localisation"] = where;
    return j;
}

/// Writes more files of a bug into its directory (before it is renamed into place), from its
/// original and minimal models: an exporter's own formats, say.
using bug_files = std::function<void(const model& original, const model& minimal, const std::filesystem::path& dir)>;

class bug_store {
public:
    /// `replay`: the command repro.sh runs with the bug's directory (the program that made the
    /// campaign knows its backends: memo::fuzz programs give their own path).
    explicit bug_store(std::filesystem::path dir, bug_files attach = {}, std::string replay = "memo-fuzz replay")
        : dir_(std::move(dir) / "bugs"), attach_(std::move(attach)), replay_(std::move(replay)) {
        load();
    }

    /// The library version of each backend (name -> version), written into every new bug.json:
    /// a finding goes upstream with the versions it was found on.
    void set_versions(io::json versions) { versions_ = std::move(versions); }

    /// Stores a bug; returns true when its signature is new (a duplicate only bumps the count).
    bool record(const bug_report& b, const std::vector<std::string>& backends) {
        namespace fs = std::filesystem;
        const std::string kind(oracle::name_of(b.v.what));
        const std::string key = kind + "/" + b.signature;
        oracle::reproducers_written reproducers;
        if (seen_.count(key)) {
            count(b.v.what, b.signature);
            return false;
        }
        io::json j = bug_json(b, backends);
        store_new(kind, b.signature, std::move(j), [&](const fs::path& tmp, io::json& written) {
            io::write_file((tmp / "model.json").string(), io::model_to_json(b.original).dump(1) + "\n");
            io::write_file((tmp / "minimal.json").string(), io::model_to_json(b.minimal).dump(1) + "\n");
            if (const auto* r = b.v.broken()) io::write_file((tmp / "variant.json").string(), io::model_to_json(r->variant.m).dump(1) + "\n");
            io::write_file((tmp / "repro.sh").string(), "#!/bin/sh\n# Re-runs this bug's minimal model on its backends and prints the verdict.\nexec " +
                                                            replay_ + " \"$(dirname \"$0\")\" \"$@\"\n");
            if (attach_) {
                try {
                    attach_(b.original, b.minimal, tmp);
                } catch (const std::exception&) {
                    // An extra file that cannot be written must not cost the bug itself.
                }
            }
            if (b.reproduce) {
                try {
                    reproducers = b.reproduce(tmp / "repro");
                    written["reproducers"] = reproducers_json(reproducers);
                } catch (const std::exception& e) {
                    written["reproducers"] = {{"error", e.what()}};
                }
            }
        });
        // Reproducers written but not run yet run from the bug's folder, beside the campaign.
        for (auto w : reproducers.culprits)
            if (w.waits()) {
                w.script = (dir_ / key / "repro" / std::filesystem::path(w.script).filename()).string();
                running_.push_back({key, std::move(w), nullptr});
            }
        poll_reproducers();
        return true;
    }

    /// Reproducers not finished yet (record() queued them); poll_reproducers() moves them along.
    std::size_t reproducers_running() const noexcept { return running_.size(); }
    /// Writes what each reproducer that finished said into its bug.json, and starts those waiting
    /// while fewer than two run (each may import a library of a gigabyte); does not wait.
    void poll_reproducers() {
        std::size_t started = 0;
        for (auto it = running_.begin(); it != running_.end();) {
            if (!it->p && started < 2) it->p = std::make_unique<oracle::reproducer_process>(it->w);
            if (it->p && it->p->done()) {
                settle(*it);
                it = running_.erase(it);
                continue;
            }
            started += it->p != nullptr;
            ++it;
        }
    }
    /// Waits for every reproducer not finished (each has its limit: reproducer_process).
    void wait_reproducers() {
        for (poll_reproducers(); !running_.empty(); poll_reproducers()) ::usleep(20000);
    }

    /// One more sighting of a stored bug (its bug.json's count).
    void count(oracle::kind k, const std::string& signature) {
        const std::string key = std::string(oracle::name_of(k)) + "/" + signature;
        auto it = seen_.find(key);
        if (it == seen_.end()) return;
        it->second["count"] = it->second.value("count", 1) + 1;
        io::write_file((dir_ / key / "bug.json").string(), it->second.dump(2) + "\n");
    }

    /// Whether this signature is stored (then record() only counts it).
    bool has(oracle::kind k, const std::string& signature) const { return seen_.count(std::string(oracle::name_of(k)) + "/" + signature) != 0; }

    /// Every stored bug: "<kind>/<signature>" -> its bug.json.
    const std::map<std::string, io::json>& all() const noexcept { return seen_; }
    /// The directory of a stored bug ("<kind>/<signature>").
    std::filesystem::path dir_of(const std::string& key) const { return dir_ / key; }

    /// Stores a bug another process of the campaign (`rank`) stored too (cluster/exchange.hpp): its
    /// files as that process wrote them, and `sightings`, that process's count so far. Returns true
    /// when its signature is new here; a known one needs no files. bug.json's `sightings_by_rank`
    /// keeps each process's last count, so that a count sent twice (after a resume, say) adds
    /// nothing: `count` grows by what is new.
    bool adopt(const std::string& key, const std::map<std::string, std::string>& files, std::uint64_t sightings, int rank) {
        namespace fs = std::filesystem;
        const std::string from = std::to_string(rank);
        if (auto it = seen_.find(key); it != seen_.end()) {
            auto& j = it->second;
            const std::uint64_t before = j.contains("sightings_by_rank") ? j["sightings_by_rank"].value(from, std::uint64_t{0}) : 0;
            if (sightings <= before) return false;
            j["count"] = j.value("count", std::uint64_t{1}) + (sightings - before);
            j["sightings_by_rank"][from] = sightings;
            io::write_file((dir_ / key / "bug.json").string(), j.dump(2) + "\n");
            return false;
        }
        const auto slash = key.find('/');
        if (slash == std::string::npos || key.find('/', slash + 1) != std::string::npos || key.find("..") != std::string::npos || !files.count("bug.json"))
            throw error("a shared bug '" + key + "' is not <kind>/<signature> with a bug.json");
        for (const auto& [name, bytes] : files)
            if (name.find('/') != std::string::npos || name.starts_with(".")) throw error("a shared bug's file '" + name + "' is not a plain name");
        io::json j = io::json::parse(files.at("bug.json"));
        j["count"] = sightings;
        j["sightings_by_rank"] = {{from, sightings}};
        j["rank"] = rank;  // the process that found it (first_seen is that process's)
        store_new(key.substr(0, slash), key.substr(slash + 1), std::move(j), [&](const fs::path& tmp, io::json&) {
            for (const auto& [name, bytes] : files)
                if (name != "bug.json") io::write_file((tmp / name).string(), bytes);
        });
        return true;
    }

    /// Distinct bugs of a kind ("crash", "nan", "inconsistency"), and in all.
    std::size_t unique(std::string_view kind) const {
        auto it = unique_.find(std::string(kind));
        return it == unique_.end() ? 0 : it->second;
    }
    std::size_t unique() const { return seen_.size(); }

    /// How many root causes the stored bugs have (the size of root_causes(), without building it).
    std::size_t root_cause_count() const { return causes_.size(); }

    /// The stored bugs by root cause (oracle/root_cause.hpp): root cause -> their keys
    /// ("<kind>/<signature>"). A bug stored without one (by an older memo) is a root cause alone.
    std::map<std::string, std::vector<std::string>> root_causes() const {
        std::map<std::string, std::vector<std::string>> out;
        for (const auto& [key, j] : seen_) out[j.value("root_cause", key)].push_back(key);
        return out;
    }

private:
    /// A new bug's bug.json: its verdict, names, backends and their versions, runs, inputs and sizes.
    io::json bug_json(const bug_report& b, const std::vector<std::string>& backends) const {
        // A metamorphic verdict is localised in its variant.
        io::json j = verdict_json(b.v, oracle::localised_in(b.v, b.minimal));
        io::json obs = io::json::array();
        for (const auto& o : b.observations) obs.push_back(observation_json(o));
        j["signature"] = b.signature;
        j["root_cause"] = oracle::root_cause(b.v, oracle::localised_in(b.v, b.minimal));
        j["backends"] = backends;
        if (versions_.is_object()) {
            j["versions"] = io::json::object();
            for (const auto& n : backends)
                if (versions_.contains(n)) j["versions"][n] = versions_[n];
        }
        j["tester"] = b.tester;
        j["observations"] = obs;
        j["inputs"] = {{"seed", b.original.seed}, {"samples", b.inputs.samples}, {"lo", b.inputs.lo}, {"hi", b.inputs.hi}, {"varied", b.inputs.varied}};
        // Which generator each input drew from (a function of the seed: written to be read).
        io::json gens = io::json::array();
        for (auto k : input_kinds(b.minimal, b.inputs)) gens.push_back(std::string(name_of(k)));
        j["inputs"]["generators"] = gens;
        j["sizes"] = {{"original_layers", b.original.layer_count()}, {"minimal_layers", b.minimal.layer_count()}, {"minimise_checks", b.minimise_checks}};
        j["first_seen"] = {{"iteration", b.iteration}, {"seconds", b.seconds}};
        if (!b.resources.empty()) {
            io::json runs = io::json::object();
            for (const auto& r : b.resources) runs[r.backend] = {{"ms", r.ms}, {"cpu_ms", r.cpu_ms}, {"start_kb", r.start_kb}, {"peak_kb", r.peak_kb}};
            j["runs"] = runs;
            j["resource_options"] = resource_options_json(b.resource_options);
        }
        j["count"] = 1;
        if (const auto* r = b.v.broken()) {
            const auto& x = r->variant;
            j["variant"] = {{"relation", std::string(metamorphic::name_of(x.rel))}, {"output", x.output}, {"first_new", x.first_new}, {"gate", x.gate}};
        }
        return j;
    }

    /// Stores a new bug: its directory is written beside (`write` fills it and may add to its
    /// bug.json, which goes in last, with its reproduction line) and renamed into place, so a
    /// stored bug is always complete.
    template <class Write>
    void store_new(const std::string& kind, const std::string& signature, io::json j, Write write) {
        namespace fs = std::filesystem;
        const std::string key = kind + "/" + signature;
        const fs::path final_dir = dir_ / key;
        const fs::path tmp = dir_ / ".tmp" / (kind + "-" + signature + "-" + std::to_string(::getpid()));
        fs::remove_all(tmp);
        fs::create_directories(tmp);
        fs::create_directories(final_dir.parent_path());
        write(tmp, j);
        j["reproduce"] = "memo-fuzz replay " + final_dir.string();
        io::write_file((tmp / "bug.json").string(), j.dump(2) + "\n");
        if (fs::exists(tmp / "repro.sh"))
            fs::permissions(tmp / "repro.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
        fs::rename(tmp, final_dir);
        remember(key, std::move(j));
        ++unique_[kind];
    }

    void load() {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::is_directory(dir_, ec)) return;
        for (const auto& k : fs::directory_iterator(dir_)) {
            if (!k.is_directory() || k.path().filename() == ".tmp") continue;  // unfinished writes
            for (const auto& b : fs::directory_iterator(k.path()))
                if (b.is_directory() && fs::exists(b.path() / "bug.json")) {
                    remember(k.path().filename().string() + "/" + b.path().filename().string(), io::parse_json_file((b.path() / "bug.json").string()));
                    ++unique_[k.path().filename().string()];
                }
        }
    }
    /// A reproducer run beside the campaign: its bug, and its process once started.
    struct running {
        std::string key;
        oracle::reproducer_written w;
        std::unique_ptr<oracle::reproducer_process> p;
    };
    void settle(const running& r) {
        auto it = seen_.find(r.key);
        if (it == seen_.end()) return;
        auto& c = it->second["reproducers"][r.w.backend];
        c["said"] = r.p->said();
        c["shows"] = r.p->shows();
        io::write_file((dir_ / r.key / "bug.json").string(), it->second.dump(2) + "\n");
    }
    void remember(const std::string& key, io::json j) {
        causes_.insert(j.value("root_cause", key));
        seen_.emplace(key, std::move(j));
    }
    std::filesystem::path dir_;
    bug_files attach_;
    io::json versions_;
    std::string replay_;  // repro.sh's command
    std::map<std::string, io::json> seen_;
    std::map<std::string, std::size_t> unique_;
    std::set<std::string> causes_;  // the root causes of seen_, counted as each is stored
    std::vector<running> running_;
};

}  // namespace memo::store
