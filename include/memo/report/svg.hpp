#pragma once
// Line charts as inline SVG, drawn here so that a report needs no script and no network: axes with
// round ticks, one path per series, a legend. Used by report.html and `memo-fuzz compare`.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "html.hpp"

namespace memo::report {

struct series {
    std::string name;
    std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct chart_options {
    std::string title, x_label, y_label;
    double y_max = 0;  // 0: from the data
    int width = 560, height = 280;
};

namespace detail {

/// A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over span.
inline double tick_step(double span, int ticks = 5) {
    if (!(span > 0)) return 1;
    const double raw = span / ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

inline std::string tick_label(double v) {
    if (std::abs(v) >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
    if (std::abs(v) >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
    return fmt::format("{:.4g}", v);
}

inline constexpr const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

}  // namespace detail

/// One chart; every series is one <path d="M...">. Series without points are listed, not drawn.
inline std::string line_chart(const std::vector<series>& all, const chart_options& o) {
    // The legend sits under the plot, a few entries per row, when there is more than one series.
    const double left = 58, right = 12, top = 30, entry = 170;
    const auto per_row = static_cast<std::size_t>(std::max(1.0, (o.width - left - right) / entry));
    const std::size_t legend_rows = all.size() > 1 ? (all.size() + per_row - 1) / per_row : 0;
    const double bottom = 42, height = o.height + (legend_rows ? 6 + 16.0 * static_cast<double>(legend_rows) : 0);
    const double w = o.width - left - right, h = o.height - top - bottom;
    double x_max = 0, y_max = o.y_max;
    for (const auto& s : all)
        for (const auto& [x, y] : s.points) {
            if (std::isfinite(x)) x_max = std::max(x_max, x);
            if (o.y_max <= 0 && std::isfinite(y)) y_max = std::max(y_max, y);
        }
    const double xs = detail::tick_step(x_max), ys = detail::tick_step(y_max);
    x_max = std::max(xs, std::ceil(x_max / xs - 1e-9) * xs);
    y_max = std::max(ys, std::ceil(y_max / ys - 1e-9) * ys);
    auto px = [&](double x) { return left + w * std::clamp(x / x_max, 0.0, 1.0); };
    auto py = [&](double y) { return top + h * (1 - std::clamp(y / y_max, 0.0, 1.0)); };

    std::string s = fmt::format(R"svg(<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" role="img">)svg",
                                o.width, height, o.width, height);
    s += fmt::format(R"svg(<title>{}</title><text x="{}" y="18" class="title">{}</text>)svg", escape(o.title), left, escape(o.title));
    for (double v = 0; v <= y_max + ys / 2; v += ys)
        s += fmt::format(
            R"svg(<line class="grid" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/><text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)svg",
            left, left + w, py(v), py(v), left - 6, py(v) + 4, detail::tick_label(v));
    for (double v = 0; v <= x_max + xs / 2; v += xs)
        s += fmt::format(R"svg(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)svg", px(v), top + h + 16, detail::tick_label(v));
    s += fmt::format(R"svg(<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>)svg", left, top, w, h);
    s += fmt::format(R"svg(<text class="label" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)svg", left + w / 2, o.height - 6, escape(o.x_label));
    s +=
        fmt::format(R"svg(<text class="label" transform="translate(14 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)svg", top + h / 2, escape(o.y_label));
    for (std::size_t i = 0; i < all.size(); ++i) {
        const char* colour = detail::palette[i % std::size(detail::palette)];
        std::string d;
        for (const auto& [x, y] : all[i].points) {
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            d += fmt::format("{}{:.1f} {:.1f}", d.empty() ? "M" : " L", px(x), py(y));
        }
        if (!d.empty()) s += fmt::format(R"svg(<path class="series" d="{}" stroke="{}"><title>{}</title></path>)svg", d, colour, escape(all[i].name));
        if (!legend_rows) continue;
        std::string name = all[i].name.size() > 26 ? all[i].name.substr(0, 25) + "~" : all[i].name;
        const double lx = left + entry * static_cast<double>(i % per_row), ly = o.height + 12 + 16.0 * static_cast<double>(i / per_row);
        s += fmt::format(
            R"svg(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="3"/><text class="legend" x="{:.1f}" y="{:.1f}">{}</text>)svg",
            lx, lx + 18, ly - 4, ly - 4, colour, lx + 24, ly, escape(name));
    }
    return s + "</svg>";
}

}  // namespace memo::report
