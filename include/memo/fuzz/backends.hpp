#pragma once
// The backends a memo::fuzz program runs, by name, each in its own worker process unless
// --in-process. Two are always there:
//   reference          our interpreter in the model's dtypes
//   reference-float64  our interpreter in float64 (the ground truth, as a participant)
// The others are registered by the program before memo::fuzz::main (toolkit::backends): memo-fuzz
// adds PyTorch, Keras 3 and TensorFlow.js in their workers, and the libraries that run its ONNX
// export (ONNX Runtime, OpenVINO, TVM) when it was built with ONNX; a user's program adds its own
// library's. The toolkit also holds what a program adds to loading and
// storing models (ONNX files, say) and commands of its own.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../backends/isolate.hpp"
#include "../backends/reference/interpreter.hpp"
#include "../backends/shared.hpp"
#include "../campaign/seeds.hpp"
#include "../io/json.hpp"
#include "../layers/all.hpp"
#include "../store/bugs.hpp"
#include "cli.hpp"

namespace memo::fuzz {

/// A backend a program offers under a name.
struct backend_kind {
    std::string name;
    /// The executor, in a worker process of its own when `isolate` (make_isolated), else in this
    /// process (make_in_process: --in-process, for debugging).
    std::function<std::unique_ptr<executor>(const registry&, isolation_limits, bool isolate)> make;
    /// Empty when it can run here; else why not (a worker that is not installed, say).
    std::function<std::string()> unavailable = [] { return std::string(); };
    bool by_default = true;  // joins the default backends (--backends not given) when available
    /// One worker serves every lane of a campaign (shared_executor), rather than one worker a lane:
    /// for a library that takes seconds to start, whose runs take longer than memo's own work on a
    /// model, or that keeps what it built for the next models (Keras' eager workers).
    bool one_worker = false;
    std::string library;  // what it runs, in words ("PyTorch's libtorch", "Keras 3 on JAX")
    /// The version of the library it runs here (empty when it cannot tell): a finding goes
    /// upstream with it. Read from what is installed, never by loading the library.
    std::function<std::string()> version = [] { return std::string(); };
};

/// What a program adds to memo::fuzz's commands. Set it up before memo::fuzz::main.
struct toolkit {
    std::string program = "memo-fuzz";   // the name in help and error messages
    std::vector<backend_kind> backends;  // beside the reference interpreter's two
    campaign::model_readers readers;     // model formats beyond memo's JSON and Keras JSON
    store::bug_files attach;             // more files in each new bug's directory
    std::vector<cli::command> commands;  // commands of the program's own
    /// The layers models are generated and read with (null: memo's default registry); a library
    /// that runs a few layers gives a registry of those (docs/tutorial.md).
    const registry* reg = nullptr;
    /// The seeds of `run` without --seeds (empty: memo's zoo, which needs the default registry).
    std::function<std::vector<model>(const registry&)> seeds;

    const registry& layers() const { return reg ? *reg : default_registry(); }
};

/// The version of an npm package installed under a Node.js worker's folder (its package.json), or empty.
inline std::string npm_version(const std::filesystem::path& worker_dir, const std::string& package) {
    try {
        return io::parse_json_file((worker_dir / "node_modules" / package / "package.json").string()).value("version", "");
    } catch (const std::exception&) {
        return {};
    }
}

/// A backend this program knows but cannot run here, and why (built without its library, say).
inline backend_kind absent(std::string name, std::string why) {
    backend_kind k;
    k.name = std::move(name);
    k.unavailable = [why = std::move(why)] { return why; };
    return k;
}

/// The program's toolkit (one per program).
inline toolkit& setup() {
    static toolkit t;
    return t;
}

/// This program's absolute path (from /proc/self/exe), or its name where that cannot be read.
inline std::string program_path() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? setup().program : p.string();
}

/// How a bug of a campaign this program runs replays: this very program's replay command, so a
/// bug found on a backend only this program knows replays on it (repro.sh).
inline std::string replay_command() {
    std::string quoted = "'";
    for (char c : program_path()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "' replay";
}

}  // namespace memo::fuzz

