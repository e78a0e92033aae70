#pragma once
// memo-fuzz report-bug BUGDIR: a stored bug as the text of an issue for its library's tracker, in
// Markdown: a title, the library and its version, the machine (OS, CPU) and what the reproducer
// printed of its own environment, the reproducer inline, what it printed against what was expected,
// and what memo checked. Everything comes from the bug's directory: bug.json and repro/ (written
// when the bug was stored, or again by memo-fuzz reproduce).
#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../io/json.hpp"

#include "backends.hpp"
#include "cli.hpp"

namespace memo::fuzz::commands {

namespace report_bug_detail {

/// The value of KEY in a file of KEY=VALUE or "KEY : VALUE" lines (/etc/os-release, /proc/cpuinfo).
inline std::string field(const std::string& file, const std::string& key, char sep) {
    std::string text;
    try {
        text = io::read_file(file);
    } catch (const std::exception&) {
        return {};
    }
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = std::min(text.find('\n', at), text.size());
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        const auto s = line.find(sep);
        if (s == std::string::npos) continue;
        std::string k = line.substr(0, s), v = line.substr(s + 1);
        while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
        while (!v.empty() && (v.front() == ' ' || v.front() == '"')) v.erase(0, 1);
        while (!v.empty() && v.back() == '"') v.pop_back();
        if (k == key) return v;
    }
    return {};
}

inline std::string machine() {
    utsname u{};
    ::uname(&u);
    std::string os = field("/etc/os-release", "PRETTY_NAME", '=');
    std::string cpu = field("/proc/cpuinfo", "model name", ':');
    return fmt::format("{} (Linux {}, {}){}", os.empty() ? std::string(u.sysname) : os, u.release, u.machine, cpu.empty() ? "" : ", " + cpu);
}

/// The library a backend runs, in words, with its version: bug.json's versions (the campaign's
/// "library version"), else what this program says of the backend.
inline std::string library_of(const std::string& backend, const io::json& bug) {
    const auto versions = bug.value("versions", io::json::object());
    if (versions.contains(backend) && versions[backend].is_string()) return versions[backend].get<std::string>();
    for (const auto& k : setup().backends)
        if (k.name == backend && !k.library.empty()) return k.library;
    return backend;
}

/// One sentence on what goes wrong, from the verdict.
inline std::string fault(const io::json& bug) {
    const auto kind = bug.value("kind", std::string());
    const auto where = bug.value("localisation", io::json::object());
    const std::string layer = where.value("layer", std::string("the model"));
    const std::string message = bug.value("message", std::string());
    if (kind == "crash") return fmt::format("{} fails: {}", layer, message.substr(0, message.find('\n')));
    if (kind == "nan")
        return message.find("lost") != std::string::npos ? fmt::format("{} gives finite values where its input's NaN or infinity must carry through", layer)
                                                         : fmt::format("{} gives NaN or infinity where the exact result is finite", layer);
    if (kind == "inconsistency") return fmt::format("{} gives values that differ from the exact result beyond rounding", layer);
    return fmt::format("{} on {}", kind, layer);
}

inline std::string fenced(const std::string& text, const std::string& language) {
    std::string t = text;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return fmt::format("```{}\n{}\n```\n", language, t);
}

/// The culprit a report is about: the one asked for (`wanted`), else the first whose reproducer
/// shows the fault, else the first.
inline std::string culprit_reported(const std::string& wanted, const io::json& bug, const std::string& file) {
    const auto culprits = bug.value("culprits", std::vector<std::string>{});
    const auto reproducers = bug.value("reproducers", io::json::object());
    if (culprits.empty()) throw memo::error(file + ": no culprit");
    std::string culprit = wanted;
    for (const auto& c : culprits)
        if (culprit.empty() && reproducers.value(c, io::json::object()).value("shows", false)) culprit = c;
    if (culprit.empty()) culprit = culprits.front();
    if (std::find(culprits.begin(), culprits.end(), culprit) == culprits.end())
        throw memo::error(culprit + " is not a culprit of this bug (" + fmt::format("{}", fmt::join(culprits, ", ")) + ")");
    return culprit;
}

/// "What happens": the fault, the layer's dtype and settings.
inline void print_what_happens(const io::json& bug, const io::json& where) {
    fmt::print("\n## What happens\n\n{}.", fault(bug));
    if (where.contains("dtype")) fmt::print(" The layer computes in {}.", where["dtype"].get<std::string>());
    if (const auto params = where.value("params", io::json::object()); !params.empty()) {
        std::string p;
        for (const auto& [k, v] : params.items()) p += (p.empty() ? "" : ", ") + k + "=" + v.dump();
        fmt::print(" Its settings: {}.", p);
    }
    fmt::print("\n\n");
}

/// "Reproducer": the script in the library's own terms, the data files beside it, and what it
/// printed (`out`); or why there is none.
inline void print_reproducer(const std::filesystem::path& dir, const io::json& repro, const std::string& culprit, const std::string& out) {
    namespace fs = std::filesystem;
    if (!repro.contains("script")) {
        fmt::print("No reproducer of {} was written ({}); the bug's directory replays it with memo.\n\n", culprit,
                   repro.value("said", std::string("none in repro/")));
        return;
    }
    const fs::path script = dir / repro["script"].get<std::string>();
    const bool python = script.extension() == ".py";
    fmt::print("## Reproducer\n\n`{}`: run it from its folder{}; it exits 1 while the fault shows and 0 once it does not. ", script.filename().string(),
               python ? " with Python" : " with Node.js");
    std::vector<std::string> data;
    for (const auto& f : fs::directory_iterator(script.parent_path()))
        if (f.path().stem() == script.stem() && f.path() != script && f.path().extension() != ".out") data.push_back(f.path().filename().string());
    std::sort(data.begin(), data.end());
    if (!data.empty())
        fmt::print("It reads {} (attached), which hold{} the model's inputs{} and the values expected.", fmt::join(data, " and "), data.size() == 1 ? "s" : "",
                   python ? " and weights" : "");
    fmt::print("\n\n{}\n", fenced(io::read_file(script.string()), python ? "python" : "js"));
    if (!out.empty()) fmt::print("## Output\n\n{}\n", fenced(out, ""));
}

/// "Expected": what the peers and the float64 reference give, and how far the culprit is past rounding.
inline void print_expected(const io::json& bug, const io::json& where) {
    const auto peers = bug.value("peers", std::vector<std::string>{});
    fmt::print("## Expected\n\n");
    std::string others;
    for (const auto& p : peers) others += (others.empty() ? "" : ", ") + library_of(p, bug);
    if (bug.value("kind", std::string()) == "crash") fmt::print("The model runs{}.", others.empty() ? "" : ", as it does on " + others);
    else
        fmt::print("The exact values (float64, from a reference implementation of the same layers) within what float rounding explains{}.",
                   others.empty() ? "" : fmt::format("; {} agree{} with them on the same inputs", others, peers.size() == 1 ? "s" : ""));
    if (const auto diff = where.value("difference", io::json::object()); !diff.empty())
        fmt::print(" At {}, the largest difference is {:.6g} where rounding explains at most {:.3g}.", where.value("layer", std::string("the layer")),
                   diff.value("max_abs", 0.0), diff.value("bound", 0.0));
}

}  // namespace report_bug_detail

