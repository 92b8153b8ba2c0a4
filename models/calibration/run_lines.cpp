#include "models/calibration/run_lines.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

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
                                            const ProfileSet& profiles, const std::vector<MlperfRun>& runs) {
    std::map<std::string, std::vector<const MlperfRun*>> by_key;
    for (const MlperfRun& run : runs)
        if (run.success && run.minutes && run.convergence_point) by_key[run.key()].push_back(&run);
    std::vector<StepTimeCheck> out;
    for (const CalibrationPoint* point : points) {
        const auto found = by_key.find(point->result.key());
        if (found == by_key.end()) continue;
        const Workload& workload = *point->scenario.workload;
        const ComputeProfile profile = profiles.find(workload, *point->scenario.gpu);
        // RetinaNet (MLPerf "ssd") logs its convergence point in epochs.
        const bool epochs = point->result.benchmark == "ssd";
        if (epochs && !workload.train_samples) continue;
        std::vector<double> samples, measured, modelled;
        for (const MlperfRun* run : found->second) {
            const double s = *run->convergence_point * (epochs ? static_cast<double>(*workload.train_samples) : 1.0);
            PreparedScenario at_run = point->scenario;
            at_run.samples_mean = at_run.samples_p10 = at_run.samples_p90 = s;
            samples.push_back(s);
            measured.push_back(*run->minutes * 60.0);
            modelled.push_back(evaluate(at_run, profile).ttt_minutes * 60.0);
        }
        const std::optional<RunLine> measured_line = fit_run_line(samples, measured);
        const std::optional<RunLine> model_line = fit_run_line(samples, modelled);
        if (!measured_line || !model_line) continue;
        StepTimeCheck check;
        check.point = evaluate_point(*point, profiles);
        check.measured = *measured_line;
        check.model = *model_line;
        for (double s : samples) check.published_samples_mean += s / samples.size();
        check.rcp_samples = point->scenario.samples_mean;
        out.push_back(check);
    }
    return out;
}

std::string format_step_time_checks(const std::vector<StepTimeCheck>& checks) {
    std::string out;
    char line[320];
    std::snprintf(line, sizeof line, "%-17s %-9s %6s %6s %-24s %15s %9s %7s %13s %9s %9s\n", "workload", "gpu", "gpus",
                  "batch", "submitter/system", "step ms (runs)", "model ms", "step%", "per run s", "model s",
                  "RCP/runs");
    out += line;
    for (const StepTimeCheck& c : checks) {
        const PointError& p = c.point;
        const std::string who = (p.submitter + "/" + p.system).substr(0, 24);
        char measured_step[32], measured_run[32];
        std::snprintf(measured_step, sizeof measured_step, "%.1f+-%.1f", 1e3 * c.measured_step_seconds(),
                      1e3 * c.measured.slope_error * p.global_batch);
        std::snprintf(measured_run, sizeof measured_run, "%.1f+-%.1f", c.measured.intercept, c.measured.intercept_error);
        std::snprintf(line, sizeof line, "%-17s %-9s %6d %6d %-24s %15s %9.1f %+7.1f %13s %9.1f %9.3f\n",
                      p.workload.c_str(), p.gpu.c_str(), p.gpus, p.global_batch, who.c_str(), measured_step,
                      1e3 * c.model_step_seconds(), 100.0 * (c.model.slope / c.measured.slope - 1.0), measured_run,
                      c.model.intercept, c.rcp_samples / c.published_samples_mean);
        out += line;
    }
    return out;
}

}  // namespace ttsim
