#include "models/calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <nlopt.hpp>

#include "models/data_dir.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Bounds of the fitted parameters (physical plausibility, not tuning):
//  f_max: 2%..95% of peak; x_half: 0.001..1000 samples per GPU; fixed step cost: 10 us..1 s.
constexpr double kMinFraction = 0.02, kMaxFraction = 0.95;
constexpr double kMinHalf = 1e-3, kMaxHalf = 1e3;
constexpr double kMinFixed = 1e-5, kMaxFixed = 1.0;
//  shared multi-node per-step overhead: 10 us..100 ms.
constexpr double kMinMultiNode = 1e-5, kMaxMultiNode = 0.1;

std::filesystem::path results_path(const CalibrationOptions& options) {
    return options.results_csv ? *options.results_csv : data_file("mlperf/v4.1_results.csv");
}

// gradient_accumulation_steps per result key, read from the CSV (not part of MlperfResult).
std::map<std::string, int> accumulation_by_key(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const auto rows = parse_csv(buffer.str(), file.string());
    std::map<std::string, int> out;
    if (rows.empty()) return out;
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    if (!col.count("gradient_accumulation_steps")) return out;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const auto& f = rows[r];
        if (f.size() != rows[0].size()) continue;
        const std::string key = f[col["submitter"]] + "/" + f[col["system"]] + "/" + f[col["benchmark"]];
        const std::string& acc = f[col["gradient_accumulation_steps"]];
        if (!acc.empty()) out[key] = std::max(1, std::atoi(acc.c_str()));
    }
    return out;
}

// The layout a published result ran: NVIDIA's published layout at the nearest scale, with the result's GPU count,
// global batch and gradient accumulation; CP doubled while the batch does not split over DP x accumulation.
ParallelismConfig layout_of(const Workload& workload, const MlperfResult& r, int accumulation) {
    ParallelismConfig c = default_parallelism(workload, r.accelerator_family, r.n_accelerators).config;
    const int gbs = *r.global_batch_size;
    const int n = r.n_accelerators;
    while (gbs % (c.data_parallel * accumulation) != 0 && c.data_parallel % 2 == 0 &&
           c.tensor_parallel * c.context_parallel * 2 <= n) {
        c.context_parallel *= 2;
        c.data_parallel /= 2;
    }
    if (gbs % (c.data_parallel * accumulation) != 0) accumulation = 1;
    TTSIM_ASSERT(gbs % c.data_parallel == 0, "published batch does not split over data parallelism: " + r.key());
    c.gradient_accumulation = accumulation;
    c.samples_per_micro_batch = gbs / (c.data_parallel * accumulation);
    c.global_batch = gbs;
    // Multi-node NVIDIA-submitted runs used SHARP (params.md §2); other submitters' fabrics are not documented.
    c.sharp = n > 8 && r.submitter == "NVIDIA";
    return c;
}

struct FitGroup {
    std::string workload, gpu;
    std::vector<const CalibrationPoint*> points;
};

double sq(double v) { return v * v; }

}  // namespace

std::vector<CalibrationPoint> load_calibration_points(const CalibrationOptions& options) {
    const auto file = results_path(options);
    const auto all = load_mlperf_results(file);
    const auto accumulation = accumulation_by_key(file);
    std::vector<CalibrationPoint> points;
    for (const std::string& family : options.families) {
        ResultFilter filter;
        filter.accelerator_family = family;
        for (const MlperfResult& r : distinct_scored_results(all, filter)) {
            if (!r.global_batch_size || !r.ttt_minutes_official_scaled) continue;
            const Workload& workload = find_workload(r.benchmark);
            const GpuSpec& gpu = find_gpu(r.accelerator_family);
            auto it = accumulation.find(r.key());
            const ParallelismConfig layout = layout_of(workload, r, it == accumulation.end() ? 1 : it->second);
            CalibrationPoint p;
            p.result = r;
            p.scenario = prepare_with_layout(workload, gpu, r.system, r.n_accelerators, layout);
            p.fit_scenario = p.scenario;
            std::optional<double> samples = r.samples_to_converge_mean;
            if (!samples && r.epochs_to_converge_mean && workload.train_samples)
                samples = *r.epochs_to_converge_mean * static_cast<double>(*workload.train_samples);
            if (samples && *samples > 0) {
                p.fit_scenario.samples_mean = p.fit_scenario.samples_p10 = p.fit_scenario.samples_p90 = *samples;
                p.published_convergence = true;
            }
            p.published_minutes = *r.ttt_minutes_official_scaled;
            points.push_back(std::move(p));
        }
    }
    return points;
}

