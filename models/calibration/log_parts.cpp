#include "models/calibration/log_parts.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace ttsim {

std::vector<LogPartsCheck> log_parts_checks(const std::vector<const CalibrationPoint*>& points, const ProfileSet& profiles) {
    std::vector<LogPartsCheck> checks;
    for (const CalibrationPoint* p : points) {
        // The parts from the run clock (what calibration prices), the total from evaluate() (what predictions
        // report): a test checks that they agree.
        const ComputeProfile profile = point_profile(*p, profiles);
        const RunClock clock = run_clock(p->scenario, profile);
        LogPartsCheck c;
        c.point = evaluate_point(*p, profiles);
        c.logged_step_seconds = p->measured_step_seconds;
        c.logged_eval_seconds = p->measured_eval_seconds;
        c.logged_excess_seconds = p->measured_excess_seconds;
        clock.seconds(trained_samples(p->scenario, profile, p->scenario.samples_mean), &c.model_steps, &c.model_evaluations);
        c.model_step_seconds = clock.step_seconds;
        c.model_eval_seconds = clock.eval_seconds;
        c.model_overhead_seconds = clock.run_overhead_seconds;
        checks.push_back(std::move(c));
    }
    return checks;
}

std::string format_log_parts(const std::vector<LogPartsCheck>& checks) {
    auto logged = [](const std::optional<double>& v, double scale, const char* format) {
        return v ? fmt::format(fmt::runtime(format), *v * scale) : std::string("-");
    };
    std::string out = fmt::format("{:<17} {:<9} {:>6} {:<28} {:>9} {:>9} {:>7} {:>9} {:>9} {:>6} {:>9} {:>9}\n",
                                  "workload", "gpu", "gpus", "submitter/system", "step ms", "model ms", "step%",
                                  "eval s", "model s", "evals", "excess s", "overhead");
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
        fmt::format_to(std::back_inserter(out), "{:<17} {:<9} {:>6} {:<28.28} {:>9} {:>9.1f} {:>7} {:>9} {:>9.3f} {:>6} {:>9} {:>9.1f}\n",
                       p.workload, p.gpu, p.gpus, p.submitter + "/" + p.system, logged(c.logged_step_seconds, 1e3, "{:.1f}"),
                       1e3 * c.model_step_seconds, step_error, logged(c.logged_eval_seconds, 1.0, "{:.3f}"),
                       c.model_eval_seconds, c.model_evaluations, logged(c.logged_excess_seconds, 1.0, "{:.1f}"),
                       c.model_overhead_seconds);
    }
    if (n > 0)
        fmt::format_to(std::back_inserter(out), "step-time MAPE (model against the logged steady step): {:.2f}% over {} results\n",
                       100.0 * sum / n, n);
    return out;
}

}  // namespace ttsim
