#pragma once
// memo-fuzz stats: one row per campaign, from its stats.json and its store (as klee-stats does for
// KLEE's output directories).
#include <filesystem>

#include <fmt/format.h>

#include "../campaign/generate.hpp"
#include "../coverage/checkpoint.hpp"
#include "../layers/all.hpp"
#include "../store/store.hpp"

#include "backends.hpp"
#include "cli.hpp"

namespace memo::fuzz::commands {

/// A stopped campaign's stats.json as far as its checkpoint tells: coverage and the memo counters.
inline memo::io::json stats_from_checkpoint(const memo::io::json& state) {
    memo::memo_coverage cov(memo::fuzz::setup().layers());
    restore_coverage(cov, state.at("coverage"));
    const auto stage = state.value("stage", memo::io::json::object());
    return {{"iterations", state.at("iteration")},
            {"coverage", memo::campaign::coverage_json(cov)},
            {"memo",
             {{"models_run", stage.value("runs", std::uint64_t{0})},
              {"hits", stage.value("hits", std::uint64_t{0})},
              {"saved_seconds", stage.value("saved_ms", 0.0) / 1000.0}}}};
}

/// One campaign's figures; a campaign stopped before its end has no stats.json, and its
/// checkpoint gives what it reached.
inline memo::io::json campaign_figures(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    const auto db = memo::store::campaign_store::file_in(dir);
    if (!fs::exists(db)) throw memo::error(dir.string() + ": not a campaign directory (no store.db)");
    memo::store::campaign_store st(db);
    const bool finished = fs::exists(dir / "stats.json");
    memo::io::json s = memo::io::json::object();
    if (finished) s = memo::io::parse_json_file((dir / "stats.json").string());
    else if (const auto cp = st.load_checkpoint()) s = stats_from_checkpoint(cp->state);
    const auto models = st.generated_count();
    memo::io::json f = {{"campaign", dir.string()},
                        {"finished", finished},
                        {"iterations", s.value("iterations", std::uint64_t{0})},
                        {"models", models},
                        {"unique_models", st.unique_models()},
                        {"executions", st.execution_count()},
                        {"divergences", st.divergence_count()},
                        {"store_bytes", st.bytes()},
                        {"bytes_per_model", models ? static_cast<double>(st.bytes()) / static_cast<double>(models) : 0.0}};
    const auto memo_part = s.value("memo", memo::io::json::object());
    f["models_run"] = memo_part.value("models_run", std::uint64_t{0});
    f["memo_hits"] = memo_part.value("hits", std::uint64_t{0});
    f["saved_seconds"] = memo_part.value("saved_seconds", 0.0);
    // Distinct bugs as the directory holds them (stored before the campaign goes on, kill or not).
    for (const char* k : {"crash", "nan", "inconsistency", "shape"}) {
        std::int64_t n = 0;
        if (fs::is_directory(dir / "bugs" / k))
            for (const auto& b : fs::directory_iterator(dir / "bugs" / k)) n += fs::exists(b.path() / "bug.json");
        f[k] = n;
    }
    f["root_causes"] = memo::store::bug_store(dir).root_cause_count();
    const auto cov = s.value("coverage", memo::io::json::object());
    for (const char* k : {"layer_type", "layer_pair", "layer_param", "layer_input", "graph_pair_connectable"}) {
        const auto c = cov.value(k, memo::io::json::object());
        f[k] = fmt::format("{}/{}", c.value("covered", 0), c.value("total", 0));
    }
    return f;
}

inline int stats(const cli::args& a) {
    if (a.positional().empty()) throw memo::error("stats needs at least one campaign directory");
    std::vector<memo::io::json> rows;
    for (const auto& d : a.positional()) rows.push_back(campaign_figures(d));
    if (a.has("json")) {
        fmt::print("{}\n", memo::io::json(rows).dump(2));
        return 0;
    }
    struct column {
        const char* head;
        std::function<std::string(const memo::io::json&)> cell;
    };
    auto num = [](const char* k) { return [k](const memo::io::json& r) { return fmt::format("{}", r.at(k).get<std::int64_t>()); }; };
    const std::vector<column> cols{
        {"campaign", [](const memo::io::json& r) { return r.at("campaign").get<std::string>() + (r.at("finished").get<bool>() ? "" : " (stopped)"); }},
        {"models", num("models")},
        {"unique", num("unique_models")},
        {"executions", num("executions")},
        {"runs", num("models_run")},
        {"memo hits", num("memo_hits")},
        {"saved s", [](const memo::io::json& r) { return fmt::format("{:.1f}", r.at("saved_seconds").get<double>()); }},
        {"crash", num("crash")},
        {"nan", num("nan")},
        {"incons", num("inconsistency")},
        {"shape", num("shape")},
        {"causes", num("root_causes")},
        {"diverge", num("divergences")},
        {"type", [](const memo::io::json& r) { return r.at("layer_type").get<std::string>(); }},
        {"pair", [](const memo::io::json& r) { return r.at("layer_pair").get<std::string>(); }},
        {"param", [](const memo::io::json& r) { return r.at("layer_param").get<std::string>(); }},
        {"input", [](const memo::io::json& r) { return r.at("layer_input").get<std::string>(); }},
        {"graph pairs", [](const memo::io::json& r) { return r.at("graph_pair_connectable").get<std::string>(); }},
        {"store MiB", [](const memo::io::json& r) { return fmt::format("{:.2f}", r.at("store_bytes").get<double>() / (1 << 20)); }},
        {"B/model", [](const memo::io::json& r) { return fmt::format("{:.0f}", r.at("bytes_per_model").get<double>()); }},
    };
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> width;
    for (const auto& c : cols) width.push_back(std::string_view(c.head).size());
    for (const auto& r : rows) {
        cells.emplace_back();
        for (std::size_t i = 0; i < cols.size(); ++i) {
            cells.back().push_back(cols[i].cell(r));
            width[i] = std::max(width[i], cells.back().back().size());
        }
    }
    auto rule = [&] {
        std::string s = "+";
        for (auto w : width) s += std::string(w + 2, '-') + "+";
        fmt::print("{}\n", s);
    };
    auto line = [&](auto&& cell) {
        std::string s = "|";
        for (std::size_t i = 0; i < cols.size(); ++i) s += i ? fmt::format(" {:>{}} |", cell(i), width[i]) : fmt::format(" {:<{}} |", cell(i), width[i]);
        fmt::print("{}\n", s);
    };
    rule();
    line([&](std::size_t i) { return std::string(cols[i].head); });
    rule();
    for (const auto& row : cells) line([&](std::size_t i) { return row[i]; });
    rule();
    return 0;
}

inline cli::command stats_command() {
    return {"stats",
            "stats DIR [DIR...] [--json]",
            "Prints a table of campaigns, one row each, from their stats.json and store.db: models generated,\n"
            "unique models, executions stored, models run on the backends, memo hits (models judged before,\n"
            "not run again) and the backends' time they saved, distinct bugs by kind and their root causes\n"
            "(bugs whose minimal models show one fault: docs/findings.md), divergences found by\n"
            "memo-fuzz replay, coverage per criterion, the store's size and its bytes per model. A campaign\n"
            "stopped before its end is marked (stopped) and counted up to its last checkpoint.",
            {cli::flag("json", "the same figures as a JSON array")},
            stats};
}

}  // namespace memo::fuzz::commands