PointError evaluate_point(const CalibrationPoint& point, const ProfileSet& profiles) {
    const ComputeProfile profile = profiles.find(*point.scenario.workload, *point.scenario.gpu);
    const Prediction prediction = evaluate(point.scenario, profile);
    PointError e;
    e.workload = point.scenario.workload->name;
    e.gpu = point.scenario.gpu->name;
    e.submitter = point.result.submitter;
    e.system = point.result.system;
    e.gpus = point.scenario.gpus;
    e.global_batch = point.scenario.layout.global_batch;
    e.published_minutes = point.published_minutes;
    e.predicted_minutes = prediction.ttt_minutes;
    e.error = prediction.ttt_minutes / point.published_minutes - 1.0;
    return e;
}

double mean_absolute_percentage_error(const std::vector<PointError>& errors) {
    if (errors.empty()) return 0.0;
    double sum = 0;
    for (const auto& e : errors) sum += std::abs(e.error);
    return 100.0 * sum / errors.size();
}

namespace {

struct Objective {
    const FitGroup* group;
    ComputeProfile base;
    bool fit_all;      // false: f_max only
    int* evaluations;

    ComputeProfile profile_from(const std::vector<double>& x) const {
        ComputeProfile p = base;
        p.max_flops_fraction = std::exp(x[0]);
        if (fit_all) {
            p.half_saturation_samples = std::exp(x[1]);
            p.fixed_step_seconds = std::exp(x[2]);
        }
        return p;
    }
    double operator()(const std::vector<double>& x) const {
        ++*evaluations;
        const ComputeProfile p = profile_from(x);
        double sum = 0;
        for (const CalibrationPoint* point : group->points)
            sum += sq(std::log(evaluate(point->fit_scenario, p).ttt_minutes / point->published_minutes));
        return sum;
    }
};

double nlopt_objective(const std::vector<double>& x, std::vector<double>& grad, void* data) {
    TTSIM_ASSERT(grad.empty(), "derivative-free fit was asked for a gradient");
    return (*static_cast<const Objective*>(data))(x);
}

ComputeProfile fit_group(const FitGroup& group, const ComputeProfile& start, bool fit_all, int* evaluations) {
    Objective objective{&group, start, fit_all, evaluations};
    std::vector<double> x{std::log(start.max_flops_fraction)};
    std::vector<double> lower{std::log(kMinFraction)}, upper{std::log(kMaxFraction)};
    if (fit_all) {
        x.push_back(std::log(start.half_saturation_samples));
        x.push_back(std::log(start.fixed_step_seconds));
        lower.insert(lower.end(), {std::log(kMinHalf), std::log(kMinFixed)});
        upper.insert(upper.end(), {std::log(kMaxHalf), std::log(kMaxFixed)});
    }
    // BOBYQA needs at least 2 variables; a 1-D fit uses Nelder-Mead (NLopt's LN_NELDERMEAD) within bounds.
    nlopt::opt opt(fit_all ? nlopt::LN_BOBYQA : nlopt::LN_NELDERMEAD, static_cast<unsigned>(x.size()));
    opt.set_lower_bounds(lower);
    opt.set_upper_bounds(upper);
    opt.set_min_objective(nlopt_objective, &objective);
    opt.set_xtol_rel(1e-6);
    opt.set_ftol_abs(1e-12);
    opt.set_maxeval(4000);
    std::vector<double> step(x.size(), 0.5);
    opt.set_initial_step(step);
    double best = 0;
    try {
        opt.optimize(x, best);
    } catch (const nlopt::roundoff_limited&) {
        // converged as far as floating point allows; x holds the best point
    }
    return objective.profile_from(x);
}

}  // namespace

