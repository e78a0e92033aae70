#pragma once
// A small command-line toolkit: subcommands, each with --help, options and positional arguments.
// A command declares each of its options once (cli::option: name, value, help, default), and that
// one declaration parses the command line, answers an absent option with its default, refuses an
// unknown one, and writes the option's lines of --help and of docs/cli.md.
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../engine/error.hpp"

namespace memo::fuzz::cli {

/// One option of a command, declared once.
struct option {
    std::string name;       // without its dashes; empty: a heading that opens a group of options
    std::string value;      // what it takes, as --help names it ("S", "LIST"); empty: a flag
    std::string help;       // one paragraph (a '\n' starts a new line); the help wraps it
    std::string fallback;   // what an absent option means, as one would type it; empty: nothing
    bool each_run = false;  // given to each run of a command that resumes (`run --resume`), not kept with what it resumes
};
using options = std::vector<option>;

inline option flag(std::string name, std::string help) { return {std::move(name), {}, std::move(help), {}}; }
inline option valued(std::string name, std::string value, std::string help, std::string fallback = {}) {
    return {std::move(name), std::move(value), std::move(help), std::move(fallback)};
}
/// `o`, given to each run of a resumed command rather than kept with its state.
inline option each_run(option o) {
    o.each_run = true;
    return o;
}
/// A heading over the options after it ("execution options").
inline option heading(std::string text) { return {{}, {}, std::move(text), {}}; }
/// `a` followed by the options of `more` (a command's own, then a shared group).
inline options operator+(options a, const options& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

/// A non-negative integer from an option's text; a clear error otherwise.
inline std::uint64_t to_u64(const std::string& s, std::string_view what) {
    try {
        std::size_t used = 0;
        const auto v = std::stoull(s, &used);
        if (used == s.size() && s.find('-') == std::string::npos) return v;
    } catch (const std::exception&) {}
    throw memo::error("--" + std::string(what) + " expects a non-negative integer, got '" + s + "'");
}
/// A non-negative number from an option's text; a clear error otherwise.
inline double to_double(const std::string& s, std::string_view what) {
    try {
        std::size_t used = 0;
        const auto v = std::stod(s, &used);
        if (used == s.size() && v >= 0) return v;
    } catch (const std::exception&) {}
    throw memo::error("--" + std::string(what) + " expects a non-negative number, got '" + s + "'");
}

/// The arguments of one subcommand: `--flag`, `--key value` (or `--key=value`), and positionals,
/// read by the command's declared options; an option it does not declare is an error.
class args {
public:
    args(std::vector<std::string> raw, options declared) : declared_(std::move(declared)) {
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const auto& a = raw[i];
            if (a.rfind("--", 0) != 0 || a.size() <= 2) {
                positional_.push_back(a);
                continue;
            }
            const auto eq = a.find('=');
            std::string key = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
            const option* o = find(key);
            if (!o && key != "help") throw memo::error("unknown option --" + key);
            if (eq != std::string::npos) options_[key] = a.substr(eq + 1);
            else if (o && !o->value.empty()) {
                if (i + 1 >= raw.size()) throw memo::error("option --" + key + " needs a value");
                options_[key] = raw[++i];
            } else options_[key] = "";
        }
    }
    bool has(const std::string& k) const { return options_.count(k) != 0; }
    std::optional<std::string> get(const std::string& k) const {
        auto it = options_.find(k);
        return it == options_.end() ? std::nullopt : std::optional(it->second);
    }
    /// The option's value as given, or its declared default.
    std::string value(const std::string& k) const {
        if (auto v = get(k)) return *v;
        const option* o = find(k);
        if (!o) throw memo::error("--" + k + " is not an option of this command");
        return o->fallback;
    }
    std::uint64_t count(const std::string& k) const { return to_u64(value(k), k); }
    double number(const std::string& k) const { return to_double(value(k), k); }
    const std::vector<std::string>& positional() const { return positional_; }
    const std::map<std::string, std::string>& options() const { return options_; }
    /// Sets an option as if it had been given (a resumed campaign's stored ones).
    void set(const std::string& k, std::string v) { options_[k] = std::move(v); }

private:
    const option* find(const std::string& k) const {
        for (const auto& o : declared_)
            if (!o.name.empty() && o.name == k) return &o;
        return nullptr;
    }
    std::vector<option> declared_;
    std::map<std::string, std::string> options_;
    std::vector<std::string> positional_;
};

namespace detail {
/// `text` wrapped at `width` columns, its first line starting at column `first`, the others after
/// `indent` spaces; a '\n' in it starts a new line.
inline std::string wrap(const std::string& text, std::size_t first, std::size_t indent, std::size_t width) {
    std::string out, line;
    std::size_t at = first;  // the column the current line starts at
    auto flush = [&] {
        if (at != first || !out.empty()) out += "\n" + std::string(indent, ' ');
        out += line;
        line.clear();
        at = indent;
    };
    std::size_t start = 0;
    for (;;) {
        const auto nl = text.find('\n', start);
        const std::string para = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        for (std::size_t i = 0; i < para.size();) {
            const auto sp = para.find(' ', i);
            const std::string word = para.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
            if (!line.empty() && at + line.size() + 1 + word.size() > width) flush();
            line += (line.empty() ? "" : " ") + word;
            i = sp == std::string::npos ? para.size() : sp + 1;
        }
        flush();
        if (nl == std::string::npos) return out;
        start = nl + 1;
    }
}
}  // namespace detail

/// The options' lines of a --help: each option's name and value, then its help and default,
/// wrapped at 100 columns; a heading opens its group.
inline std::string options_help(const options& os) {
    constexpr std::size_t width = 100, widest = 19;
    auto label = [](const option& o) { return "--" + o.name + (o.value.empty() ? "" : " " + o.value); };
    std::size_t column = 0;
    for (const auto& o : os)
        if (!o.name.empty() && label(o).size() <= widest) column = std::max(column, label(o).size());
    column += 4;  // two spaces before, two after
    std::string out;
    for (const auto& o : os) {
        if (o.name.empty()) {
            out += "\n" + o.help + ":\n";
            continue;
        }
        std::string l = "  " + label(o);
        l += l.size() < column ? std::string(column - l.size(), ' ') : " ";
        const std::string text = o.help + (o.fallback.empty() ? "" : " (default " + o.fallback + ")");
        out += l + detail::wrap(text, l.size(), column, width) + "\n";
    }
    return out;
}

struct command {
    std::string name;
    std::string synopsis;  // "import-keras FILE [--json]"
    std::string about;     // what it does, before its options
    options opts;          // each option, declared once
    std::function<int(const args&)> run;
    std::string after = {};  // what --help says after the options (exit statuses, ...)

