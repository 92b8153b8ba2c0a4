#include "models/calibration/method_check.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "models/mlperf/rounds.hpp"

namespace ttsim {

double max_abs_percent(const std::vector<PointError>& errors) {
    double worst = 0;
    for (const PointError& e : errors) worst = std::max(worst, 100.0 * std::abs(e.error));
    return worst;
}

std::vector<RoundSpeedup> round_speedups(const std::vector<CalibrationPoint>& points, const std::vector<std::string>& rounds) {
    // round -> workload -> (gpu, gpus) -> best published minutes
    std::map<std::string, std::map<std::string, std::map<std::pair<std::string, int>, double>>> best;
    for (const CalibrationPoint& p : points) {
        if (p.published_minutes <= 0) continue;
        auto& cell = best[p.result.round][p.scenario.workload->name];
        const std::pair key{p.scenario.gpu->name, p.scenario.gpus};
        const auto found = cell.find(key);
        if (found == cell.end() || p.published_minutes < found->second) cell[key] = p.published_minutes;
    }
    std::vector<RoundSpeedup> out;
    for (std::size_t i = 0; i + 1 < rounds.size(); ++i)
        for (const auto& [workload, older] : best[rounds[i]]) {
            const auto newer = best[rounds[i + 1]].find(workload);
            if (newer == best[rounds[i + 1]].end()) continue;
            RoundSpeedup s{workload, rounds[i], rounds[i + 1], 0, 1};
            double log_sum = 0;
            for (const auto& [key, minutes] : older)
                if (const auto other = newer->second.find(key); other != newer->second.end()) {
                    log_sum += std::log(minutes / other->second);
                    ++s.cells;
                }
            if (s.cells == 0) continue;
            s.speedup = std::exp(log_sum / s.cells);
            out.push_back(s);
        }
    return out;
}

MethodCheck method_check(const MethodCheckOptions& options) {
    std::vector<std::string> rounds = options.rounds;
    if (rounds.empty())
        for (const MlperfRound& r : mlperf_rounds().rounds) rounds.push_back(r.name);
    MethodCheck check;
    for (const std::string& round : rounds) {
        CalibrationOptions one;
        one.rounds = {round};
        const std::vector<CalibrationPoint> own = load_calibration_points(one);
        const HoldoutReport holdout =
            holdout_validation(own, options.fit_max_gpus, options.predict_min_gpus, options.shared);
        RoundHoldout r;
        r.round = round;
        r.fitted = static_cast<int>(holdout.fit.fitted.size());
        r.predicted = holdout.predicted;
        r.mape_percent = holdout.mape_percent;
        r.max_abs_percent = max_abs_percent(holdout.predicted);
        check.rounds.push_back(std::move(r));
    }
    CalibrationOptions every;
    every.rounds = rounds;
    const std::vector<CalibrationPoint> points = load_calibration_points(every);
    if (options.in_sample) {
        const CalibrationReport all = calibrate_points(points, "every round together", options.shared);
        check.in_sample = all.fitted;
        check.in_sample_mape_percent = mean_absolute_percentage_error(all.fitted);
        check.in_sample_max_abs_percent = max_abs_percent(all.fitted);
    }
    check.speedups = round_speedups(points, rounds);
    return check;
}

std::string format_method_check(const MethodCheck& check, const MethodCheckOptions& options) {
    std::string out;
    for (const RoundHoldout& r : check.rounds) {
        fmt::format_to(std::back_inserter(out),
                       "v{}: fitted on its {} results with <= {} GPUs, predicting its results with >= {} GPUs at "
                       "their published layouts\n",
                       r.round, r.fitted, options.fit_max_gpus, options.predict_min_gpus);
        out += format_point_table(r.predicted);
        fmt::format_to(std::back_inserter(out), "v{} method MAPE: {:.2f}% over {} results, largest error {:.2f}%\n\n",
                       r.round, r.mape_percent, r.predicted.size(), r.max_abs_percent);
    }
    out += "summary (fit <= " + std::to_string(options.fit_max_gpus) + " GPUs, predict >= " +
           std::to_string(options.predict_min_gpus) + "):\n";
    double sum = 0;
    for (const RoundHoldout& r : check.rounds) {
        fmt::format_to(std::back_inserter(out), "  v{:<4} MAPE {:6.2f}%  largest {:6.2f}%  over {} results\n", r.round,
                       r.mape_percent, r.max_abs_percent, r.predicted.size());
        sum += r.mape_percent;
    }
    if (!check.rounds.empty())
        fmt::format_to(std::back_inserter(out), "  mean of the rounds' MAPEs: {:.2f}%\n", sum / check.rounds.size());
    if (!check.in_sample.empty())
        fmt::format_to(std::back_inserter(out),
                       "in-sample, every round fitted together: MAPE {:.2f}%, largest {:.2f}%, over {} results\n",
                       check.in_sample_mape_percent, check.in_sample_max_abs_percent, check.in_sample.size());
    if (!check.speedups.empty()) {
        out += "published speedup between rounds (best minutes at the same GPU and count, geometric mean; > 1 is "
               "faster in the newer round):\n";
        for (const RoundSpeedup& s : check.speedups)
            fmt::format_to(std::back_inserter(out), "  {:<17} v{} -> v{}: {:.3f}x over {} cells\n", s.workload,
                           s.from_round, s.to_round, s.speedup, s.cells);
    }
    return out;
}

}  // namespace ttsim
