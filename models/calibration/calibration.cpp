#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_loss.hpp"
#include "models/calibration/operator_fit.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/ranges.h>

#include "models/data_dir.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

// Bounds of the fitted parameters (physical plausibility, not tuning):
//  f_max: 2%..95% of peak; x_half: 0.001..1000 samples per GPU; fixed step cost: 10 us..1 s.
constexpr double kMinFraction = 0.02, kMaxFraction = 0.95;
constexpr double kMinHalf = 1e-3, kMaxHalf = 1e3;
constexpr double kMinFixed = 1e-5, kMaxFixed = 1.0;

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

double sq(double v) { return v * v; }

struct FitGroup {
    std::string workload, gpu;
    LossTerms loss;                // fit options SharedFit::loss_terms()
    std::vector<const CalibrationPoint*> points;
    std::vector<double> weights;   // per point: 1, or 1 / results at the same GPU count (configuration weights)
};

}  // namespace

std::vector<CalibrationPoint> load_calibration_points(const CalibrationOptions& options) {
    const auto file = results_path(options);
    const auto all = load_mlperf_results(file);
    const auto accumulation = accumulation_by_key(file);
    // Run logs (shipped v4.1_runs.csv unless named), matched to results by submitter/system/benchmark.
    const std::vector<MlperfRun> run_rows = load_mlperf_runs(options.runs_csv);
    std::map<std::string, std::vector<const MlperfRun*>> runs;
    for (const MlperfRun& run : run_rows)
        if (run.success && run.minutes && run.convergence_point) runs[run.key()].push_back(&run);
    // Logged step and evaluation times (shipped v4.1_timing.csv), by the same key. A log's step time counts only
    // where its evaluations were logged too: without eval intervals its segments include the evaluations.
    std::map<std::string, std::vector<double>> logged_steps, logged_evals, logged_excesses;
    for (const MlperfTiming& t : load_mlperf_timing()) {
        if (!t.log_read || !t.eval_blocking_minutes) continue;
        if (t.step_ms && *t.step_ms > 0) logged_steps[t.key()].push_back(*t.step_ms / 1e3);
        if (const auto excess = t.first_segment_excess_seconds()) logged_excesses[t.key()].push_back(*excess);
        if (const auto eval = t.eval_blocking_seconds()) logged_evals[t.key()].push_back(*eval);
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    std::vector<CalibrationPoint> points;
    for (const std::string& family : options.families) {
        ResultFilter filter;
        filter.accelerator_family = family;
        for (const MlperfResult& r : distinct_scored_results(all, filter)) {
            if (!r.global_batch_size || !r.ttt_minutes_official_scaled) continue;
            const Workload& workload = find_workload(r.benchmark);
            System system = resolve_system(r.accelerator_family);   // the GPU's preset system, default fabric
            system.name = r.system;
            auto it = accumulation.find(r.key());
            const ParallelismConfig layout = layout_of(workload, r, it == accumulation.end() ? 1 : it->second);
            CalibrationPoint p;
            p.result = r;
            p.scenario = prepare_with_layout(workload, system, r.n_accelerators, layout);
            p.fit_scenario = p.scenario;
            std::optional<double> samples = r.samples_to_converge_mean;
            if (!samples && r.epochs_to_converge_mean && workload.train_samples)
                samples = *r.epochs_to_converge_mean * static_cast<double>(*workload.train_samples);
            if (samples && *samples > 0) {
                p.fit_scenario.samples_mean = p.fit_scenario.samples_p10 = p.fit_scenario.samples_p90 = *samples;
                p.published_convergence = true;
            }
            p.published_minutes = *r.ttt_minutes_official_scaled;
            const bool epochs = r.benchmark == "ssd";   // RetinaNet logs epochs
            if (const auto found = runs.find(r.key()); found != runs.end() && (!epochs || workload.train_samples))
                for (const MlperfRun* run : found->second)
                    p.runs.push_back({*run->convergence_point *
                                          (epochs ? static_cast<double>(*workload.train_samples) : 1.0),
                                      *run->minutes * 60.0});
            if (const auto found = logged_steps.find(r.key()); found != logged_steps.end())
                p.measured_step_seconds = median(found->second);
            if (const auto found = logged_evals.find(r.key()); found != logged_evals.end() && workload.eval_on_the_clock)
                p.measured_eval_seconds = median(found->second);
            if (const auto found = logged_excesses.find(r.key()); found != logged_excesses.end())
                p.measured_excess_seconds = median(found->second);
            points.push_back(std::move(p));
        }
    }
    return points;
}

ComputeProfile point_profile(const CalibrationPoint& point, const ProfileSet& profiles) {
    ComputeProfile profile = profiles.find(*point.scenario.workload, *point.scenario.gpu);
    profile.operator_stack_speed *= speed_of(speed_keys(point), profiles.stack_speeds);
    return profile;
}

PointError evaluate_point(const CalibrationPoint& point, const ProfileSet& profiles) {
    const Prediction prediction = evaluate(point.scenario, point_profile(point, profiles));
    PointError e;
    e.workload = point.scenario.workload->name;
    e.gpu = point.scenario.gpu->name;
    e.submitter = point.result.submitter;
    e.system = point.result.system;
    e.gpus = point.scenario.gpus;
    e.global_batch = point.scenario.layout.global_batch;
    e.published_minutes = point.published_minutes;
    e.predicted_minutes = prediction.ttt_minutes;
    e.predicted_ms = prediction.step_ms;
    if (point.measured_step_seconds) e.published_ms = *point.measured_step_seconds * 1e3;
    e.step_time_only = point.published_minutes <= 0;
    TTSIM_ASSERT(!e.step_time_only || point.measured_step_seconds, "calibration point without a measurement");
    e.error = e.step_time_only ? e.predicted_ms / e.published_ms - 1.0 : prediction.ttt_minutes / point.published_minutes - 1.0;
    return e;
}

double mean_absolute_percentage_error(const std::vector<PointError>& errors) {
    if (errors.empty()) return 0.0;
    double sum = 0;
    for (const auto& e : errors) sum += std::abs(e.error);
    return 100.0 * sum / errors.size();
}

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
        for (std::size_t i = 0; i < group->points.size(); ++i) {
            const CalibrationPoint* point = group->points[i];
            sum += group->weights[i] * point_loss(*point, p, group->loss);
        }
        return sum;
    }
};


