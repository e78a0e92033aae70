#pragma once
// report.html: a campaign at a glance, as one self-contained page (no script, no network):
//   the run's figures, coverage over time for each criterion, models per second over time,
//   each backend's runs, the bug table (with links to each reproducer and its ONNX file), and the
//   coverage still missing (uncovered pairs and parameter values, grouped by layer).
// compare_html draws several campaigns' coverage curves on one chart per criterion.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "../coverage/checkpoint.hpp"
#include "../store/store.hpp"
#include "campaign_data.hpp"
#include "html.hpp"
#include "svg.hpp"

namespace memo::report {

namespace detail {

/// A column of coverage.csv against its time column, as a chart series.
inline series csv_series(const csv_table& t, std::string_view column, std::string name) {
    series s{std::move(name), {}};
    const int x = t.column("seconds"), y = t.column(column);
    if (x < 0 || y < 0) return s;
    for (const auto& r : t.rows) s.points.emplace_back(r[static_cast<std::size_t>(x)], r[static_cast<std::size_t>(y)]);
    return s;
}

/// The rate of a cumulative column: its increase over each interval, per second.
inline series rate_series(const csv_table& t, std::string_view column, std::string name) {
    const series cum = csv_series(t, column, std::move(name));
    series s{cum.name, {}};
    for (std::size_t i = 1; i < cum.points.size(); ++i) {
        const double dt = cum.points[i].first - cum.points[i - 1].first;
        if (dt > 1e-3) s.points.emplace_back(cum.points[i].first, (cum.points[i].second - cum.points[i - 1].second) / dt);
    }
    return s;
}

inline std::string number(const io::json& j, const char* key, const char* fmt_spec = "{}") {
    if (!j.contains(key) || j[key].is_null()) return "";
    if (j[key].is_number_float()) return fmt::format(fmt::runtime(fmt_spec), j[key].get<double>());
    if (j[key].is_number()) return fmt::format("{}", j[key].get<std::int64_t>());
    return escape(j[key].is_string() ? j[key].get<std::string>() : j[key].dump());
}

inline std::string join(const io::json& list) {
    std::string s;
    if (!list.is_array()) return s;
    for (const auto& x : list) s += (s.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
    return s;
}

inline std::string summary_section(const campaign_data& c) {
    if (!c.stats)
        return "<p class=\"muted\">No stats.json: the campaign is still running, or was stopped before its end. "
               "What follows is what it wrote so far.</p>";
    const auto& s = *c.stats;
    std::string h = "<table class=\"summary\">";
    auto row = [&](const char* label, const std::string& v) {
        if (!v.empty()) h += fmt::format("<tr><th>{}</th><td>{}</td></tr>", label, v);
    };
    row("backends", escape(join(s.value("backends", io::json::array()))));
    row("seconds", number(s, "seconds", "{:.1f}"));
    row("seed", number(s, "seed"));
    row("selector, operators", escape(s.value("selector", std::string()) + ", " + s.value("operators", std::string())));
    row("models generated", number(s, "models_generated") + " (" + number(s, "models_per_second", "{:.0f}") + "/s)");
    row("valid, diverse", number(s, "models_valid") + ", " + number(s, "models_diverse"));
    row("models executed", number(s, "models_executed"));
    if (s.contains("bugs") && s["bugs"].is_object()) {
        std::string b;
        for (const auto& [k, v] : s["bugs"].items())
            if (k.rfind("unique_", 0) == 0) b += (b.empty() ? "" : ", ") + fmt::format("{} {}", v.dump(), escape(k.substr(7)));
        if (s["bugs"].contains("root_causes")) b += fmt::format("; {} root causes", s["bugs"]["root_causes"].dump());
        row("distinct bugs", b);
    }
    return h + "</table>";
}

inline std::string coverage_section(const campaign_data& c, const memo_coverage& cov) {
    std::string h = "<h2>Coverage over time</h2><table><tr><th>criterion</th><th>covered</th><th>total</th><th>%</th></tr>";
    for (auto k : all_criteria) {
        const std::size_t covered = cov.covered(k), total = cov.total(k);
        h += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1f}</td></tr>", name_of(k), covered, total,
                         total ? 100.0 * static_cast<double>(covered) / static_cast<double>(total) : 0.0);
    }
    // The criteria of a metric beside MEMO's (--coverage memo,rnn-state), as stats.json has them.
    // And the criteria known only from runs (layer_input_range), as stats.json's coverage_executed has them.
    std::vector<std::string> extra;
    for (const char* section : {"coverage", "coverage_executed"})
        if (c.stats && c.stats->contains(section))
            for (const auto& [name, v] : (*c.stats)[section].items()) {
                if (std::any_of(all_criteria.begin(), all_criteria.end(), [&](criterion k) { return name_of(k) == name; })) continue;
                if (std::find(extra.begin(), extra.end(), name) != extra.end()) continue;
                extra.push_back(name);
                const double covered = v.value("covered", 0.0), total = v.value("total", 0.0);
                h += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1f}</td></tr>", escape(name),
                                 v.value("covered", io::json()).dump(), v.value("total", io::json()).dump(), total > 0 ? 100.0 * covered / total : 0.0);
            }
    h += "</table><div class=\"charts\">";
    for (auto k : all_criteria) {
        chart_options o{std::string(name_of(k)), "seconds", "items covered"};
        o.width = 380, o.height = 240;
        h += line_chart({csv_series(c.coverage, name_of(k), std::string(name_of(k)))}, o);
    }
    for (const auto& name : extra) {
        if (c.coverage.column(name) < 0) continue;
        chart_options o{name, "seconds", "covered"};
        o.width = 380, o.height = 240;
        h += line_chart({csv_series(c.coverage, name, name)}, o);
    }
    h += "</div><h2>Models per second</h2><div class=\"charts\">";
    std::vector<series> rates;
    for (const char* col : {"models", "valid", "executed"})
        if (c.coverage.column(col) >= 0) rates.push_back(rate_series(c.coverage, col, col));
    h += line_chart(rates, {"models per second", "seconds", "models / s"});
    return h + "</div>";
}

