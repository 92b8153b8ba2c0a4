#include "models/calibration/method_check.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "models/calibration/model_error.hpp"
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
        for (const CalibrationPoint* point : holdout.held_out) {
            const ComputeProfile profile = point_profile(*point, holdout.fit.profiles);
            const Prediction q = evaluate(point->scenario, profile);
            r.bands.push_back({point->published_minutes, q.ttt_p10_minutes, q.ttt_minutes, q.ttt_p90_minutes,
                               profile.parameter_sd});
        }
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

std::vector<BandCoverage> band_coverage(const MethodCheck& check) {
    std::vector<BandCoverage> out;
    for (const RoundHoldout& r : check.rounds) {
        BandCoverage c;
        c.round = r.round;
        double sum_square = 0;
        int others = 0;
        for (const RoundHoldout& other : check.rounds)
            if (other.round != r.round)
                for (const PointError& e : other.predicted) {
                    sum_square += std::pow(std::log1p(e.error), 2);
                    ++others;
                }
        c.model_sigma = others > 0 ? std::sqrt(sum_square / others) : 0.0;
        for (const HeldOutBand& b : r.bands) {
            const LogNormalBand band = combine_band(b.p10_minutes, b.p50_minutes, b.p90_minutes, b.parameter_sd, c.model_sigma);
            c.inside += band.p10 <= b.published_minutes && b.published_minutes <= band.p90;
            ++c.results;
        }
        out.push_back(c);
    }
    return out;
}

BandCoverage total_coverage(const std::vector<BandCoverage>& rounds) {
    BandCoverage total;
    total.round = "all";
    for (const BandCoverage& c : rounds) {
        total.inside += c.inside;
        total.results += c.results;
    }
    return total;
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
    const std::vector<BandCoverage> coverage = band_coverage(check);
    if (!coverage.empty()) {
        out += "p10-p90 band coverage of the published scores (convergence spread, parameter uncertainty, and the "
               "other rounds' held-out RMS log error as the model error; aim 60-95 %):\n";
        for (const BandCoverage& c : coverage)
            fmt::format_to(std::back_inserter(out), "  v{:<4} {:3}/{:<3} inside ({:5.1f}%), model sigma {:.3f}\n", c.round,
                           c.inside, c.results, c.percent(), c.model_sigma);
        const BandCoverage all = total_coverage(coverage);
        fmt::format_to(std::back_inserter(out), "  every round: {}/{} inside ({:.1f}%)\n", all.inside, all.results,
                       all.percent());
    }
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
