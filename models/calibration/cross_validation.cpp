// Extrapolation diagnostics inside one round: forward-chaining and leave-one-count-out cross-validation on the small
// results, and the hold-out (fit on <= N GPUs, predict the larger results).
#include "models/calibration/calibration.hpp"

#include <cmath>

#include <map>

#include "models/calibration/log_parts.hpp"

namespace ttsim {

std::string describe(CrossValidationScheme scheme) {
    return scheme == CrossValidationScheme::ForwardChaining ? "forward chaining (fit on fewer GPUs, predict the next count)"
                                                            : "leave-one-GPU-count-out";
}

CrossValidationReport cross_validate(const std::vector<CalibrationPoint>& points, CrossValidationScheme scheme,
                                     int max_gpus, const SharedFit& shared) {
    std::map<int, int> counts;
    for (const CalibrationPoint& p : points)
        if (p.scenario.gpus <= max_gpus) ++counts[p.scenario.gpus];
    const bool forward = scheme == CrossValidationScheme::ForwardChaining;
    CrossValidationReport report;
    double step_sum = 0, eval_sum = 0, own_convergence_sum = 0;
    for (const auto& [left_out, n] : counts) {
        if (forward && left_out == counts.begin()->first) continue;   // nothing below the smallest count to fit on
        std::vector<CalibrationPoint> fit_set;
        std::vector<const CalibrationPoint*> test;
        std::map<std::pair<std::string, std::string>, int> kept;
        for (const CalibrationPoint& p : points) {
            const int gpus = p.scenario.gpus;
            if (gpus > max_gpus) continue;
            if (gpus == left_out) {
                test.push_back(&p);
            } else if (!forward || gpus < left_out) {
                fit_set.push_back(p);
                ++kept[{p.scenario.workload->name, p.scenario.gpu->name}];
            }
        }
        const CalibrationReport fit = calibrate_points(fit_set, "cross-validation fold", shared);
        std::vector<const CalibrationPoint*> predicted;
        for (const CalibrationPoint* p : test)
            if (kept.count({p->scenario.workload->name, p->scenario.gpu->name}) &&
                kept.count({p->scenario.workload->name, reference_gpu().name}))
                predicted.push_back(p);
        for (const LogPartsCheck& c : log_parts_checks(predicted, fit.profiles)) {
            report.predicted.push_back(c.point);
            if (c.logged_step_seconds) {
                step_sum += std::abs(c.model_step_seconds / *c.logged_step_seconds - 1.0);
                ++report.step_results;
            }
            if (c.logged_eval_seconds && *c.logged_eval_seconds > 0) {
                eval_sum += std::abs(c.model_eval_seconds / *c.logged_eval_seconds - 1.0);
                ++report.eval_results;
            }
        }
        for (const double error : published_convergence_errors(predicted, fit.profiles)) {
            own_convergence_sum += error;
            ++report.published_convergence_results;
        }
    }
    report.mape_percent = mean_absolute_percentage_error(report.predicted);
    if (report.step_results > 0) report.step_mape_percent = 100.0 * step_sum / report.step_results;
    if (report.eval_results > 0) report.eval_mape_percent = 100.0 * eval_sum / report.eval_results;
    if (report.published_convergence_results > 0)
        report.published_convergence_mape_percent = 100.0 * own_convergence_sum / report.published_convergence_results;
    return report;
}

std::vector<double> published_convergence_errors(const std::vector<const CalibrationPoint*>& points,
                                                 const ProfileSet& profiles) {
    std::vector<double> errors;
    for (const CalibrationPoint* p : points)
        if (p->published_convergence && p->published_minutes > 0)
            errors.push_back(std::abs(evaluate(p->fit_scenario, point_profile(*p, profiles)).ttt_minutes /
                                          p->published_minutes -
                                      1.0));
    return errors;
}

HoldoutReport holdout_validation(const std::vector<CalibrationPoint>& points, int fit_max_gpus, int predict_min_gpus,
                                 const SharedFit& shared) {
    std::vector<CalibrationPoint> fit_set;
    std::vector<const CalibrationPoint*> held_out;
    for (const CalibrationPoint& p : points) {
        if (p.scenario.gpus <= fit_max_gpus) fit_set.push_back(p);
        // Every GPU's results at that scale (v4.1 has H100 and H200 ones; B200 results are single nodes).
        if (p.scenario.gpus >= predict_min_gpus) held_out.push_back(&p);
    }
    HoldoutReport report;
    report.fit = calibrate_points(fit_set, "hold-out fit: results with <= " + std::to_string(fit_max_gpus) + " GPUs", shared);
    report.held_out = held_out;
    for (const CalibrationPoint* p : held_out) report.predicted.push_back(evaluate_point(*p, report.fit.profiles));
    report.mape_percent = mean_absolute_percentage_error(report.predicted);
    return report;
}

}  // namespace ttsim