    /// The command's whole --help text.
    std::string help() const {
        std::string h = about;
        if (!opts.empty()) h += (opts.front().name.empty() ? "\n" : "\n\n") + options_help(opts);
        while (!h.empty() && h.back() == '\n') h.pop_back();
        if (!after.empty()) h += "\n\n" + after;
        return h;
    }
};

inline int dispatch(const std::vector<command>& commands, int argc, char** argv, const char* tool, const char* about) {
    auto usage = [&](std::FILE* out) {
        std::fprintf(out, "%s: %s\n\nusage: %s COMMAND [ARGS] (each command takes --help)\n\ncommands:\n", tool, about, tool);
        for (const auto& c : commands) std::fprintf(out, "  %-44s\n", c.synopsis.c_str());
    };
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string name = argv[1];
    if (argc == 3 && name == "help" && std::string(argv[2]) == "--markdown") {
        // The command reference of docs/, generated so that it cannot go stale.
        std::printf(
            "# %s command reference\n\n%s: %s. Every command takes `--help`, which prints its section below.\n"
            "This page is what `%s help --markdown` prints.\n",
            tool, tool, about, tool);
        for (const auto& c : commands) std::printf("\n## %s\n\n```\nusage: %s %s\n\n%s\n```\n", c.name.c_str(), tool, c.synopsis.c_str(), c.help().c_str());
        return 0;
    }
    if (name == "--help" || name == "-h" || name == "help") {
        usage(stdout);
        return 0;
    }
    for (const auto& c : commands) {
        if (c.name != name) continue;
        std::vector<std::string> raw(argv + 2, argv + argc);
        try {
            args a(raw, c.opts);
            if (a.has("help")) {
                std::printf("usage: %s %s\n\n%s\n", tool, c.synopsis.c_str(), c.help().c_str());
                return 0;
            }
            return c.run(a);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s: error: %s\n", tool, name.c_str(), e.what());
            return 1;
        }
    }
    std::fprintf(stderr, "%s: unknown command '%s'\n\n", tool, name.c_str());
    usage(stderr);
    return 2;
}

}  // namespace memo::fuzz::cli
