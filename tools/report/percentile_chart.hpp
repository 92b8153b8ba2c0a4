// A chart drawn directly as SVG for reports whose command makes no gnuplot plot (a plan): time-to-train against
// GPU count on log-log axes, per series its p50 line with a p10..p90 bar at every count, an optional limit
// (a deadline) as a dashed line, and one chosen point (the answer) ringed. Drawn here rather than by gnuplot so
// that a plan's report needs no external program and no files besides report.html.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ttsim::report {

struct PercentilePoint {
    int gpus = 0;
    double p10_minutes = 0, p50_minutes = 0, p90_minutes = 0;
};

struct PercentileSeries {
    std::string name;
    std::vector<PercentilePoint> points;   // any order; sorted by GPUs when drawn
};

struct PercentileChart {
    std::string title;
    std::vector<PercentileSeries> series;
    std::optional<double> limit_minutes;   // drawn as a dashed horizontal line
    std::string limit_label;               // "deadline 1.00 min at p90"
    std::optional<std::pair<std::string, int>> chosen;   // (series name, GPUs) to ring
    std::string chosen_label;              // "answer"
};

// The SVG document; empty when no series has a point.
std::string percentile_chart_svg(const PercentileChart& chart);

}  // namespace ttsim::report
