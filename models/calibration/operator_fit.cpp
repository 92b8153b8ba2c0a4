#include "models/calibration/operator_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "models/calibration/fit_loss.hpp"
#include "models/calibration/parameter_table.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"
#include "sim/statistics.hpp"
#include "sim/units.hpp"

namespace ttsim {

std::vector<std::string> speed_keys(const CalibrationPoint& point) {
    std::vector<std::string> keys = speed_keys(point.result.submitter, point.scenario.gpu->name);
    // A round's software against the default round's, which is the reference and has no offset.
    if (!point.result.round.empty() && point.result.round != mlperf_rounds().default_round)
        keys.push_back(round_offset_key(point.result.round, point.scenario.workload->name, point.scenario.gpu->name));
    return keys;
}

namespace {

// A workload's fixed per-step cost where the fit cannot identify it (one per-GPU batch in the workload's results:
// build_layout): its lower bound, 10 us.
const double kHeldFixedStepSeconds = operator_parameter_spec("fixed step seconds", ParamScope::workload).lower;

// Starts of the fit besides the priors (fit_loss.hpp minimise_bounded): the objective has several local optima.
constexpr int kOperatorFitExtraStarts = 4;
// The evaluation stage (a few dimensions, flat where the evaluations are GPU-bound): more starts.
constexpr int kEvalStageExtraStarts = 16;

// One searched value: its name and its row of the parameter table (bounds, start at the prior's centre, prior).
struct Dimension {
    std::string name;
    double lower, upper, start;
    const ParamSpec* spec;
};

// Where each parameter sits in the search vector.
struct Layout {
    std::vector<Dimension> dims;
    int gemm = -1, conv = -1, attention = -1, memory = -1, launch = -1, eval_launch = -1, kernel_overhead = -1,
        tp_exposed = -1, jitter_cv = -1;
    std::map<std::string, int> gpu_speed, fixed_step, workload_run_overhead, stack_speed, eval_host_ops;
    std::map<std::string, double> logged_run_overhead;   // seconds per workload from its logs, not searched
    std::map<std::string, double> logged_scoring;        // seconds per workload from its logs, added to the overhead
    std::set<std::string> gpus, workloads;               // of the fitted results
    std::map<std::string, std::vector<int>> family_stacks;   // per GPU family, the indices of its stacks' offsets
    // The parameter `kind` of that scope, named after its owner (a GPU family, workload or stack) where it has one.
    int add(std::string_view kind, ParamScope scope, const std::string& owner = "") {
        const ParamSpec& s = operator_parameter_spec(kind, scope);
        dims.push_back({owner.empty() ? std::string(kind) : owner + " " + std::string(kind), s.lower, s.upper, s.centre, &s});
        return static_cast<int>(dims.size()) - 1;
    }
};

struct Problem {
    const std::vector<const CalibrationPoint*>* points;
    std::vector<std::vector<int>> speed_indices;   // per point: the search indices of its fitted stack/round speeds
    // Results on one GPU whose tables price alike (same_kernel_prices: the same layout on the same GPU, as many
    // submitters run) share one kernel_sums per evaluation, which is most of a result's pricing: per point its
    // group, per group its first point.
    std::vector<std::size_t> sums_group, group_points;
    Layout layout;
    LossTerms terms;
    // Evaluations priced as the framework's own passes with their host work (ComputeProfile::operator_eval_passes);
    // false in the fit's first stage, which prices them as training forwards.
    bool eval_passes = true;
    int* evaluations;
    // The evaluation stage: the full log-parameter vector with every dimension at its first-stage value, and the
    // dimensions the search moves (the search vector holds only these). Empty: the search moves every one.
    std::vector<double> frozen;
    std::vector<int> free_dims;
    // The stacks of a family located at the family (stack_location_penalty); not where the physics is held (a
    // user's runs), as the held physics cannot take up a common shift and a user's stack is one new submitter.
    bool locate_stacks = true;

    std::vector<double> expand(const std::vector<double>& searched) const {
        if (free_dims.empty()) return searched;
        std::vector<double> full = frozen;
        for (std::size_t i = 0; i < free_dims.size(); ++i) full[static_cast<std::size_t>(free_dims[i])] = searched[i];
        return full;
    }

    double value(const std::vector<double>& x, int index, double fallback) const {
        return index < 0 ? fallback : std::exp(x[static_cast<std::size_t>(index)]);
    }