namespace {

// Per-(workload, GPU) fits at a given shared multi-node step overhead; returns the summed squared log error.
double fit_all_groups(const std::map<std::pair<std::string, std::string>, FitGroup>& groups,
                      double multi_node_seconds, ProfileSet* out, int* evaluations) {
    // H100-SXM first (all parameters), then the others from H100's shape.
    std::map<std::string, ComputeProfile> h100;
    ProfileSet set;
    for (const auto& [key, group] : groups) {
        if (group.gpu != "H100-SXM") continue;
        ComputeProfile start;
        start.workload = group.workload;
        start.gpu = group.gpu;
        start.max_flops_fraction = 0.4;
        start.half_saturation_samples = 1.0;
        start.fixed_step_seconds = 0.005;
        start.multi_node_step_seconds = multi_node_seconds;
        ComputeProfile fitted = fit_group(group, start, true, evaluations);
        h100[group.workload] = fitted;
        set.add(fitted);
    }
    for (const auto& [key, group] : groups) {
        if (group.gpu == "H100-SXM") continue;
        ComputeProfile start;
        auto it = h100.find(group.workload);
        if (it != h100.end()) start = it->second;
        start.workload = group.workload;
        start.gpu = group.gpu;
        start.transferred_from.reset();
        start.multi_node_step_seconds = multi_node_seconds;
        const bool fit_all = it == h100.end();
        set.add(fit_group(group, start, fit_all, evaluations));
    }
    double sum = 0;
    for (const auto& [key, group] : groups) {
        const ComputeProfile p = set.find(find_workload(group.workload), find_gpu(group.gpu));
        for (const CalibrationPoint* point : group.points)
            sum += sq(std::log(evaluate(point->fit_scenario, p).ttt_minutes / point->published_minutes));
    }
    if (out) *out = std::move(set);
    return sum;
}

}  // namespace

CalibrationReport calibrate_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                   bool fit_multi_node) {
    std::map<std::pair<std::string, std::string>, FitGroup> groups;
    bool any_multi_node = false;
    for (const CalibrationPoint& p : points) {
        FitGroup& g = groups[{p.scenario.workload->name, p.scenario.gpu->name}];
        g.workload = p.scenario.workload->name;
        g.gpu = p.scenario.gpu->name;
        g.points.push_back(&p);
        any_multi_node = any_multi_node || p.scenario.gpus > p.scenario.gpu->gpus_per_scaleup_domain;
    }
    CalibrationReport report;
    report.data_description = description;
    // The shared multi-node step overhead: one value for all workloads and GPUs, chosen (golden-section search on
    // its logarithm within [kMinMultiNode, kMaxMultiNode]) to minimise the total squared log error with every
    // per-group profile refitted at each trial value. Without multi-node results it stays 0.
    double multi_node = 0.0;
    if (any_multi_node && fit_multi_node) {
        auto total = [&](double log_m) { return fit_all_groups(groups, std::exp(log_m), nullptr, &report.objective_evaluations); };
        double a = std::log(kMinMultiNode), b = std::log(kMaxMultiNode);
        const double g = (std::sqrt(5.0) - 1) / 2;
        double c = b - g * (b - a), d = a + g * (b - a);
        double fc = total(c), fd = total(d);
        while (b - a > 0.02) {
            if (fc < fd) {
                b = d; d = c; fd = fc; c = b - g * (b - a); fc = total(c);
            } else {
                a = c; c = d; fc = fd; d = a + g * (b - a); fd = total(d);
            }
        }
        multi_node = std::exp(0.5 * (a + b));
    }
    fit_all_groups(groups, multi_node, &report.profiles, &report.objective_evaluations);
    double sum = 0;
    for (const CalibrationPoint& p : points) {
        report.fitted.push_back(evaluate_point(p, report.profiles));
        sum += sq(std::log1p(report.fitted.back().error));
    }
    report.rms_log_error = points.empty() ? 0.0 : std::sqrt(sum / points.size());
    return report;
}

