#include "tools/report/percentile_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/planning/plan_format.hpp"
#include "tools/report/html_report.hpp"

namespace ttsim::report {

namespace {

// Drawing area in SVG user units (the page scales the whole figure to its width).
constexpr double kWidth = 900, kHeight = 420;
constexpr double kLeft = 84, kRight = 24, kTop = 44, kBottom = 56;
// Okabe-Ito colours (distinguishable with colour-blindness); the ring of the chosen point is red, apart from them.
constexpr const char* kColours[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00"};

std::string escape(const std::string& text) { return escape_html(text); }

std::string n(double value) { return fmt::format("{:.1f}", value); }

struct Axis {
    double low, high;        // log of the data range, padded
    double from, to;         // pixel range
    double at(double log_value) const { return from + (log_value - low) / (high - low) * (to - from); }
};

Axis padded(double low, double high, double from, double to) {
    if (high - low < 1e-9) { low -= 0.5; high += 0.5; }
    const double pad = 0.04 * (high - low);
    return {low - pad, high + pad, from, to};
}

}  // namespace

std::string percentile_chart_svg(const PercentileChart& chart) {
    double min_gpus = INFINITY, max_gpus = 0, min_minutes = INFINITY, max_minutes = 0;
    for (const auto& s : chart.series)
        for (const auto& p : s.points) {
            min_gpus = std::min(min_gpus, double(p.gpus));
            max_gpus = std::max(max_gpus, double(p.gpus));
            min_minutes = std::min(min_minutes, p.p10_minutes);
            max_minutes = std::max(max_minutes, p.p90_minutes);
        }
    if (max_gpus <= 0 || !(min_minutes > 0)) return "";
    if (chart.limit_minutes && *chart.limit_minutes > 0) {
        min_minutes = std::min(min_minutes, *chart.limit_minutes);
        max_minutes = std::max(max_minutes, *chart.limit_minutes);
    }
    const Axis x = padded(std::log2(min_gpus), std::log2(max_gpus), kLeft, kWidth - kRight);
    const Axis y = padded(std::log10(min_minutes), std::log10(max_minutes), kHeight - kBottom, kTop);

    std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" "
                                  "font-size=\"13\">\n", kWidth, kHeight);
    svg += "<rect x=\"0\" y=\"0\" width=\"" + n(kWidth) + "\" height=\"" + n(kHeight) + "\" fill=\"white\"/>\n";
    svg += "<text x=\"" + n(kWidth / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(chart.title) + "</text>\n";
    // Grid and ticks: every power of two on x (every other when crowded), 1-2-5 steps on y.
    const int first = static_cast<int>(std::ceil(x.low)), last = static_cast<int>(std::floor(x.high));
    const int step = last - first > 12 ? 2 : 1;
    for (int e = first; e <= last; e += step) {
        const double px = x.at(e);
        svg += "<line x1=\"" + n(px) + "\" y1=\"" + n(kTop) + "\" x2=\"" + n(px) + "\" y2=\"" + n(kHeight - kBottom) +
               "\" stroke=\"#e3e6ec\"/>\n<text x=\"" + n(px) + "\" y=\"" + n(kHeight - kBottom + 18) +
               "\" text-anchor=\"middle\">" + std::to_string(1 << e) + "</text>\n";
    }
    for (int decade = static_cast<int>(std::floor(y.low)) - 1; decade <= static_cast<int>(std::ceil(y.high)); ++decade)
        for (double m : {1.0, 2.0, 5.0}) {
            const double value = m * std::pow(10.0, decade), l = std::log10(value);
            if (l < y.low || l > y.high) continue;
            const double py = y.at(l);
            svg += "<line x1=\"" + n(kLeft) + "\" y1=\"" + n(py) + "\" x2=\"" + n(kWidth - kRight) + "\" y2=\"" + n(py) +
                   "\" stroke=\"#e3e6ec\"/>\n<text x=\"" + n(kLeft - 6) + "\" y=\"" + n(py + 4) + "\" text-anchor=\"end\">" +
                   escape(planning::format_duration(value)) + "</text>\n";
        }
    svg += "<rect x=\"" + n(kLeft) + "\" y=\"" + n(kTop) + "\" width=\"" + n(kWidth - kLeft - kRight) + "\" height=\"" +
           n(kHeight - kTop - kBottom) + "\" fill=\"none\" stroke=\"#5b6475\"/>\n";
    svg += "<text x=\"" + n((kLeft + kWidth - kRight) / 2) + "\" y=\"" + n(kHeight - 12) +
           "\" text-anchor=\"middle\">GPUs (log scale)</text>\n";
    svg += "<text transform=\"translate(16," + n((kTop + kHeight - kBottom) / 2) +
           ") rotate(-90)\" text-anchor=\"middle\">time-to-train (log scale)</text>\n";

    if (chart.limit_minutes && *chart.limit_minutes > 0) {
        const double py = y.at(std::log10(*chart.limit_minutes));
        svg += "<line x1=\"" + n(kLeft) + "\" y1=\"" + n(py) + "\" x2=\"" + n(kWidth - kRight) + "\" y2=\"" + n(py) +
               "\" stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n<text x=\"" + n(kWidth - kRight - 6) +
               "\" y=\"" + n(py - 6) + "\" text-anchor=\"end\" fill=\"#c0392b\">" + escape(chart.limit_label) + "</text>\n";
    }
    double legend_y = kTop + 18;
    for (std::size_t k = 0; k < chart.series.size(); ++k) {
        const std::string colour = kColours[k % std::size(kColours)];
        std::vector<PercentilePoint> points = chart.series[k].points;
        std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.gpus < b.gpus; });
        std::string line;
        for (const auto& p : points) {
            const double px = x.at(std::log2(p.gpus));
            line += (line.empty() ? "" : " ") + n(px) + "," + n(y.at(std::log10(p.p50_minutes)));
            svg += "<line x1=\"" + n(px) + "\" y1=\"" + n(y.at(std::log10(p.p10_minutes))) + "\" x2=\"" + n(px) + "\" y2=\"" +
                   n(y.at(std::log10(p.p90_minutes))) + "\" stroke=\"" + colour + "\" stroke-width=\"8\" opacity=\"0.4\"/>\n";
        }
        svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
        for (const auto& p : points) {
            const double px = x.at(std::log2(p.gpus)), py = y.at(std::log10(p.p50_minutes));
            svg += "<circle cx=\"" + n(px) + "\" cy=\"" + n(py) + "\" r=\"3.5\" fill=\"" + colour + "\"/>\n";
            if (chart.chosen && chart.chosen->first == chart.series[k].name && chart.chosen->second == p.gpus)
                svg += "<circle cx=\"" + n(px) + "\" cy=\"" + n(py) + "\" r=\"11\" fill=\"none\" stroke=\"#d62728\" "
                       "stroke-width=\"2.5\"/>\n<text x=\"" + n(px + 14) + "\" y=\"" + n(py - 12) + "\" fill=\"#d62728\">" +
                       escape(chart.chosen_label) + "</text>\n";
        }
        svg += "<line x1=\"" + n(kWidth - kRight - 250) + "\" y1=\"" + n(legend_y - 4) + "\" x2=\"" + n(kWidth - kRight - 226) +
               "\" y2=\"" + n(legend_y - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n<text x=\"" +
               n(kWidth - kRight - 220) + "\" y=\"" + n(legend_y) + "\">" + escape(chart.series[k].name) +
               ": p50, bar p10..p90</text>\n";
        legend_y += 18;
    }
    return svg + "</svg>\n";
}

}  // namespace ttsim::report