    ComputeProfile profile(const std::vector<double>& x, const std::string& workload, const std::string& gpu) const {
        ComputeProfile p;
        p.workload = workload;
        p.gpu = gpu;
        layers::Efficiency e;
        e.gemm = value(x, layout.gemm, e.gemm);
        e.conv = value(x, layout.conv, e.conv);
        e.attention = value(x, layout.attention, e.attention);
        e.memory = value(x, layout.memory, e.memory);
        e.launch_seconds = value(x, layout.launch, e.launch_seconds);
        e.graph_launch_seconds = 2 * e.launch_seconds;
        e.eval_launch_seconds = value(x, layout.eval_launch, 0.0);
        e.kernel_overhead_seconds = value(x, layout.kernel_overhead, 0.0);
        p.operator_efficiency = e;
        p.operator_graph_host_overlap = true;
        p.operator_eval_passes = eval_passes;
        const auto speed = layout.gpu_speed.find(gpu);
        p.operator_speed = speed == layout.gpu_speed.end() ? 1.0 : value(x, speed->second, 1.0);
        const auto fixed = layout.fixed_step.find(workload);
        p.fixed_step_seconds = fixed == layout.fixed_step.end() ? kHeldFixedStepSeconds : value(x, fixed->second, 0.0);
        const auto run = layout.workload_run_overhead.find(workload);
        const auto logged = layout.logged_run_overhead.find(workload);
        p.run_overhead_seconds = logged != layout.logged_run_overhead.end() ? logged->second
                                 : run != layout.workload_run_overhead.end() ? value(x, run->second, 0.0)
                                                                             : 0.0;
        if (const auto scoring = layout.logged_scoring.find(workload); scoring != layout.logged_scoring.end())
            p.run_overhead_seconds += scoring->second;
        p.step_jitter_cv = value(x, layout.jitter_cv, p.step_jitter_cv);
        if (const auto ops = layout.eval_host_ops.find(workload); ops != layout.eval_host_ops.end())
            p.eval_host_kernels_per_sample = value(x, ops->second, 0.0);
        p.step_jitter_per_node = true;
        p.tp_comm_exposed_fraction = value(x, layout.tp_exposed, p.tp_comm_exposed_fraction);
        return p;
    }

    // The product of the point's fitted speeds (speed_keys, looked up once: speed_indices).
    double stack_speed(const std::vector<double>& x, std::size_t point) const {
        double speed = 1.0;
        for (int index : speed_indices[point]) speed *= value(x, index, 1.0);
        return speed;
    }