inline std::string executions_section(const campaign_data& c) {
    if (!c.stats || !c.stats->contains("executions") || (*c.stats)["executions"].empty()) return "";
    std::string h =
        "<h2>Backends</h2><table><tr><th>backend</th><th>runs</th><th>status</th><th>mean ms</th><th>peak MiB</th><th>restarts</th>"
        "<th>declined</th><th>why (layer in dtype: runs)</th></tr>";
    for (const auto& [name, e] : (*c.stats)["executions"].items()) {
        std::string st, why;
        const auto status = e.value("status", io::json::object());  // named: a temporary would die before the loop
        for (const auto& [k, v] : status.items()) st += (st.empty() ? "" : ", ") + k + " " + v.dump();
        const auto declined = e.value("declined", io::json::object());
        for (const auto& r : declined.value("reasons", io::json::array()))
            why += (why.empty() ? "" : "; ") + r.value("reason", std::string()) + ": " + r.value("runs", io::json(0)).dump();
        h += fmt::format(
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.0f}</td><td class=\"n\">{}</td>"
            "<td class=\"n\">{:.1f} %</td><td>{}</td></tr>",
            escape(name), e.value("runs", 0), escape(st), e.value("ms_mean", 0.0), e.value("peak_kb_max", 0.0) / 1024, e.value("restarts", 0),
            100.0 * declined.value("share", 0.0), escape(why));
    }
    return h + "</table>";
}

