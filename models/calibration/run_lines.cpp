#include "models/calibration/run_lines.hpp"

#include <cmath>
#include <iterator>
#include <set>
#include <string>

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim {

std::optional<RunLine> fit_run_line(const std::vector<double>& samples, const std::vector<double>& seconds) {
    TTSIM_ASSERT(samples.size() == seconds.size(), "run line: samples and seconds differ in length");
    const std::size_t n = samples.size();
    if (n < 3 || std::set<double>(samples.begin(), samples.end()).size() < 2) return std::nullopt;
    double mean_x = 0, mean_y = 0;
    for (std::size_t i = 0; i < n; ++i) {
        mean_x += samples[i] / n;
        mean_y += seconds[i] / n;
    }
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sxx += (samples[i] - mean_x) * (samples[i] - mean_x);
        sxy += (samples[i] - mean_x) * (seconds[i] - mean_y);
    }
    RunLine line;
    line.runs = static_cast<int>(n);
    line.slope = sxy / sxx;
    line.intercept = mean_y - line.slope * mean_x;
    double residual_squares = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double r = seconds[i] - (line.intercept + line.slope * samples[i]);
        residual_squares += r * r;
    }
    const double variance = residual_squares / static_cast<double>(n - 2);
    line.slope_error = std::sqrt(variance / sxx);
    line.intercept_error = std::sqrt(variance * (1.0 / n + mean_x * mean_x / sxx));
    return line;
}

std::vector<StepTimeCheck> step_time_checks(const std::vector<const CalibrationPoint*>& points,
                                            const ProfileSet& profiles) {
    std::vector<StepTimeCheck> out;
    for (const CalibrationPoint* point : points) {
        const ComputeProfile profile = profiles.find(*point->scenario.workload, *point->scenario.gpu);
        const RunClock clock = run_clock(point->scenario, profile);
        std::vector<double> samples, measured, modelled;
        for (const CalibrationPoint::Run& run : point->runs) {
            samples.push_back(run.samples);
            measured.push_back(run.seconds);
            modelled.push_back(clock.seconds(run.samples));
        }
        const std::optional<RunLine> measured_line = fit_run_line(samples, measured);
        const std::optional<RunLine> model_line = fit_run_line(samples, modelled);
        // A line that falls with more samples is run-to-run noise, not a step time.
        if (!measured_line || !model_line || !(measured_line->slope > 0)) continue;
        StepTimeCheck check;
        check.point = evaluate_point(*point, profiles);
        check.measured = *measured_line;
        check.model = *model_line;
        for (double s : samples) check.runs_samples_mean += s / static_cast<double>(samples.size());
        check.rcp_samples = point->scenario.samples_mean;
        out.push_back(check);
    }
    return out;
}

std::string format_step_time_checks(const std::vector<StepTimeCheck>& checks) {
    std::string out = fmt::format("{:<17} {:<9} {:>6} {:>6} {:<24} {:>15} {:>9} {:>7} {:>13} {:>9} {:>9}\n",
                                  "workload", "gpu", "gpus", "batch", "submitter/system", "step ms (runs)", "model ms",
                                  "step%", "intercept s", "model s", "RCP/runs");
    for (const StepTimeCheck& c : checks) {
        const PointError& p = c.point;
        const std::string who = (p.submitter + "/" + p.system).substr(0, 24);
        const std::string measured_step = fmt::format("{:.1f}+-{:.1f}", 1e3 * c.measured_step_seconds(),
                                                      1e3 * c.measured.slope_error * p.global_batch);
        const std::string measured_run = fmt::format("{:.1f}+-{:.1f}", c.measured.intercept, c.measured.intercept_error);
        fmt::format_to(std::back_inserter(out),
                       "{:<17} {:<9} {:>6} {:>6} {:<24} {:>15} {:>9.1f} {:>+7.1f} {:>13} {:>9.1f} {:>9.3f}\n", p.workload,
                       p.gpu, p.gpus, p.global_batch, who, measured_step, 1e3 * c.model_step_seconds(),
                       100.0 * (c.model.slope / c.measured.slope - 1.0), measured_run, c.model.intercept,
                       c.rcp_samples / c.runs_samples_mean);
    }
    if (!checks.empty()) {
        double sum = 0;
        for (const StepTimeCheck& c : checks) sum += std::abs(c.model.slope / c.measured.slope - 1.0);
        fmt::format_to(std::back_inserter(out), "step-time MAPE (model against the runs' line): {:.2f}% over {} results\n",
                       100.0 * sum / static_cast<double>(checks.size()), checks.size());
    }
    return out;
}

}  // namespace ttsim
