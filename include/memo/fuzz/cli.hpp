#pragma once
// A small command-line toolkit: subcommands, each with --help, flags and positional arguments.
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../engine/error.hpp"

namespace memo::fuzz::cli {

/// The arguments of one subcommand: `--flag`, `--key value`, and positionals.
class args {
public:
    args(std::vector<std::string> raw, std::vector<std::string> flags_with_values) : with_values_(std::move(flags_with_values)) {
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const auto& a = raw[i];
            if (a.rfind("--", 0) == 0 && a.size() > 2) {
                auto eq = a.find('=');
                std::string key = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
                if (eq != std::string::npos) options_[key] = a.substr(eq + 1);
                else if (takes_value(key)) {
                    if (i + 1 >= raw.size()) throw memo::error("option --" + key + " needs a value");
                    options_[key] = raw[++i];
                } else options_[key] = "";
            } else positional_.push_back(a);
        }
    }
    bool has(const std::string& k) const { return options_.count(k) != 0; }
    std::optional<std::string> get(const std::string& k) const {
        auto it = options_.find(k);
        return it == options_.end() ? std::nullopt : std::optional(it->second);
    }
    std::string get_or(const std::string& k, std::string fallback) const { return get(k).value_or(std::move(fallback)); }
    const std::vector<std::string>& positional() const { return positional_; }
    const std::map<std::string, std::string>& options() const { return options_; }
    /// Sets an option as if it had been given (a resumed campaign's stored ones).
    void set(const std::string& k, std::string v) { options_[k] = std::move(v); }
    /// Fails on options this command does not know (typos must not pass silently).
    void only(const std::vector<std::string>& known) const {
        for (const auto& [k, v] : options_) {
            bool ok = k == "help";
            for (const auto& n : known) ok = ok || n == k;
            if (!ok) throw memo::error("unknown option --" + k);
        }
    }

private:
    bool takes_value(const std::string& k) const {
        for (const auto& w : with_values_)
            if (w == k) return true;
        return false;
    }
    std::vector<std::string> with_values_;
    std::map<std::string, std::string> options_;
    std::vector<std::string> positional_;
};

struct command {
    std::string name;
    std::string synopsis;  // "import-keras FILE [--json]"
    std::string help;      // what it does, its options
    std::vector<std::string> value_options;
    std::function<int(const args&)> run;
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
        for (const auto& c : commands) std::printf("\n## %s\n\n```\nusage: %s %s\n\n%s\n```\n", c.name.c_str(), tool, c.synopsis.c_str(), c.help.c_str());
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
            args a(raw, c.value_options);
            if (a.has("help")) {
                std::printf("usage: %s %s\n\n%s\n", tool, c.synopsis.c_str(), c.help.c_str());
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