inline std::string bugs_section(const campaign_data& c) {
    std::string h = fmt::format("<h2>Bugs ({})</h2>", c.bugs.size());
    if (c.bugs.empty()) return h + "<p class=\"muted\">No bug was found.</p>";
    h += "<table class=\"bugs\"><tr><th>kind</th><th>backends</th><th>layer</th><th>pair</th><th>parameters</th>"
         "<th>first seen</th><th>count</th><th>message</th><th>files</th></tr>";
    for (const auto& b : c.bugs) {
        const auto& d = b.data;
        const auto where = d.value("localisation", io::json::object());
        const auto first = d.value("first_seen", io::json::object());
        std::string params;
        const auto ps = where.value("params", io::json::object());
        for (const auto& [k, v] : ps.items()) params += (params.empty() ? "" : ", ") + k + "=" + v.dump();
        std::string backends = join(d.value("culprits", io::json::array()));
        if (const auto peers = join(d.value("peers", io::json::array())); !peers.empty()) backends += " vs " + peers;
        const std::string base = escape(b.path) + "/";
        std::string files =
            fmt::format("<a href=\"{0}repro.sh\">repro.sh</a> <a href=\"{0}minimal.json\">minimal.json</a> <a href=\"{0}bug.json\">bug.json</a>", base);
        if (b.has_onnx) files += fmt::format(" <a href=\"{0}minimal.onnx\">minimal.onnx</a> <a href=\"{0}model.onnx\">model.onnx</a>", base);
        const auto reproducers = d.value("reproducers", io::json::object());  // a named json: items() refers to it
        for (const auto& [backend, r] : reproducers.items())
            if (r.is_object() && r.contains("script"))
                files += fmt::format(" <a href=\"{}{}\">{}</a>{}", base, escape(r["script"].get<std::string>()), escape(backend),
                                     r.value("shows", false) ? "" : " (shows no fault)");
        std::string message = d.value("message", std::string());
        if (message.size() > 160) message = message.substr(0, 157) + "...";
        h += fmt::format(
            "<tr class=\"bug\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"n\">{:.1f} s<br>iteration {}</td>"
            "<td class=\"n\">{}</td><td class=\"mono\">{}</td><td>{}</td></tr>",
            escape(b.kind), escape(backends), escape(where.value("layer", std::string())), escape(where.value("pair", std::string())), escape(params),
            first.value("seconds", 0.0), first.value("iteration", std::uint64_t{0}), d.value("count", 1), escape(message), files);
    }
    return h + "</table>";
}

/// The stored bugs by root cause (oracle/root_cause.hpp): one row each, with its signatures.
inline std::string root_causes_section(const campaign_data& c) {
    if (c.bugs.empty()) return {};
    std::map<std::string, std::vector<const bug_entry*>> by;
    for (const auto& b : c.bugs) by[b.data.value("root_cause", b.kind + "/" + b.signature)].push_back(&b);
    std::string h = fmt::format(
        "<h2>Root causes ({})</h2><p class=\"muted\">Bugs whose minimal models show one fault: the same kind and culprits, the "
        "same operation whatever its dimensionality, dtype and error text.</p>"
        "<table class=\"bugs\"><tr><th>root cause</th><th>kind</th><th>backends</th><th>sightings</th><th>bugs</th></tr>",
        by.size());
    for (const auto& [cause, bugs] : by) {
        std::string links;
        std::int64_t sightings = 0;
        for (const auto* b : bugs) {
            links += fmt::format("{}<a href=\"{}/bug.json\">{}</a>", links.empty() ? "" : " ", escape(b->path), escape(b->signature));
            sightings += b->data.value("count", std::int64_t{1});
        }
        h += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"mono\">{}</td></tr>", escape(cause),
                         escape(bugs.front()->kind), escape(join(bugs.front()->data.value("culprits", io::json::array()))), sightings, links);
    }
    return h + "</table>";
}

/// The items of one criterion not covered, grouped by their first layer class.
inline std::string missing_group(const memo_coverage& cov, criterion k, const char* title) {
    const universe& u = cov.space();
    std::map<std::string, std::vector<std::string>> by_layer;
    std::size_t n = 0;
    for (std::size_t i = 0; i < cov.total(k); ++i) {
        if (cov.has(k, i)) continue;
        const std::string d = u.describe(k, i);
        // describe() names the first class, then " -> B", ".param=value" or " input ...".
        const auto cut = std::min({d.find(" -> "), d.find('.'), d.find(" input ")});
        by_layer[d.substr(0, cut)].push_back(cut == std::string::npos ? d : d.substr(cut));
        ++n;
    }
    std::string h = fmt::format("<h3>{} ({} of {} missing)</h3>", title, n, cov.total(k));
    for (const auto& [layer, items] : by_layer) {
        std::string list;
        for (const auto& x : items) list += (list.empty() ? "" : ", ") + escape(x);
        h += fmt::format("<details><summary>{} ({})</summary><p class=\"mono\">{}</p></details>", escape(layer), items.size(), list);
    }
    return h;
}