inline int report_bug(const cli::args& a) {
    namespace fs = std::filesystem;
    namespace d = report_bug_detail;
    if (a.positional().size() != 1) throw memo::error("report-bug needs one bug directory (DIR/bugs/<kind>/<signature>)");
    const fs::path dir = a.positional()[0];
    if (!fs::exists(dir / "bug.json")) throw memo::error(dir.string() + ": not a bug directory (no bug.json)");
    const auto bug = io::parse_json_file((dir / "bug.json").string());
    const std::string culprit = d::culprit_reported(a.value("backend"), bug, (dir / "bug.json").string());
    const auto repro = bug.value("reproducers", io::json::object()).value(culprit, io::json::object());
    const std::string library = d::library_of(culprit, bug);
    const auto where = bug.value("localisation", io::json::object());

    fmt::print("# {}: {}\n\n", library, d::fault(bug));
    fmt::print("**Library**: {}\n", library);
    fmt::print("**Machine**: {}\n", d::machine());
    std::string out;
    if (repro.contains("script")) {
        fs::path said = (dir / repro["script"].get<std::string>()).replace_extension(".out");
        if (fs::exists(said)) out = io::read_file(said.string());
        if (const auto first = out.substr(0, out.find('\n')); !first.empty()) fmt::print("**Environment** (as the reproducer prints it): {}\n", first);
    }
    d::print_what_happens(bug, where);
    d::print_reproducer(dir, repro, culprit, out);
    d::print_expected(bug, where);
    fmt::print(
        "\n\n## How it was found\n\nmemo, a model generator for testing deep-learning libraries, ran the model on {} and judged the "
        "results against the float64 reference; the model was shrunk to {} layer{} (signature {}).\n",
        fmt::join(bug.value("backends", std::vector<std::string>{}), ", "), bug.value("sizes", io::json::object()).value("minimal_layers", 0),
        bug.value("sizes", io::json::object()).value("minimal_layers", 0) == 1 ? "" : "s", bug.value("signature", std::string("?")));
    return 0;
}

inline cli::command report_bug_command() {
    return {"report-bug",
            "report-bug BUGDIR [--backend NAME]",
            "Prints a stored bug as the text of an issue for its library's tracker (Markdown): a title, the\n"
            "library and its version, the machine (OS, CPU) and the environment its reproducer printed, the\n"
            "reproducer inline (repro/, written when the bug was stored or by memo-fuzz reproduce) with what\n"
            "it printed, what was expected (the float64 reference, the other libraries' agreement, the\n"
            "rounding bound) and how memo found it. Reads only the bug's directory.",
            {cli::valued("backend", "NAME", "the culprit to report (default: the first whose reproducer shows the fault)")},
            report_bug};
}

}  // namespace memo::fuzz::commands
