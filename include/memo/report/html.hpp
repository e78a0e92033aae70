#pragma once
// The pieces of a self-contained HTML page: escaping, and the page frame with its inline style
// (no script, no external resource: a report opens offline, from any directory).
#include <string>
#include <string_view>

namespace memo::report {

/// Text made safe for HTML content and attribute values.
inline std::string escape(std::string_view s) {
    std::string r;
    r.reserve(s.size());
    for (char c : s) switch (c) {
            case '&': r += "&amp;"; break;
            case '<': r += "&lt;"; break;
            case '>': r += "&gt;"; break;
            case '"': r += "&quot;"; break;
            case '\'': r += "&#39;"; break;
            default: r += c;
        }
    return r;
}

/// A whole page around `body`.
inline std::string page(std::string_view title, std::string_view body) {
    std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
    s += escape(title);
    s += R"(</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1200px; padding: 0 16px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { background: #fff; border: 1px solid #e4e4e4; }
svg .title { font-size: 13px; font-weight: 600; } svg .tick { font-size: 10px; fill: #555; } svg .label { font-size: 11px; fill: #333; }
svg .legend { font-size: 10px; } svg .grid { stroke: #eee; } svg .frame { fill: none; stroke: #999; }
svg .series { fill: none; stroke-width: 2; stroke-linejoin: round; }
code, .mono { font-family: ui-monospace, monospace; font-size: 12px; } .muted { color: #777; }
details { margin: 2px 0; } summary { cursor: pointer; }
</style>
</head>
<body>
)";
    s += body;
    return s + "\n</body>\n</html>\n";
}

}  // namespace memo::report
