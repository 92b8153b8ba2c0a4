// The lumped model's calibration: one curve per workload and GPU (FLOPs x (x + x_half) plus a fixed step cost) and a
// per-run overhead per workload, fitted per group inside a fit of the one shared parameter, the relative step-time
// noise per node (ComputeProfile::step_jitter_cv; stragglers wait for the slowest node's step).
#include "models/calibration/lumped_fit.hpp"

#include <cmath>
#include <map>

#include "models/calibration/fit_loss.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Bounds of the fitted parameters (physical plausibility, not tuning):
//  f_max: 2%..95% of peak; x_half: 0.001..1000 samples per GPU; fixed step cost: 10 us..1 s.
constexpr double kMinFraction = 0.02, kMaxFraction = 0.95;
constexpr double kMinHalf = 1e-3, kMaxHalf = 1e3;
constexpr double kMinFixed = 1e-5, kMaxFixed = 1.0;

double sq(double v) { return v * v; }

struct FitGroup {
    std::string workload, gpu;
    LossTerms loss;                // SharedFit::loss_terms()
    std::vector<const CalibrationPoint*> points;
    // A time to train among the points: the per-run overhead is visible (a step time alone does not hold it).
    bool run_overhead_visible() const {
        return std::any_of(points.begin(), points.end(), [](const CalibrationPoint* p) { return p->published_minutes > 0; });
    }
};

}  // namespace

namespace {

// A fitted field of Target (a profile, or the shared values), searched on its logarithm within bounds.
template <typename Target>
struct LogField {
    double Target::*field;
    double lower, upper;
};

// `base` with each field set to exp(log_x[i]).
template <typename Target>
Target with_log_values(Target base, const std::vector<LogField<Target>>& fields, const std::vector<double>& log_x) {
    for (std::size_t i = 0; i < fields.size(); ++i) base.*(fields[i].field) = std::exp(log_x[i]);
    return base;
}

// One free per-group parameter: the profile field, fitted on its logarithm within bounds.
using FreeParameter = LogField<ComputeProfile>;

struct Objective {
    const FitGroup* group;
    ComputeProfile base;
    std::vector<FreeParameter> free;
    int* evaluations;

    ComputeProfile profile_from(const std::vector<double>& x) const { return with_log_values(base, free, x); }
    double operator()(const std::vector<double>& x) const {
        ++*evaluations;
        const ComputeProfile p = profile_from(x);
        double sum = 0;
        for (const CalibrationPoint* point : group->points) sum += point_loss(*point, p, group->loss);
        return sum;
    }
};


// Which per-group parameters a fit frees: f_max always; with `shape`, the per-run overhead where the group's data
// holds a time to train (10 ms..5 min per run: the rules exclude up to 30 min of initialisation before run_start, so
// what remains on the clock is far smaller), x_half and the fixed step cost. `shape` false: f_max only (GPUs that
// take their shape from the reference GPU's group of the same workload).
std::vector<FreeParameter> free_parameters(bool shape, bool run_overhead_visible) {
    std::vector<FreeParameter> free{{&ComputeProfile::max_flops_fraction, kMinFraction, kMaxFraction}};
    if (!shape) return free;
    if (run_overhead_visible) free.push_back({&ComputeProfile::run_overhead_seconds, 0.01, 300.0});
    free.push_back({&ComputeProfile::half_saturation_samples, kMinHalf, kMaxHalf});
    free.push_back({&ComputeProfile::fixed_step_seconds, kMinFixed, kMaxFixed});
    return free;
}

ComputeProfile fit_group(const FitGroup& group, const ComputeProfile& start, std::vector<FreeParameter> free,
                         int* evaluations) {
    Objective objective{&group, start, std::move(free), evaluations};
    std::vector<double> x, lower, upper;
    for (const FreeParameter& f : objective.free) {
        x.push_back(std::log(std::clamp(start.*(f.field), f.lower, f.upper)));
        lower.push_back(std::log(f.lower));
        upper.push_back(std::log(f.upper));
    }
    minimise_bounded([&objective](const std::vector<double>& v) { return objective(v); }, x, lower, upper, 4000, 0.5);
    ComputeProfile fitted = objective.profile_from(x);
    CalibratedRange range{group.points.front()->scenario.samples_per_gpu, group.points.front()->scenario.samples_per_gpu,
                          group.points.front()->scenario.gpus, group.points.front()->scenario.gpus};
    for (const CalibrationPoint* point : group.points) {
        range.min_samples_per_gpu = std::min(range.min_samples_per_gpu, point->scenario.samples_per_gpu);
        range.max_samples_per_gpu = std::max(range.max_samples_per_gpu, point->scenario.samples_per_gpu);
        range.min_gpus = std::min(range.min_gpus, point->scenario.gpus);
        range.max_gpus = std::max(range.max_gpus, point->scenario.gpus);
    }
    fitted.calibrated_range = range;
    return fitted;
}

}  // namespace