    double operator()(const std::vector<double>& searched) const {
        ++*evaluations;
        const std::vector<double> x = expand(searched);
        // Each group's kernel sums, then each result's loss, on TBB threads (every result simulates its own
        // iteration), the losses summed in result order, so the fit is the same at any thread count.
        using Range = tbb::blocked_range<std::size_t>;
        std::vector<ScenarioKernelSums> sums(group_points.size());
        tbb::parallel_for(Range(0, group_points.size()), [&](const Range& range) {
            for (std::size_t g = range.begin(); g != range.end(); ++g) {
                const PreparedScenario& s = (*points)[group_points[g]]->fit_scenario;
                sums[g] = kernel_sums(s, profile(x, s.workload->name, s.gpu->name));
            }
        });
        std::vector<double> losses(points->size());
        tbb::parallel_for(Range(0, points->size()), [&](const Range& range) {
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                const CalibrationPoint& point = *(*points)[i];
                ComputeProfile p = profile(x, point.scenario.workload->name, point.scenario.gpu->name);
                p.operator_stack_speed *= stack_speed(x, i);
                losses[i] = point_loss(point, p, terms, &sums[sums_group[i]]);
            }
        });
        double sum = 0;
        for (double loss : losses) sum += loss;
        // Every searched parameter's prior, in units of the loss (parameter_table.hpp): the posterior mode.
        for (std::size_t i = 0; i < layout.dims.size(); ++i) sum += prior_penalty(*layout.dims[i].spec, x[i]);
        if (locate_stacks)
            for (const auto& [family, indices] : layout.family_stacks) {
                std::vector<double> logs;
                for (int index : indices) logs.push_back(x[static_cast<std::size_t>(index)]);
                sum += stack_location_penalty(logs);
            }
        return sum;
    }
};


// Per workload, the median of a logged figure over the results that have it.
std::map<std::string, double> median_by_workload(const std::vector<const CalibrationPoint*>& points,
                                                 std::optional<double> CalibrationPoint::*figure) {
    std::map<std::string, std::vector<double>> values;
    for (const CalibrationPoint* p : points)
        if (p->*figure) values[p->scenario.workload->name].push_back(*(p->*figure));
    std::map<std::string, double> medians;
    for (auto& [w, v] : values) medians[w] = median(v);
    return medians;
}

// The searched dimensions of the model on these results; with `evaluation_terms` false, those of the first stage
// (no evaluation host terms). A parameter no result can see is not searched: it stays at its prior value, where a
// search would leave it wherever it started.
Layout build_layout(const std::vector<const CalibrationPoint*>& points, bool evaluation_terms) {
    Layout L;
    std::set<std::string>& gpus = L.gpus;
    std::set<std::string>& workloads = L.workloads;
    std::set<std::string> rounds;
    std::map<std::string, std::pair<std::string, std::string>> round_offsets;   // key -> its (workload, GPU family)
    std::set<std::pair<std::string, std::string>> default_round_cells;         // (workload, GPU family)
    std::map<std::string, std::string> stacks;   // a stack's key and its GPU family
    // Per workload: a time to train among its results (the per-run overhead is visible), an evaluation the loss
    // sees (a time to train of a run with evaluations on the clock, or a logged evaluation), its per-GPU batches.
    std::set<std::string> run_visible, eval_visible;
    std::map<std::string, std::set<double>> per_gpu_batches;
    bool any_straggler = false, any_model_parallel = false;
    for (const CalibrationPoint* p : points) {
        const std::string& w = p->scenario.workload->name;
        gpus.insert(p->scenario.gpu->name);
        workloads.insert(w);
        rounds.insert(p->result.round);
        if (p->result.round.empty() || p->result.round == mlperf_rounds().default_round)
            default_round_cells.insert({w, p->scenario.gpu->name});
        for (const std::string& key : speed_keys(*p)) {
            if (is_round_offset(key)) round_offsets[key] = {w, p->scenario.gpu->name};
            else stacks[key] = p->scenario.gpu->name;
        }
        if (p->published_minutes > 0) run_visible.insert(w);
        if (p->scenario.evaluations > 0 && (p->published_minutes > 0 || p->measured_eval_seconds)) eval_visible.insert(w);
        per_gpu_batches[w].insert(p->scenario.samples_per_gpu);
        any_straggler = any_straggler || p->scenario.node_straggler_sigmas > 0;
        any_model_parallel = any_model_parallel || p->scenario.tp_cp_comm_seconds_per_micro_step > 0;
    }
    // Efficiencies: a GEMM reaches 20-100 % of the dense peak, convolutions and attention 5-100 %, a streaming
    // kernel 30-100 % of HBM bandwidth.
    L.gemm = L.add("gemm efficiency", ParamScope::global);
    L.conv = L.add("conv efficiency", ParamScope::global);
    L.attention = L.add("attention efficiency", ParamScope::global);
    L.memory = L.add("memory efficiency", ParamScope::global);
    // An eager launch costs at least the CUDA launch itself, ~2 us of host time (kernel_time.hpp): below that the
    // fit would be free to make eager small-batch steps cheaper than the driver allows, which the <= 64-GPU
    // results (never launch-bound) cannot contradict.
    L.launch = L.add("launch seconds", ParamScope::global);
    // The eager evaluation loops' host cost per kernel: from the CUDA launch to 2 ms (a Python framework op of
    // several PyTorch dispatches, hooks and host syncs).
    if (evaluation_terms && !eval_visible.empty()) L.eval_launch = L.add("eval launch seconds", ParamScope::global);
    // GPU time per kernel beyond the roofline: 0.1-20 us.
    L.kernel_overhead = L.add("kernel overhead seconds", ParamScope::global);
    // Speed of a GPU family against its roofline: 0.3-3x the reference GPU's.
    for (const std::string& gpu : gpus)
        if (gpu != reference_gpu().name) L.gpu_speed[gpu] = L.add("speed", ParamScope::gpu_family, gpu);
    // Per workload: the per-run overhead is what its fit results' logs measure (the median first-segment excess,
    // clamped to 10 ms..5 min), searched within those bounds where no log gives it; the final scoring of an
    // asynchronously scored evaluation (RetinaNet's COCO scoring) is added once a run as its logs measure it.
    const std::map<std::string, double> excesses = median_by_workload(points, &CalibrationPoint::measured_excess_seconds);
    L.logged_scoring = median_by_workload(points, &CalibrationPoint::measured_final_scoring_seconds);
    for (const std::string& w : workloads) {
        // The fixed per-step cost (10 us..1 s), searched only where the workload's results run at two or more
        // per-GPU batches: with one, a step is explained as well by its kernels as by a fixed cost that makes it
        // host-bound, and a host-bound step would stay as long at half the per-GPU batch.
        if (per_gpu_batches[w].size() > 1)
            L.fixed_step[w] = L.add("fixed step seconds", ParamScope::workload, w);
        if (const auto found = excesses.find(w); found != excesses.end()) {
            const ParamSpec& bounds = operator_parameter_spec("run overhead seconds", ParamScope::workload);
            L.logged_run_overhead[w] = std::clamp(found->second, bounds.lower, bounds.upper);
        } else if (run_visible.count(w)) {
            L.workload_run_overhead[w] = L.add("run overhead seconds", ParamScope::workload, w);
        }
    }
    // Relative step-time noise per node (stragglers wait for the slowest node), where some result spans nodes.
    if (any_straggler) L.jitter_cv = L.add("step jitter cv", ParamScope::global);
    // Per workload with evaluations on the clock: 1-100,000 eager host operations per evaluation sample beyond the
    // catalog's (a 70B decoder's 80 layers at ~1,000 a layer at most).
    if (evaluation_terms)
        for (const std::string& w : workloads)
            if (find_workload(w).eval_on_the_clock && eval_visible.count(w))
                L.eval_host_ops[w] = L.add("eval host kernels per sample", ParamScope::workload, w);
    // Share of TP/CP collective time exposed: 1-100 %.
    if (any_model_parallel) L.tp_exposed = L.add("TP/CP exposed fraction", ParamScope::global);
    // Stack speeds within a factor 4 of their family, with their prior, located at their family.
    for (const auto& [stack, family] : stacks) {
        L.stack_speed[stack] = L.add("speed", ParamScope::software_stack, stack);
        L.family_stacks[family].push_back(L.stack_speed[stack]);
    }
    // A fit over several rounds: each round's software per workload and GPU family against the default round's
    // (the reference, 1), with the stacks' bounds and prior, where the default round has results of that workload
    // on that family to offset against. Elsewhere (a family or workload only other rounds ran: GB200 and the AMD
    // parts only in v5.0) the offset and the family's speed are one unknown: its results price the family's
    // physics directly, which the default round's predictions then use (an offset there, held to 1 only by its
    // prior, would let one outlying cell drag the family's speed while another cell's offset took up the rest).
    // One round alone has nothing to offset against.
    if (rounds.size() > 1)
        for (const auto& [key, cell] : round_offsets)
            if (default_round_cells.count(cell)) L.stack_speed[key] = L.add("speed", ParamScope::round, key);
    return L;
}

// Held physics (a user's runs): the global and GPU-family dimensions of `layout` set in `x` to `held`'s values
// (its profile of the fitted results' first workload on each GPU; ProfileSet::find transfers one where it has
// none), clamped into the bounds. Returns the indices held; none where `held` has no operator profile to hold.
std::set<int> hold_physics(const Layout& layout, const ProfileSet& held, std::vector<double>& x) {
    const Workload& workload = find_workload(*layout.workloads.begin());
    const ComputeProfile reference = held.find(workload, reference_gpu());
    if (!reference.operator_efficiency) return {};
    const layers::Efficiency& e = *reference.operator_efficiency;
    std::set<int> indices;
    auto set = [&](int index, double value) {
        if (index < 0) return;
        const Dimension& d = layout.dims[static_cast<std::size_t>(index)];
        x[static_cast<std::size_t>(index)] = std::log(std::clamp(value, d.lower, d.upper));
        indices.insert(index);
    };
    set(layout.gemm, e.gemm);
    set(layout.conv, e.conv);
    set(layout.attention, e.attention);
    set(layout.memory, e.memory);
    set(layout.launch, e.launch_seconds);
    set(layout.eval_launch, e.eval_launch_seconds > 0 ? e.eval_launch_seconds : e.launch_seconds);
    set(layout.kernel_overhead, e.kernel_overhead_seconds);
    set(layout.jitter_cv, reference.step_jitter_cv);
    set(layout.tp_exposed, reference.tp_comm_exposed_fraction);
    for (const auto& [gpu, index] : layout.gpu_speed) {
        const ComputeProfile own = held.find(workload, find_gpu(gpu));
        if (!own.operator_efficiency) return {};
        set(index, own.operator_speed);
    }
    return indices;
}

// The identifiability report of the fitted dimensions `fitted` at the optimum `x` (parameter_table.hpp), and each
// profile's parameter_sd: the standard deviation of its fitted results' mean log step time under the parameter
// covariance (its gradient by central differences, 2 % steps in log units). Stack and round offsets do not enter
// a profile's own step (a prediction for an unnamed stack takes the pooled value, 1); a profile without fitted
// results of its own keeps 0 (unknown).
std::vector<ParameterEstimate> parameter_uncertainty(const Problem& problem, const std::vector<double>& x,
                                                     const std::vector<int>& fitted,
                                                     const std::vector<const CalibrationPoint*>& points,
                                                     ProfileSet& profiles) {
    Problem sub = problem;   // the loss over the fitted dimensions, the held ones at x
    sub.frozen = x;
    sub.free_dims = fitted;
    std::vector<double> y;
    std::vector<std::string> names;
    std::vector<const ParamSpec*> specs;
    for (int i : fitted) {
        y.push_back(x[static_cast<std::size_t>(i)]);
        names.push_back(problem.layout.dims[static_cast<std::size_t>(i)].name);
        specs.push_back(problem.layout.dims[static_cast<std::size_t>(i)].spec);
    }
    if (fitted.empty()) return {};
    std::vector<double> covariance;
    std::vector<ParameterEstimate> estimates =
        laplace_estimates([&sub](const std::vector<double>& v) { return sub(v); }, y, names, specs, &covariance);
    const std::size_t n = fitted.size();
    std::set<int> offsets;
    for (const auto& [key, index] : problem.layout.stack_speed) offsets.insert(index);
    std::map<std::pair<std::string, std::string>, std::vector<const CalibrationPoint*>> groups;
    for (const CalibrationPoint* p : points) groups[{p->scenario.workload->name, p->scenario.gpu->name}].push_back(p);
    constexpr double h = 0.02;
    const auto all = profiles.all();   // a copy: add() replaces entries
    for (auto [cell, profile] : all) {
        const auto group = groups.find(cell);
        if (group == groups.end()) continue;
        const std::pair<std::string, std::string> key = cell;   // a lambda may not capture a structured binding (clang 14)
        auto mean_log_step = [&](const std::vector<double>& full) {
            const ComputeProfile p = problem.profile(full, key.first, key.second);
            double sum = 0;
            for (const CalibrationPoint* point : group->second) sum += std::log(run_clock(point->fit_scenario, p).step_seconds);
            return sum / static_cast<double>(group->second.size());
        };
        std::vector<double> gradient(n, 0.0);
        for (std::size_t k = 0; k < n; ++k) {
            const auto i = static_cast<std::size_t>(fitted[k]);
            if (offsets.count(fitted[k])) continue;
            std::vector<double> up = x, down = x;
            up[i] += h;
            down[i] -= h;
            gradient[k] = (mean_log_step(up) - mean_log_step(down)) / (2 * h);
        }
        double variance = 0;
        for (std::size_t a = 0; a < n; ++a)
            for (std::size_t b = 0; b < n; ++b) variance += gradient[a] * covariance[a * n + b] * gradient[b];
        profile.parameter_sd = std::sqrt(std::max(0.0, variance));
        profiles.add(std::move(profile));
    }
    return estimates;
}

}  // namespace

