#pragma once
// memo-fuzz report and compare: a campaign directory's report.html, and several campaigns' coverage
// curves on one page.
#include <filesystem>
#include <vector>

#include <fmt/core.h>

#include "../io/json.hpp"
#include "../layers/all.hpp"
#include "../report/report.hpp"

#include "backends.hpp"
#include "cli.hpp"

namespace memo::fuzz::commands {

inline int report(const cli::args& a) {
    if (a.positional().size() != 1) throw memo::error("report needs one campaign DIR");
    const auto path = memo::report::write_report(a.positional()[0], memo::fuzz::setup().layers());
    fmt::print("{}\n", path.string());
    return 0;
}

inline int compare(const cli::args& a) {
    if (a.positional().empty()) throw memo::error("compare needs at least one campaign DIR");
    std::vector<memo::report::campaign_data> cs;
    for (const auto& d : a.positional()) cs.push_back(memo::report::read_campaign(d));
    const std::string out = a.value("out");
    memo::io::write_file(out, memo::report::compare_html(cs));
    fmt::print("{}\n", out);
    return 0;
}

inline std::vector<cli::command> report_commands() {
    return {{"report",
             "report DIR",
             "Writes DIR/report.html again from what the campaign directory holds (every campaign writes it\n"
             "at its end; this also reports a campaign that is running or was stopped): the run's figures,\n"
             "coverage over time for each criterion, models per second, each backend's runs, the bug table\n"
             "with links to each reproducer and its ONNX files, and the coverage still missing (uncovered\n"
             "layer types, connectable pairs, parameter values and inputs, grouped by layer). The page is\n"
             "self-contained: inline SVG charts, no script, nothing from the network. Prints its path.",
             {},
             report},
            {"compare",
             "compare DIR [DIR...] [--out FILE]",
             "Draws several campaigns' coverage over time on one chart per criterion, their models per second,\n"
             "and a table of their final figures, in one self-contained HTML page (MEMO's coverage-over-time\n"
             "comparisons: say, --selector mh against random, or --operators memo against lemon).",
             {cli::valued("out", "FILE", "the page to write", "compare.html")},
             compare}};
}

}  // namespace memo::fuzz::commands