// Which per-group parameters a fit frees: f_max always; x_half unless it comes from the shared half-saturation
// work; the fixed step cost. `shape` false: f_max only (GPUs that take their shape from H100-SXM).
std::vector<FreeParameter> free_parameters(bool shape, bool shared_half_work, bool run_overhead_per_workload) {
    std::vector<FreeParameter> free{{&ComputeProfile::max_flops_fraction, kMinFraction, kMaxFraction}};
    if (!shape) return free;
    if (run_overhead_per_workload) free.push_back({&ComputeProfile::run_overhead_seconds, 0.01, 300.0});
    if (!shared_half_work) free.push_back({&ComputeProfile::half_saturation_samples, kMinHalf, kMaxHalf});
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
    double multi_node = 0, run_overhead = 0, step_jitter = 0;
    double jitter_cv = 0;   // 0 = ComputeProfile's default step_jitter_cv
    bool run_overhead_per_workload = false;
    double half_work = 0;   // FLOPs per GPU per micro step at half of f_max; 0 = x_half fitted per group
    double eval_fixed = 0;  // seconds per evaluation besides its forward passes; 0 = ComputeProfile's default
    bool jitter_per_node = false;   // ComputeProfile::step_jitter_per_node (not fitted: a model choice)
};

void apply_shared(ComputeProfile& p, const SharedValues& v) {
    p.multi_node_step_seconds = v.multi_node;
    p.step_jitter_seconds = v.step_jitter;
    if (v.jitter_cv > 0) p.step_jitter_cv = v.jitter_cv;
    if (v.eval_fixed > 0) p.eval_fixed_seconds = v.eval_fixed;
    p.step_jitter_per_node = v.jitter_per_node;
    if (!v.run_overhead_per_workload) p.run_overhead_seconds = v.run_overhead;
    if (v.half_work > 0)
        p.half_saturation_samples = v.half_work / find_workload(p.workload).train_flops_per_sample;
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
        ComputeProfile fitted = fit_group(group, start, free_parameters(true, shared.half_work > 0, shared.run_overhead_per_workload), evaluations);
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
        set.add(fit_group(group, start, free_parameters(shape, shared.half_work > 0, shared.run_overhead_per_workload), evaluations));
    }
    double sum = 0;
    for (const auto& [key, group] : groups) {
        const ComputeProfile p = set.find(find_workload(group.workload), find_gpu(group.gpu));
        for (std::size_t i = 0; i < group.points.size(); ++i) {
            const CalibrationPoint* point = group.points[i];
            sum += group.weights[i] * point_loss(*point, p, group.loss);
        }
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

SharedFit SharedFit::parse(const std::string& list) {
    SharedFit f;
    const std::pair<const char*, bool SharedFit::*> names[] = {
        {"multi-node", &SharedFit::multi_node},   {"run-overhead", &SharedFit::run_overhead},
        {"step-jitter", &SharedFit::step_jitter}, {"half-work", &SharedFit::half_work},
        {"jitter-cv", &SharedFit::jitter_cv},     {"workload-run-overhead", &SharedFit::workload_run_overhead},
        {"config-weights", &SharedFit::configuration_weights}, {"eval-fixed", &SharedFit::eval_fixed},
        {"run-logs", &SharedFit::run_logs},       {"jitter-nodes", &SharedFit::jitter_nodes},
        {"robust", &SharedFit::robust},           {"operator", &SharedFit::operator_model},
        {"system-speed", &SharedFit::system_speed}, {"release-speed", &SharedFit::release_speed},
        {"kernel-overhead", &SharedFit::kernel_overhead},
        {"tp-exposed", &SharedFit::tp_exposed},   {"host-overlap", &SharedFit::host_overlap},
        {"step-logs", &SharedFit::step_logs},     {"eval-logs", &SharedFit::eval_logs},
        {"eval-cost", &SharedFit::eval_cost},     {"eval-step-cost", &SharedFit::eval_step_cost},
        {"warmup-logs", &SharedFit::warmup_logs},
        {"efficiency-prior", &SharedFit::efficiency_prior}, {"eval-passes", &SharedFit::eval_passes}};
    for (const auto& [text, member] : names) f.*member = false;   // the list names everything that is on
    if (list == "none") return f;
    std::size_t start = 0;
    while (true) {   // every comma-separated token, empty ones included (they are errors)
        const std::size_t comma = list.find(',', start);
        const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        bool known = false;
        for (const auto& [text, member] : names)
            if (name == text) known = f.*member = true;
        if (!known)
            throw InputError("unknown shared parameter '" + name +
                                 "' (expected a comma-separated list of " + kSharedParameterNames + ", or none)",
                             Field::shared_parameters);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (f.eval_cost && !f.operator_model)
        throw InputError("eval-cost is a term of the operator model: add operator to the list", Field::shared_parameters);
    if (f.eval_step_cost && !f.operator_model)
        throw InputError("eval-step-cost is a term of the operator model: add operator to the list",
                         Field::shared_parameters);
    if (f.warmup_logs && !f.run_overhead && !f.workload_run_overhead)
        throw InputError("warmup-logs fits the per-run overhead to the logs: add run-overhead or workload-run-overhead",
                         Field::shared_parameters);
    if (f.run_overhead && f.workload_run_overhead)
        throw InputError("run-overhead (one shared value) and workload-run-overhead (one per workload) exclude each other",
                         Field::shared_parameters);
    return f;
}

std::string SharedFit::operator_only_term() const {
    for (const auto& [on, name] : {std::pair{kernel_overhead, "kernel-overhead"}, std::pair{tp_exposed, "tp-exposed"},
                                   std::pair{host_overlap, "host-overlap"}, std::pair{system_speed, "system-speed"}, std::pair{release_speed, "release-speed"},
                                   std::pair{eval_cost, "eval-cost"}, std::pair{eval_step_cost, "eval-step-cost"},
                                   std::pair{efficiency_prior, "efficiency-prior"},
                                   std::pair{eval_passes, "eval-passes"}})
        if (on) return name;
    return "";
}

LossTerms SharedFit::loss_terms() const {
    return LossTerms{run_logs, robust, step_logs, eval_logs, warmup_logs};
}

SharedFit SharedFit::operator_defaults() {
    SharedFit f;
    f.operator_model = f.kernel_overhead = f.tp_exposed = f.step_logs = f.eval_logs = true;
    return f;
}

std::string SharedFit::describe() const {
    std::vector<std::string_view> on_names;
    auto add = [&](bool on, std::string_view name) {
        if (on) on_names.push_back(name);
    };
    add(multi_node, "multi-node");
    add(run_overhead, "run-overhead");
    add(step_jitter, "step-jitter");
    add(half_work, "half-work");
    add(jitter_cv, "jitter-cv");
    add(workload_run_overhead, "workload-run-overhead");
    add(configuration_weights, "config-weights");
    add(eval_fixed, "eval-fixed");
    add(run_logs, "run-logs");
    add(jitter_nodes, "jitter-nodes");
    add(robust, "robust");
    add(operator_model, "operator");
    add(system_speed, "system-speed");
    add(release_speed, "release-speed");
    add(kernel_overhead, "kernel-overhead");
    add(tp_exposed, "tp-exposed");
    add(host_overlap, "host-overlap");
    add(step_logs, "step-logs");
    add(eval_logs, "eval-logs");
    add(eval_cost, "eval-cost");
    add(eval_step_cost, "eval-step-cost");
    add(warmup_logs, "warmup-logs");
    add(efficiency_prior, "efficiency-prior");
    add(eval_passes, "eval-passes");
    return on_names.empty() ? "none" : fmt::format("{}", fmt::join(on_names, ","));
}

CalibrationReport calibrate_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                   const SharedFit& shared) {
    if (shared.operator_model) return calibrate_operator_points(points, description, shared);
    std::map<std::pair<std::string, std::string>, FitGroup> groups;
    bool any_multi_node = false;
    for (const CalibrationPoint& p : points) {
        FitGroup& g = groups[{p.scenario.workload->name, p.scenario.gpu->name}];
        g.workload = p.scenario.workload->name;
        g.gpu = p.scenario.gpu->name;
        g.loss = shared.loss_terms();
        g.points.push_back(&p);
        any_multi_node = any_multi_node || p.scenario.gpus > p.scenario.gpu->gpus_per_scaleup_domain;
    }
    for (auto& [key, g] : groups) {
        std::map<int, int> per_count;
        for (const CalibrationPoint* p : g.points) ++per_count[p->scenario.gpus];
        for (const CalibrationPoint* p : g.points)
            g.weights.push_back(shared.configuration_weights ? 1.0 / per_count[p->scenario.gpus] : 1.0);
    }
    CalibrationReport report;
    report.data_description = description;
    // Bounds: multi-node overhead 10 us..100 ms per step; run overhead 10 ms..5 min per run (the rules exclude up to
    // 30 min of initialisation before run_start, so what remains on the clock is far smaller); step jitter
    // 1 us..50 ms per step. Without multi-node results the multi-node overhead stays 0.
    std::vector<SharedDimension> dims;
    if (shared.multi_node && any_multi_node) dims.push_back({{&SharedValues::multi_node, 1e-5, 0.1}, 0.005});
    if (shared.run_overhead) dims.push_back({{&SharedValues::run_overhead, 0.01, 300.0}, 5.0});
    if (shared.step_jitter) dims.push_back({{&SharedValues::step_jitter, 1e-6, 0.05}, 1e-4});
    // Relative per-GPU step-time noise: 0.01%..30%.
    if (shared.jitter_cv) dims.push_back({{&SharedValues::jitter_cv, 1e-4, 0.3}, 0.01});
    // Half-saturation work: 1 GFLOP..1 PFLOP per GPU per micro step.
    if (shared.half_work) dims.push_back({{&SharedValues::half_work, 1e9, 1e15}, 5e12});
    // Fixed cost per on-the-clock evaluation (mode switches, loader set-up, metric reduction): 1 ms..30 s.
    if (shared.eval_fixed) dims.push_back({{&SharedValues::eval_fixed, 1e-3, 30.0}, 0.05});
    SharedValues base;
    base.run_overhead_per_workload = shared.workload_run_overhead;
    base.jitter_per_node = shared.jitter_nodes;
    const SharedValues values = fit_shared(groups, dims, base, &report.objective_evaluations);
    fit_all_groups(groups, values, &report.profiles, &report.objective_evaluations);
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
    const std::string families = fmt::format("{}", fmt::join(options.families, ", "));
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
                              "samples), predictions use the RCPs" +
                              (options.shared.run_logs
                                   ? std::string("; results whose runs converged at different points are fitted run by "
                                                 "run instead (target: each run's minutes in v4.1_runs.csv at its own "
                                                 "convergence point)")
                                   : std::string()) +
                              "; shared parameters fitted jointly over all workloads and GPUs "
                              "(every group refitted at each trial): " + options.shared.describe();
    return calibrate_points(used, description, options.shared);
}

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
        for (const CalibrationPoint* p : test)
            if (kept.count({p->scenario.workload->name, p->scenario.gpu->name}) &&
                kept.count({p->scenario.workload->name, reference_gpu().name}))
                report.predicted.push_back(evaluate_point(*p, fit.profiles));
    }
    report.mape_percent = mean_absolute_percentage_error(report.predicted);
    return report;
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

namespace ttsim {
std::string format_point_table(const std::vector<PointError>& points) {
    std::string out = fmt::format("{:<17} {:<9} {:>6} {:>6} {:<24} {:>10} {:>10} {:>8}\n", "workload", "gpu", "gpus",
                                  "batch", "submitter/system", "published", "predicted", "error%");
    for (const auto& p : points) {
        const std::string who = (p.submitter + "/" + p.system).substr(0, 24);
        fmt::format_to(std::back_inserter(out), "{:<17} {:<9} {:>6} {:>6} {:<24} {:>10.4f} {:>10.4f} {:>+8.2f}\n",
                       p.workload, p.gpu, p.gpus, p.global_batch, who, p.published_minutes, p.predicted_minutes,
                       100.0 * p.error);
    }
    return out;
}
}  // namespace ttsim
