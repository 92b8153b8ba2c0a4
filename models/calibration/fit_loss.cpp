#include "models/calibration/fit_loss.hpp"

#include <cmath>

#include <nlopt.hpp>

#include "sim/errors.hpp"

namespace ttsim {

// Squared log error of one result under a profile: its runs one by one (run-logs option, runs spanning several
// convergence points), else its published score against the prediction at its published mean convergence.
// Robust fits (SharedFit::robust) replace the square by soft-L1: quadratic below kRobustScale, linear above, so a
// result that no shared term can explain (another software release, another cluster) pulls the shared parameters
// with a bounded force. Scale 5 % of a log error: the spread of same-configuration results across submitters
// (the in-sample per-group tolerance), fixed before the option was tried.
constexpr double kRobustScale = 0.05;

double log_error_loss(double log_error, bool robust) {
    if (!robust) return log_error * log_error;
    const double r = log_error / kRobustScale;
    return 2 * kRobustScale * kRobustScale * (std::sqrt(1 + r * r) - 1);
}

double point_loss(const CalibrationPoint& point, const ComputeProfile& profile, bool run_logs, bool robust) {
    const RunClock clock = run_clock(point.fit_scenario, profile);
    // A user's measured step time (user_runs.hpp) counts as one more result, on the same loss.
    const double step_loss = point.measured_step_seconds
                                 ? log_error_loss(std::log(clock.step_seconds / *point.measured_step_seconds), robust)
                                 : 0.0;
    if (point.published_minutes <= 0) return step_loss;   // only the step time was measured
    return step_loss + time_to_train_loss(point, clock, run_logs, robust);
}

double time_to_train_loss(const CalibrationPoint& point, const RunClock& clock, bool run_logs, bool robust) {
    if (run_logs && point.runs_span_convergence()) {
        double sum = 0;
        for (const CalibrationPoint::Run& run : point.runs)
            sum += log_error_loss(std::log(clock.seconds(run.samples) / run.seconds), robust);
        return sum / static_cast<double>(point.runs.size());
    }
    return log_error_loss(std::log(clock.seconds(point.fit_scenario.samples_mean) / 60.0 / point.published_minutes), robust);
}

namespace {
double call_objective(const std::vector<double>& x, std::vector<double>& grad, void* data) {
    TTSIM_ASSERT(grad.empty(), "derivative-free fit was asked for a gradient");
    return (*static_cast<const std::function<double(const std::vector<double>&)>*>(data))(x);
}
}  // namespace

void minimise_bounded(const std::function<double(const std::vector<double>&)>& objective, std::vector<double>& x,
                      const std::vector<double>& lower, const std::vector<double>& upper, int max_evaluations,
                      double initial_step) {
    nlopt::opt opt(x.size() >= 2 ? nlopt::LN_BOBYQA : nlopt::LN_NELDERMEAD, static_cast<unsigned>(x.size()));
    opt.set_lower_bounds(lower);
    opt.set_upper_bounds(upper);
    opt.set_min_objective(call_objective, const_cast<std::function<double(const std::vector<double>&)>*>(&objective));
    opt.set_xtol_rel(1e-6);
    opt.set_ftol_abs(1e-12);
    opt.set_maxeval(max_evaluations);
    opt.set_initial_step(std::vector<double>(x.size(), initial_step));
    double best = 0;
    try {
        opt.optimize(x, best);
    } catch (const nlopt::roundoff_limited&) {
        // converged as far as floating point allows; x holds the best point
    }
}

}  // namespace ttsim