inline std::string missing_section(const memo_coverage& cov) {
    return "<h2>Coverage still missing</h2>" + missing_group(cov, criterion::layer_type, "Layer types") +
           missing_group(cov, criterion::layer_pair_connectable, "Connectable layer pairs") + missing_group(cov, criterion::layer_param, "Parameter values") +
           missing_group(cov, criterion::layer_input, "Layer inputs") + missing_group(cov, criterion::graph_pair_connectable, "Connectable graph pairs");
}

}  // namespace detail

/// The page of one campaign, whose coverage is `cov`.
inline std::string campaign_html(const campaign_data& c, const memo_coverage& cov) {
    std::string body = fmt::format("<h1>memo campaign: {}</h1>", escape(c.name));
    body += detail::summary_section(c) + detail::coverage_section(c, cov) + detail::executions_section(c) + detail::root_causes_section(c) +
            detail::bugs_section(c);
    body += detail::missing_section(cov);
    if (c.unreadable) body += fmt::format("<p class=\"muted\">{} files of the directory could not be read and are left out.</p>", c.unreadable);
    return page("memo campaign " + c.name, body);
}

/// Writes DIR/report.html (atomically) for a campaign whose coverage is `cov`; returns its path.
inline std::filesystem::path write_report(const std::filesystem::path& dir, const memo_coverage& cov) {
    const auto c = read_campaign(dir);
    const auto path = dir / "report.html";
    io::write_file(path.string(), campaign_html(c, cov));
    return path;
}

/// The same from what the directory holds: the coverage its store's checkpoint saved, or, in a
/// directory without one, the coverage recomputed from seeds/ and queue/.
inline std::filesystem::path write_report(const std::filesystem::path& dir, const registry& reg) {
    auto c = read_campaign(dir);
    memo_coverage cov(reg);
    std::optional<store::checkpoint> cp;
    if (std::filesystem::exists(store::campaign_store::file_in(dir))) cp = store::campaign_store(store::campaign_store::file_in(dir)).load_checkpoint();
    if (cp && cp->state.contains("coverage")) {
        restore_coverage(cov, cp->state.at("coverage"));
    } else {
        cov = replay_coverage(dir, reg, &c.unreadable);
    }
    const auto path = dir / "report.html";
    io::write_file(path.string(), campaign_html(c, cov));
    return path;
}

/// Several campaigns' coverage curves, one chart per criterion, and their final figures.
inline std::string compare_html(const std::vector<campaign_data>& cs) {
    std::string body = "<h1>memo campaigns compared</h1><table><tr><th>campaign</th><th>seconds</th><th>models</th>";
    for (auto k : all_criteria) body += fmt::format("<th>{}</th>", name_of(k));
    body += "<th>distinct bugs</th></tr>";
    for (const auto& c : cs) {
        const io::json s = c.stats.value_or(io::json::object());
        body += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>", escape(c.name), detail::number(s, "seconds", "{:.1f}"),
                            detail::number(s, "models_generated"));
        for (auto k : all_criteria) {
            const auto j = s.value("coverage", io::json::object()).value(std::string(name_of(k)), io::json::object());
            body += fmt::format("<td class=\"n\">{} / {}</td>", j.value("covered", 0), j.value("total", 0));
        }
        body += fmt::format("<td class=\"n\">{}</td></tr>", c.bugs.size());
    }
    body += "</table><h2>Coverage over time</h2><div class=\"charts\">";
    for (auto k : all_criteria) {
        std::vector<series> lines;
        for (const auto& c : cs) lines.push_back(detail::csv_series(c.coverage, name_of(k), c.name));
        body += line_chart(lines, {std::string(name_of(k)), "seconds", "items covered"});
    }
    std::vector<series> rates;
    for (const auto& c : cs) rates.push_back(detail::rate_series(c.coverage, "models", c.name));
    body += line_chart(rates, {"models per second", "seconds", "models / s"});
    return page("memo campaigns compared", body + "</div>");
}

}  // namespace memo::report