CalibrationReport calibrate_operator_points(const std::vector<CalibrationPoint>& all_points, const std::string& description,
                                            const SharedFit& shared, const ConvergenceLags& convergence_lags,
                                            const ProfileSet* held) {
    std::vector<const CalibrationPoint*> points;
    for (const CalibrationPoint& p : all_points)
        if (p.scenario.operator_table) points.push_back(&p);
    TTSIM_ASSERT(!points.empty(), "operator calibration without a result whose workload has a layer graph");

    CalibrationReport report;
    // The problem of one stage: its dimensions and each result's speed indices into them.
    auto prepare = [&](bool evaluation_terms) {
        Problem problem;
        problem.points = &points;
        problem.terms = shared.loss_terms();
        problem.eval_passes = evaluation_terms;
        problem.evaluations = &report.objective_evaluations;
        problem.layout = build_layout(points, evaluation_terms);
        for (const CalibrationPoint* p : points) {
            const std::vector<std::size_t>& firsts = problem.group_points;
            const auto alike = std::find_if(firsts.begin(), firsts.end(), [&](std::size_t first) {
                const PreparedScenario& q = points[first]->fit_scenario;
                return q.workload->name == p->fit_scenario.workload->name && q.gpu->name == p->fit_scenario.gpu->name &&
                       same_kernel_prices(q, p->fit_scenario);
            });
            problem.sums_group.push_back(static_cast<std::size_t>(alike - firsts.begin()));
            if (alike == problem.group_points.end()) problem.group_points.push_back(problem.sums_group.size() - 1);
            std::vector<int>& indices = problem.speed_indices.emplace_back();
            for (const std::string& key : speed_keys(*p))
                if (const auto found = problem.layout.stack_speed.find(key); found != problem.layout.stack_speed.end())
                    indices.push_back(found->second);
        }
        return problem;
    };
    // Searches the problem's free dimensions (all when it freezes none) from `x` (log values, every dimension).
    auto search = [](const Problem& problem, std::vector<double>& x, int extra_starts) {
        std::vector<int> dims = problem.free_dims;   // ascending, as expand() reads them
        if (dims.empty())
            for (std::size_t i = 0; i < problem.layout.dims.size(); ++i) dims.push_back(static_cast<int>(i));
        std::vector<double> searched, lower, upper;
        for (int i : dims) {
            searched.push_back(x[static_cast<std::size_t>(i)]);
            lower.push_back(std::log(problem.layout.dims[static_cast<std::size_t>(i)].lower));
            upper.push_back(std::log(problem.layout.dims[static_cast<std::size_t>(i)].upper));
        }
        minimise_bounded([&problem](const std::vector<double>& v) { return problem(v); }, searched, lower, upper, 20000,
                         0.3, extra_starts);
        x = problem.expand(searched);
    };
    auto log_starts = [](const Layout& layout) {
        std::vector<double> x;
        for (const Dimension& d : layout.dims) x.push_back(std::log(d.start));
        return x;
    };

    // Two stages. The first fits every term but the evaluations' host work, with evaluations priced as training
    // forwards; the second fits only the evaluation terms and the per-run overheads, the rest held. The evaluation
    // terms are then read from the evaluation logs and the run minutes without moving the kernel efficiencies,
    // launch and per-kernel costs that price every training step: a joint fit lets the evaluations' host-bound
    // passes (LoRA's eager TP4 x CP2 forwards, BERT's eager batches of 16) pull them. objective_evaluations counts
    // both stages.
    Problem problem = prepare(true);
    const Layout& L = problem.layout;
    std::vector<double> x = log_starts(L);
    Problem first = prepare(false);
    std::vector<double> first_x = log_starts(first.layout);
    // With held physics, its dimensions take the held profiles' values and only the others are searched.
    const std::set<int> first_held = held ? hold_physics(first.layout, *held, first_x) : std::set<int>{};
    if (!first_held.empty()) {
        first.locate_stacks = false;
        first.frozen = first_x;
        for (std::size_t i = 0; i < first.layout.dims.size(); ++i)
            if (!first_held.count(static_cast<int>(i))) first.free_dims.push_back(static_cast<int>(i));
    }
    if (first_held.empty() || !first.free_dims.empty()) search(first, first_x, kOperatorFitExtraStarts);
    const std::set<int> second_held = held ? hold_physics(L, *held, x) : std::set<int>{};
    problem.locate_stacks = second_held.empty();
    std::set<int> run_overheads;
    for (const auto& [w, index] : L.workload_run_overhead) run_overheads.insert(index);
    for (std::size_t i = 0; i < L.dims.size(); ++i) {   // the first stage's values, matched by name
        const auto same = std::find_if(first.layout.dims.begin(), first.layout.dims.end(),
                                       [&](const Dimension& d) { return d.name == L.dims[i].name; });
        if (same != first.layout.dims.end()) x[i] = first_x[static_cast<std::size_t>(same - first.layout.dims.begin())];
        if ((same == first.layout.dims.end() || run_overheads.count(static_cast<int>(i))) &&
            !second_held.count(static_cast<int>(i)))
            problem.free_dims.push_back(static_cast<int>(i));
    }
    problem.frozen = x;
    // The second stage searches few dimensions, but the loss is flat in an evaluation's host cost wherever its
    // passes are GPU-bound (a pass takes max(GPU, host)), so a start below the GPU time never sees it: more starts.
    // Results with nothing for it to fit (no evaluation on the clock, no searched per-run overhead) keep the first
    // stage's values.
    if (!problem.free_dims.empty()) search(problem, x, kEvalStageExtraStarts);

    // What each workload was fitted on, so predictions outside it say they extrapolate: on every GPU, as the
    // workload's terms (fixed step and run costs) and the efficiencies are shared by all GPUs, and a GPU's own
    // offset is one factor on its roofs.
    std::map<std::string, CalibratedRange> ranges;
    for (const CalibrationPoint* point : points) {
        const double x_gpu = point->scenario.samples_per_gpu;
        const int n = point->scenario.gpus;
        CalibratedRange& r = ranges.try_emplace(point->scenario.workload->name, CalibratedRange{x_gpu, x_gpu, n, n}).first->second;
        r.min_samples_per_gpu = std::min(r.min_samples_per_gpu, x_gpu);
        r.max_samples_per_gpu = std::max(r.max_samples_per_gpu, x_gpu);
        r.min_gpus = std::min(r.min_gpus, n);
        r.max_gpus = std::max(r.max_gpus, n);
    }
    for (const std::string& w : L.workloads)
        for (const std::string& gpu : L.gpus) {
            ComputeProfile p = problem.profile(x, w, gpu);
            p.calibrated_range = ranges.at(w);
            report.profiles.add(std::move(p));
        }
    for (const auto& [stack, index] : L.stack_speed) report.profiles.stack_speeds[stack] = std::exp(x[static_cast<std::size_t>(index)]);
    if (shared.parameter_uncertainty) {
        std::vector<int> fitted;   // every dimension the fit searched (not the held physics)
        for (std::size_t i = 0; i < L.dims.size(); ++i)
            if (!second_held.count(static_cast<int>(i))) fitted.push_back(static_cast<int>(i));
        report.parameters = parameter_uncertainty(problem, x, fitted, points, report.profiles);
    }
    apply_convergence_lags(report.profiles, convergence_lags);
    double sum = 0;
    for (const CalibrationPoint* p : points) {
        report.fitted.push_back(evaluate_point(*p, report.profiles));
        sum += std::pow(std::log1p(report.fitted.back().error), 2);
    }
    report.rms_log_error = points.empty() ? 0.0 : std::sqrt(sum / points.size());
    // Each cell's own misfit (ComputeProfile::fit_residual), from the same errors.
    std::map<std::pair<std::string, std::string>, std::pair<double, int>> cells;
    for (const PointError& e : report.fitted) {
        auto& [squares, count] = cells[{e.workload, e.gpu}];
        squares += std::pow(std::log1p(e.error), 2);
        ++count;
    }
    const auto fitted_profiles = report.profiles.all();   // a copy: add() replaces entries
    for (auto [cell, profile] : fitted_profiles)
        if (const auto found = cells.find(cell); found != cells.end()) {
            profile.fit_residual = std::sqrt(found->second.first / found->second.second);
            profile.fit_results = found->second.second;
            report.profiles.add(std::move(profile));
        }
    report.data_description = description +
                              "\nmodel: operator-level (layer graphs, roofline kernels); fitted (the evaluation terms and "
                              "per-run overheads in a second stage): ";
    for (std::size_t i = 0; i < L.dims.size(); ++i)
        report.data_description += (i ? ", " : "") + L.dims[i].name + " " + units::format_number(std::exp(x[i]), 4);
    for (const std::string& w : L.workloads)
        if (!L.fixed_step.count(w))
            report.data_description += "; " + w + " fixed step seconds (held: one per-GPU batch) " +
                                       units::format_number(kHeldFixedStepSeconds, 4);
    for (const auto& [w, seconds] : L.logged_run_overhead)
        report.data_description += "; " + w + " run overhead seconds (logged) " + units::format_number(seconds, 4);
    for (const auto& [w, seconds] : L.logged_scoring)
        report.data_description += "; " + w + " final scoring seconds (logged, in its run overhead) " +
                                   units::format_number(seconds, 4);
    return report;
}

}  // namespace ttsim