namespace {

// Values of the shared parameters at one trial of the outer fit.
struct SharedValues {
    double jitter_cv = 0;   // 0 = ComputeProfile's default step_jitter_cv
};

void apply_shared(ComputeProfile& p, const SharedValues& v) {
    if (v.jitter_cv > 0) p.step_jitter_cv = v.jitter_cv;
    p.step_jitter_per_node = true;
}

// Per-(workload, GPU) fits at given shared parameter values; returns the summed squared log error.
double fit_all_groups(const std::map<std::pair<std::string, std::string>, FitGroup>& groups, const SharedValues& shared,
                      ProfileSet* out, int* evaluations) {
    // The reference GPU (H100-SXM, gpus.yaml) first, all parameters; then the others from its shape.
    std::map<std::string, ComputeProfile> h100;
    ProfileSet set;
    for (const auto& [key, group] : groups) {
        if (group.gpu != reference_gpu().name) continue;
        ComputeProfile start;
        start.workload = group.workload;
        start.gpu = group.gpu;
        start.max_flops_fraction = 0.4;
        start.half_saturation_samples = 1.0;
        start.fixed_step_seconds = 0.005;
        apply_shared(start, shared);
        ComputeProfile fitted = fit_group(group, start, free_parameters(true, group.run_overhead_visible()), evaluations);
        h100[group.workload] = fitted;
        set.add(fitted);
    }
    for (const auto& [key, group] : groups) {
        if (group.gpu == reference_gpu().name) continue;
        ComputeProfile start;
        auto it = h100.find(group.workload);
        if (it != h100.end()) start = it->second;
        start.workload = group.workload;
        start.gpu = group.gpu;
        start.transferred_from.reset();
        apply_shared(start, shared);
        const bool shape = it == h100.end();
        set.add(fit_group(group, start, free_parameters(shape, group.run_overhead_visible()), evaluations));
    }
    double sum = 0;
    for (const auto& [key, group] : groups) {
        const ComputeProfile p = set.find(find_workload(group.workload), find_gpu(group.gpu));
        for (const CalibrationPoint* point : group.points) sum += point_loss(*point, p, group.loss);
    }
    if (out) *out = std::move(set);
    return sum;
}

// One fitted shared parameter: where it lives in SharedValues, its bounds (physical plausibility) and start.
struct SharedDimension {
    LogField<SharedValues> range;
    double start;
};

struct OuterObjective {
    const std::map<std::pair<std::string, std::string>, FitGroup>* groups;
    std::vector<SharedDimension> dims;
    SharedValues base;   // values of the parameters not searched here
    int* evaluations;
    SharedValues values(const std::vector<double>& log_x) const {
        std::vector<LogField<SharedValues>> fields;
        for (const SharedDimension& d : dims) fields.push_back(d.range);
        return with_log_values(base, fields, log_x);
    }
    double operator()(const std::vector<double>& log_x) const {
        return fit_all_groups(*groups, values(log_x), nullptr, evaluations);
    }
};

// Fits the shared parameters on their logarithms (each trial refits every per-group profile).
SharedValues fit_shared(const std::map<std::pair<std::string, std::string>, FitGroup>& groups,
                        std::vector<SharedDimension> dims, const SharedValues& base, int* evaluations) {
    OuterObjective objective{&groups, std::move(dims), base, evaluations};
    const auto& d = objective.dims;
    if (d.empty()) return base;
    // Cyclic coordinate descent: a golden-section search over each shared parameter's whole (log) range in turn,
    // the others held; three cycles for several parameters (one suffices for one). Each trial refits every group,
    // so the outer objective is only piecewise smooth; a bracketing search is robust to that where a model-based
    // optimiser (BOBYQA, tried first) stalled short of the single-parameter optima it contains.
    std::vector<double> x;
    for (const SharedDimension& dim : d) x.push_back(std::log(dim.start));
    const double g = (std::sqrt(5.0) - 1) / 2;
    const int cycles = d.size() == 1 ? 1 : 3;
    for (int cycle = 0; cycle < cycles; ++cycle)
        for (std::size_t i = 0; i < d.size(); ++i) {
            auto total = [&](double value) {
                std::vector<double> trial = x;
                trial[i] = value;
                return objective(trial);
            };
            double lo = std::log(d[i].range.lower), hi = std::log(d[i].range.upper);
            double c = hi - g * (hi - lo), e = lo + g * (hi - lo);
            double fc = total(c), fe = total(e);
            while (hi - lo > 0.02) {
                if (fc < fe) {
                    hi = e; e = c; fe = fc; c = hi - g * (hi - lo); fc = total(c);
                } else {
                    lo = c; c = e; fc = fe; e = lo + g * (hi - lo); fe = total(e);
                }
            }
            x[i] = 0.5 * (lo + hi);
        }
    return objective.values(x);
}

}  // namespace

bool CalibrationPoint::runs_span_convergence() const {
    if (runs.size() < 3) return false;
    for (const Run& run : runs)
        if (run.samples != runs.front().samples) return true;
    return false;
}
CalibrationReport calibrate_lumped_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                          const SharedFit& shared, const ConvergenceLags& convergence_lags) {
    std::map<std::pair<std::string, std::string>, FitGroup> groups;
    bool any_straggler = false;
    for (const CalibrationPoint& p : points) {
        FitGroup& g = groups[{p.scenario.workload->name, p.scenario.gpu->name}];
        g.workload = p.scenario.workload->name;
        g.gpu = p.scenario.gpu->name;
        g.loss = shared.loss_terms();
        g.points.push_back(&p);
        any_straggler = any_straggler || p.scenario.node_straggler_sigmas > 0;
    }
    CalibrationReport report;
    report.data_description = description;
    // Relative step-time noise per node: 0.01%..30%, searched only where some result spans several nodes (on
    // single-node results there is no straggler to wait for, and the loss cannot see it).
    std::vector<SharedDimension> dims;
    if (any_straggler) dims.push_back({{&SharedValues::jitter_cv, 1e-4, 0.3}, 0.01});
    const SharedValues base;
    const SharedValues values = fit_shared(groups, dims, base, &report.objective_evaluations);
    fit_all_groups(groups, values, &report.profiles, &report.objective_evaluations);
    apply_convergence_lags(report.profiles, convergence_lags);
    double sum = 0;
    for (const CalibrationPoint& p : points) {
        report.fitted.push_back(evaluate_point(p, report.profiles));
        sum += sq(std::log1p(report.fitted.back().error));
    }
    report.rms_log_error = points.empty() ? 0.0 : std::sqrt(sum / points.size());
    return report;
}

}  // namespace ttsim
