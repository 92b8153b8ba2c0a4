#include "models/calibration/log_parts.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>


namespace ttsim {

std::vector<LogPartsCheck> log_parts_checks(const std::vector<const CalibrationPoint*>& points, const ProfileSet& profiles) {
    std::vector<LogPartsCheck> checks;
    for (const CalibrationPoint* p : points) {
        const Prediction prediction = evaluate(p->scenario, point_profile(*p, profiles));
        LogPartsCheck c;
        c.point = evaluate_point(*p, profiles);
        c.logged_step_seconds = p->measured_step_seconds;
        c.logged_eval_seconds = p->measured_eval_seconds;
        c.logged_warmup_seconds = p->measured_warmup_seconds;
        c.model_step_seconds = prediction.step_ms / 1e3;
        c.model_evaluations = prediction.evaluations;
        c.model_eval_seconds = prediction.evaluations > 0 ? prediction.eval_minutes * 60.0 / prediction.evaluations : 0.0;
        c.model_overhead_seconds = prediction.run_overhead_minutes * 60.0;
        checks.push_back(std::move(c));
    }
    return checks;
}

std::string format_log_parts(const std::vector<LogPartsCheck>& checks) {
    auto logged = [](const std::optional<double>& v, double scale, const char* format) {
        return v ? fmt::format(fmt::runtime(format), *v * scale) : std::string("-");
    };
    std::string out = fmt::format("{:<17} {:<9} {:>6} {:<24} {:>9} {:>9} {:>7} {:>9} {:>9} {:>6} {:>9} {:>9}\n",
                                  "workload", "gpu", "gpus", "submitter/system", "step ms", "model ms", "step%",
                                  "eval s", "model s", "evals", "warm-up s", "model s");
    double sum = 0;
    int n = 0;
    for (const LogPartsCheck& c : checks) {
        const PointError& p = c.point;
        std::string step_error = "-";
        if (c.logged_step_seconds) {
            const double e = c.model_step_seconds / *c.logged_step_seconds - 1.0;
            step_error = fmt::format("{:+.1f}", 100.0 * e);
            sum += std::abs(e);
            ++n;
        }
        fmt::format_to(std::back_inserter(out), "{:<17} {:<9} {:>6} {:<24.24} {:>9} {:>9.1f} {:>7} {:>9} {:>9.2f} {:>6} {:>9} {:>9.1f}\n",
                       p.workload, p.gpu, p.gpus, p.submitter + "/" + p.system, logged(c.logged_step_seconds, 1e3, "{:.1f}"),
                       1e3 * c.model_step_seconds, step_error, logged(c.logged_eval_seconds, 1.0, "{:.2f}"),
                       c.model_eval_seconds, c.model_evaluations, logged(c.logged_warmup_seconds, 1.0, "{:.1f}"),
                       c.model_overhead_seconds);
    }
    if (n > 0)
        fmt::format_to(std::back_inserter(out), "step-time MAPE (model against the logged steady step): {:.2f}% over {} results\n",
                       100.0 * sum / n, n);
    return out;
}

}  // namespace ttsim