CalibrationReport calibrate(const CalibrationOptions& options) {
    std::vector<CalibrationPoint> all = load_calibration_points(options);
    std::vector<CalibrationPoint> used;
    for (auto& p : all)
        if (!options.max_gpus || p.scenario.gpus <= *options.max_gpus) used.push_back(std::move(p));
    std::string families;
    for (const auto& f : options.families) families += (families.empty() ? "" : ", ") + f;
    // Paths under the source tree are written relative to it, so the committed header does not name this machine.
    std::string data_name = results_path(options).string();
    const std::string root = std::string(TTSIM_SOURCE_DIR) + "/";
    if (data_name.rfind(root, 0) == 0) data_name = data_name.substr(root.size());
    std::string description = "data: " + data_name +
                              " (MLPerf Training v4.1, each distinct scored result once; target "
                              "ttt_minutes_official_scaled)\nfilter: accelerator families " + families +
                              (options.max_gpus ? "; results with <= " + std::to_string(*options.max_gpus) + " GPUs"
                                                : std::string("; all GPU counts")) +
                              "\nresults used: " + std::to_string(used.size()) +
                              "\nmodel: collectives simulated on the preset topology of each result's GPU "
                              "(CollectiveSimulator, auto algorithm, SHARP for NVIDIA multi-node); the fit uses each "
                              "result's published convergence (samples_to_converge_mean, RetinaNet epochs x train "
                              "samples), predictions use the RCPs; one multi-node per-step overhead shared by all workloads and GPUs, "
                              "fitted jointly (golden-section search, every group refitted)";
    return calibrate_points(used, description);
}

CrossValidationReport leave_one_gpu_count_out(const std::vector<CalibrationPoint>& points, int max_gpus,
                                              bool fit_multi_node) {
    std::map<int, int> counts;
    for (const CalibrationPoint& p : points)
        if (p.scenario.gpus <= max_gpus) ++counts[p.scenario.gpus];
    CrossValidationReport report;
    for (const auto& [left_out, n] : counts) {
        std::vector<CalibrationPoint> fit_set;
        std::vector<const CalibrationPoint*> test;
        std::map<std::pair<std::string, std::string>, int> kept;
        for (const CalibrationPoint& p : points) {
            if (p.scenario.gpus > max_gpus) continue;
            if (p.scenario.gpus == left_out) {
                test.push_back(&p);
            } else {
                fit_set.push_back(p);
                ++kept[{p.scenario.workload->name, p.scenario.gpu->name}];
            }
        }
        const CalibrationReport fit = calibrate_points(fit_set, "cross-validation fold", fit_multi_node);
        for (const CalibrationPoint* p : test)
            if (kept.count({p->scenario.workload->name, p->scenario.gpu->name}) &&
                kept.count({p->scenario.workload->name, "H100-SXM"}))
                report.predicted.push_back(evaluate_point(*p, fit.profiles));
    }
    report.mape_percent = mean_absolute_percentage_error(report.predicted);
    return report;
}

HoldoutReport holdout_validation(const std::vector<CalibrationPoint>& points, int fit_max_gpus, int predict_min_gpus) {
    std::vector<CalibrationPoint> fit_set;
    std::vector<const CalibrationPoint*> held_out;
    for (const CalibrationPoint& p : points) {
        if (p.scenario.gpus <= fit_max_gpus) fit_set.push_back(p);
        const std::string& gpu = p.scenario.gpu->name;
        if (p.scenario.gpus >= predict_min_gpus && (gpu == "H100-SXM" || gpu == "H200-SXM")) held_out.push_back(&p);
    }
    HoldoutReport report;
    report.fit = calibrate_points(fit_set, "hold-out fit: results with <= " + std::to_string(fit_max_gpus) + " GPUs");
    for (const CalibrationPoint* p : held_out) report.predicted.push_back(evaluate_point(*p, report.fit.profiles));
    report.mape_percent = mean_absolute_percentage_error(report.predicted);
    return report;
}

}  // namespace ttsim

#include <cstdio>

namespace ttsim {
std::string format_point_table(const std::vector<PointError>& points) {
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "%-17s %-9s %6s %6s %-24s %10s %10s %8s\n", "workload", "gpu", "gpus", "batch",
                  "submitter/system", "published", "predicted", "error%");
    out += line;
    for (const auto& p : points) {
        const std::string who = (p.submitter + "/" + p.system).substr(0, 24);
        std::snprintf(line, sizeof line, "%-17s %-9s %6d %6d %-24s %10.4f %10.4f %+8.2f\n", p.workload.c_str(),
                      p.gpu.c_str(), p.gpus, p.global_batch, who.c_str(), p.published_minutes, p.predicted_minutes,
                      100.0 * p.error);
        out += line;
    }
    return out;
}
}  // namespace ttsim
