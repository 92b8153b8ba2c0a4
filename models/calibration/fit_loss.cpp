#include "models/calibration/fit_loss.hpp"

#include <algorithm>
#include <cmath>

#include <boost/random/sobol.hpp>
#include <boost/random/uniform_01.hpp>
#include <nlopt.hpp>

#include "sim/errors.hpp"

namespace ttsim {

// Squared log error of one result under a profile: its runs one by one (run-logs option, runs spanning several
// convergence points), else its published score against the prediction at its published mean convergence.
double log_error_loss(double log_error, bool robust) {
    if (!robust) return log_error * log_error;
    const double r = log_error / kRobustScale;
    return 2 * kRobustScale * kRobustScale * (std::sqrt(1 + r * r) - 1);
}

double point_loss(const CalibrationPoint& point, const ComputeProfile& profile, const LossTerms& terms,
                  const ScenarioKernelSums* sums) {
    const RunClock clock = run_clock(point.fit_scenario, profile, sums);
    // Measured step and evaluation times (the rounds' logs, or a user's runs: user_runs.hpp), each one more log
    // error on the same loss.
    double measured = 0;
    if (terms.step_logs && point.measured_step_seconds)
        measured += log_error_loss(std::log(clock.step_seconds / *point.measured_step_seconds), terms.robust);
    if (terms.eval_logs && point.measured_eval_seconds && clock.eval_seconds > 0)
        measured += log_error_loss(std::log(clock.eval_seconds / *point.measured_eval_seconds), terms.robust);
    if (point.published_minutes <= 0) return measured;   // only the step time was measured
    return measured + time_to_train_loss(point, clock, terms.run_logs, terms.robust);
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

// One BOBYQA (Nelder-Mead for one variable) run from `x`, updated in place; returns the best value found.
double bounded_search(const std::function<double(const std::vector<double>&)>& objective, std::vector<double>& x,
                      const std::vector<double>& lower, const std::vector<double>& upper, int max_evaluations,
                      double initial_step) {
    nlopt::opt opt(x.size() >= 2 ? nlopt::LN_BOBYQA : nlopt::LN_NELDERMEAD, static_cast<unsigned>(x.size()));
    opt.set_lower_bounds(lower);
    opt.set_upper_bounds(upper);
    opt.set_min_objective(call_objective, const_cast<std::function<double(const std::vector<double>&)>*>(&objective));
    opt.set_xtol_rel(1e-6);
    opt.set_ftol_abs(1e-12);
    opt.set_maxeval(max_evaluations);
    // BOBYQA's first trust region must fit inside every dimension's bounds: a narrow range takes a smaller step.
    std::vector<double> steps(x.size(), initial_step);
    for (std::size_t i = 0; i < x.size(); ++i) {
        TTSIM_ASSERT(upper[i] > lower[i], "a fit dimension without a range");
        steps[i] = std::min(initial_step, 0.499 * (upper[i] - lower[i]));
    }
    opt.set_initial_step(steps);
    double best = 0;
    try {
        opt.optimize(x, best);
    } catch (const nlopt::roundoff_limited&) {
        // converged as far as floating point allows; x holds the best point
        best = opt.last_optimum_value();
    }
    return best;
}
}  // namespace

void minimise_bounded(const std::function<double(const std::vector<double>&)>& objective, std::vector<double>& x,
                      const std::vector<double>& lower, const std::vector<double>& upper, int max_evaluations,
                      double initial_step, int extra_starts) {
    double best = bounded_search(objective, x, lower, upper, max_evaluations, initial_step);
    if (extra_starts <= 0) return;
    // Further starts at the first points of a Sobol sequence over the box (deterministic, evenly spread): the
    // operator fit has several local optima (efficiencies trading against per-kernel and per-step costs).
    // Each is a short search (an eighth of the budget) that only has to find the basin; the best is then polished.
    boost::random::sobol sequence(x.size());
    boost::random::uniform_01<double> unit;
    for (int start = 0; start < extra_starts; ++start) {
        std::vector<double> trial(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) trial[i] = lower[i] + (upper[i] - lower[i]) * unit(sequence);
        const double value =
            bounded_search(objective, trial, lower, upper, std::max(1, max_evaluations / 8), initial_step);
        if (value < best) {
            x = std::move(trial);
            best = value;
        }
    }
    // Then restarts from the best with a fresh trust region (BOBYQA stops early where its quadratic model
    // degenerates along bounds or flat valleys) while they still improve.
    for (int attempt = 0; attempt < 3; ++attempt) {
        std::vector<double> trial = x;
        const double value = bounded_search(objective, trial, lower, upper, max_evaluations, initial_step);
        if (!(value < best - 1e-9 * std::max(1e-12, std::abs(best)))) break;
        x = std::move(trial);
        best = value;
    }
}

}  // namespace ttsim