namespace memo::fuzz::commands {

inline const campaign::model_readers& model_readers() { return setup().readers; }
inline const store::bug_files& bug_files() { return setup().attach; }

/// The registered backend of this name, or null.
inline const backend_kind* find_backend(const std::string& name) {
    for (const auto& k : setup().backends)
        if (k.name == name) return &k;
    return nullptr;
}

inline std::vector<std::string> available_backends() {
    std::vector<std::string> r{"reference", "reference-float64"};
    for (const auto& k : setup().backends)
        if (k.unavailable().empty()) r.push_back(k.name);
    return r;
}
/// The reference, and every registered backend that is available and joins the defaults.
inline std::string default_backends() {
    std::string s = "reference";
    for (const auto& k : setup().backends)
        if (k.by_default && k.unavailable().empty()) s += "," + k.name;
    return s;
}

inline std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> r;
    std::size_t at = 0;
    while (at <= s.size()) {
        const auto comma = s.find(',', at);
        auto item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (!item.empty()) r.push_back(item);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return r;
}

/// memo's own version (CMakeLists.txt's project VERSION), the reference interpreter's.
inline constexpr std::string_view memo_version = "0.1.0";

/// The library and version a backend of this name runs ("memo 0.1.0" for the reference's two).
inline std::pair<std::string, std::string> library_of(const std::string& name) {
    if (name == "reference" || name == "reference-float64" || name == "reference-f64") return {"memo's reference interpreter", std::string(memo_version)};
    if (const auto* k = find_backend(name)) return {k->library.empty() ? k->name : k->library, k->version()};
    return {name, ""};
}

/// Each named backend's library version: what stats.json and every bug.json carry.
inline nlohmann::json versions_of(const std::vector<std::string>& names) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& n : names) {
        const auto [library, version] = library_of(n);
        v[n] = version.empty() ? library : library + " " + version;
    }
    return v;
}

/// `backends [--json]`: every backend this program knows, whether it runs here, and why not.
inline int list_backends(const cli::args& a) {
    std::vector<std::string> names{"reference", "reference-float64"};
    for (const auto& k : setup().backends)
        if (k.name != "faulty") names.push_back(k.name);
    nlohmann::json all = nlohmann::json::array();
    for (const auto& n : names) {
        const auto* k = find_backend(n);
        const auto why = k ? k->unavailable() : std::string();
        const auto [library, version] = library_of(n);
        all.push_back({{"name", n}, {"available", why.empty()}, {"library", library}, {"version", version}, {"why", why}, {"default", !k || k->by_default}});
    }
    if (a.has("json")) {
        std::printf("%s\n", all.dump(2).c_str());
        return 0;
    }
    for (const auto& b : all) {
        const std::string what = b["library"].get<std::string>() + (b["version"].get<std::string>().empty() ? "" : " " + b["version"].get<std::string>());
        std::printf("  %-22s %-4s %s%s\n", b["name"].get<std::string>().c_str(), b["available"].get<bool>() ? "yes" : "no", what.c_str(),
                    b["available"].get<bool>() ? "" : ("  (" + b["why"].get<std::string>() + ")").c_str());
    }
    return 0;
}

inline cli::command backends_command() {
    return {"backends",
            "backends [--json]",
            "Lists every backend memo-fuzz knows: whether it runs on this machine, the library and the\n"
            "version it runs, and why not where it does not.",
            {cli::flag("json", "[{\"name\", \"available\", \"library\", \"version\", \"why\", \"default\"}, ...]")},
            list_backends};
}

/// The workers that serve several lanes (backend_kind::one_worker), by backend name.
using shared_workers = std::map<std::string, std::shared_ptr<memo::shared_executor>>;

/// The executors for a comma-separated list of backend names; a clear error for an unknown or
/// unavailable one. With `shared`, a backend that has one worker for all lanes gets a lane on the
/// one there (made on first use).
inline std::vector<std::unique_ptr<memo::executor>> make_backends(const std::string& list, const memo::registry& reg, memo::isolation_limits lim, bool isolate,
                                                                  shared_workers* shared = nullptr) {
    std::vector<std::unique_ptr<memo::executor>> r;
    auto names = split_list(list);
    if (names.empty()) throw memo::error("--backends: no backend named");
    for (const auto& n : names) {
        std::optional<memo::dtype> precision;
        if (n == "reference") precision = std::nullopt;
        else if (n == "reference-float64" || n == "reference-f64") precision = memo::dtype::float64;
        else if (const auto* k = find_backend(n)) {
            if (const auto why = k->unavailable(); !why.empty()) throw memo::error("--backends: " + n + " is not available: " + why);
            if (shared && k->one_worker && isolate) {
                auto& one = (*shared)[n];
                if (!one) one = std::make_shared<memo::shared_executor>(k->make(reg, lim, isolate));
                r.push_back(memo::shared_executor::lane(one));
            } else {
                r.push_back(k->make(reg, lim, isolate));
            }
            continue;
        } else {
            std::string known;
            for (const auto& a : available_backends()) known += (known.empty() ? "" : ", ") + a;
            throw memo::error("--backends: unknown backend '" + n + "' (available: " + known + ")");
        }
        auto make = [precision] { return memo::reference::interpreter(precision); };
        if (isolate) r.push_back(memo::make_isolated<memo::reference::interpreter>(make, reg, lim));
        else r.push_back(memo::make_in_process(make()));
    }
    for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j)
            if (r[i]->name() == r[j]->name()) throw memo::error("--backends: " + std::string(r[i]->name()) + " named twice");
    return r;
}

}  // namespace memo::fuzz::commands
