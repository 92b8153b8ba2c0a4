#include "models/calibration/operator_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "models/calibration/fit_loss.hpp"
#include "models/mlperf/rounds.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"
#include "sim/statistics.hpp"
#include "sim/units.hpp"

namespace ttsim {

std::vector<std::string> speed_keys(const CalibrationPoint& point) {
    std::vector<std::string> keys = speed_keys(point.result.submitter, point.result.system, point.scenario.gpu->name);
    // A round's software against the default round's, which is the reference and has no offset.
    if (!point.result.round.empty() && point.result.round != mlperf_rounds().default_round)
        keys.push_back(round_offset_key(point.result.round, point.scenario.workload->name, point.scenario.gpu->name));
    return keys;
}

namespace {

// Width of the efficiency prior (efficiency-prior), in log units: one sigma is a factor 1.3, so GEMM's 0.8 prior
// admits 0.6-1.0 at one sigma; cuBLAS GEMMs, cuDNN convolutions, fused attention and STREAM all fall inside.
constexpr double kEfficiencyPriorSigma = 0.26;

// A workload's fixed per-step cost: searched within 10 us..1 s; held at that floor where the fit cannot identify it
// (identified-host-cost).
constexpr double kHeldFixedStepSeconds = 1e-5;

// Starts of the fit besides the priors (fit_loss.hpp minimise_bounded): the objective has several local optima.
constexpr int kOperatorFitExtraStarts = 4;
// eval-stage's second stage (a few dimensions, flat where the evaluations are GPU-bound): more starts.
constexpr int kEvalStageExtraStarts = 16;

// One searched value: its bounds (physical plausibility, not tuning) and its start (the priors of kernel_time.hpp).
struct Dimension {
    std::string name;
    double lower, upper, start;
};

// Where each parameter sits in the search vector.
struct Layout {
    std::vector<Dimension> dims;
    int gemm = -1, conv = -1, attention = -1, memory = -1, roof_exponent = -1, tensor_memory = -1, launch = -1, eval_launch = -1, kernel_overhead = -1, streaming_overhead = -1, tp_exposed = -1;
    int jitter_cv = -1, multi_node = -1, eval_fixed = -1, step_jitter = -1, run_overhead = -1;
    std::map<std::string, int> gpu_speed, fixed_step, workload_run_overhead, stack_speed, eval_factor, workload_eval_fixed,
        eval_step, eval_host_ops;
    // gpu-efficiencies: per GPU family, the indices of its GEMM, convolution, attention and memory efficiencies.
    std::map<std::string, std::array<int, 4>> gpu_efficiency;
    std::map<std::string, double> logged_run_overhead;   // logged-overhead: seconds per workload, not searched
    std::map<std::string, double> logged_scoring;        // logged-scoring: seconds per workload, added to the overhead
    std::set<std::string> gpus, workloads;               // of the fitted results
    int add(Dimension d) {
        dims.push_back(std::move(d));
        return static_cast<int>(dims.size()) - 1;
    }
};

struct Problem {
    const std::vector<const CalibrationPoint*>* points;
    std::vector<double> weights;
    std::vector<std::vector<int>> speed_indices;   // per point: the search indices of its fitted stack/release speeds
    Layout layout;
    SharedFit shared;
    int* evaluations;
    // eval-stage's second stage: the full log-parameter vector with every dimension at its first-stage value, and
    // the dimensions the search moves (the search vector holds only these). Empty: the search moves every one.
    std::vector<double> frozen;
    std::vector<int> free_dims;

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
        if (const auto own = layout.gpu_efficiency.find(gpu); own != layout.gpu_efficiency.end()) {
            e.gemm = value(x, own->second[0], e.gemm);
            e.conv = value(x, own->second[1], e.conv);
            e.attention = value(x, own->second[2], e.attention);
            e.memory = value(x, own->second[3], e.memory);
        }
        e.roof_exponent = value(x, layout.roof_exponent, 0.0);
        e.tensor_memory = value(x, layout.tensor_memory, 0.0);
        e.launch_seconds = value(x, layout.launch, e.launch_seconds);
        e.graph_launch_seconds = 2 * e.launch_seconds;
        e.eval_launch_seconds = value(x, layout.eval_launch, 0.0);
        e.kernel_overhead_seconds = value(x, layout.kernel_overhead, 0.0);
        e.streaming_overhead_seconds = value(x, layout.streaming_overhead, 0.0);
        p.operator_efficiency = e;
        p.operator_host_overlap = shared.host_overlap;
        p.operator_graph_host_overlap = shared.graph_host_overlap;
        p.operator_eval_passes = shared.eval_passes;
        const auto speed = layout.gpu_speed.find(gpu);
        p.operator_speed = speed == layout.gpu_speed.end() ? 1.0 : value(x, speed->second, 1.0);
        const auto fixed = layout.fixed_step.find(workload);
        p.fixed_step_seconds = fixed == layout.fixed_step.end() ? kHeldFixedStepSeconds : value(x, fixed->second, 0.0);
        const auto run = layout.workload_run_overhead.find(workload);
        const auto logged = layout.logged_run_overhead.find(workload);
        p.run_overhead_seconds = logged != layout.logged_run_overhead.end() ? logged->second
                                 : run != layout.workload_run_overhead.end() ? value(x, run->second, 0.0)
                                                                             : value(x, layout.run_overhead, 0.0);
        if (const auto scoring = layout.logged_scoring.find(workload); scoring != layout.logged_scoring.end())
            p.run_overhead_seconds += scoring->second;
        p.step_jitter_cv = value(x, layout.jitter_cv, p.step_jitter_cv);
        p.multi_node_step_seconds = value(x, layout.multi_node, 0.0);
        p.eval_fixed_seconds = value(x, layout.eval_fixed, p.eval_fixed_seconds);
        if (const auto f = layout.eval_factor.find(workload); f != layout.eval_factor.end()) {
            p.eval_forward_factor = value(x, f->second, 1.0);
            p.eval_fixed_seconds = value(x, layout.workload_eval_fixed.at(workload), p.eval_fixed_seconds);
        }
        if (const auto step = layout.eval_step.find(workload); step != layout.eval_step.end())
            p.eval_step_seconds = value(x, step->second, 0.0);
        if (const auto ops = layout.eval_host_ops.find(workload); ops != layout.eval_host_ops.end())
            p.eval_host_kernels_per_sample = value(x, ops->second, 0.0);
        p.step_jitter_seconds = value(x, layout.step_jitter, 0.0);
        p.step_jitter_per_node = shared.jitter_nodes;
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
        // Each result's loss on TBB threads (every one simulates its own iteration), summed in result order, so
        // the fit is the same at any thread count.
        std::vector<double> losses(points->size());
        const LossTerms terms = shared.loss_terms();
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points->size()), [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                const CalibrationPoint& point = *(*points)[i];
                ComputeProfile p = profile(x, point.scenario.workload->name, point.scenario.gpu->name);
                p.operator_stack_speed *= stack_speed(x, i);
                losses[i] = weights[i] * point_loss(point, p, terms);
            }
        });
        double sum = 0;
        for (double loss : losses) sum += loss;
        // Log-normal prior of the stack speeds, in units of the loss: a residual of kRobustScale-sized log errors
        // costs about (error / 0.05)^2 x 0.05^2, so the prior is (log s / sigma)^2 x 0.05^2.
        for (const auto& [stack, index] : layout.stack_speed) {
            const double z = x[static_cast<std::size_t>(index)] / kSystemSpeedSigma;
            sum += z * z * 0.05 * 0.05;
        }
        // The same for each kernel-class efficiency about its prior (efficiency-prior).
        if (shared.efficiency_prior) {
            const layers::Efficiency prior;
            for (const auto& [index, centre] : {std::pair{layout.gemm, prior.gemm}, std::pair{layout.conv, prior.conv},
                                                std::pair{layout.attention, prior.attention},
                                                std::pair{layout.memory, prior.memory}}) {
                const double z = (x[static_cast<std::size_t>(index)] - std::log(centre)) / kEfficiencyPriorSigma;
                sum += z * z * 0.05 * 0.05;
            }
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

// The searched dimensions of a fit with these options on these results.
Layout build_layout(const std::vector<const CalibrationPoint*>& points, const SharedFit& shared) {
    Layout L;
    // Efficiencies: a GEMM reaches 20-100 % of the dense peak, convolutions and attention 5-100 %, a streaming
    // kernel 30-100 % of HBM bandwidth; a launch costs 2-100 us of host time. (A floor of 0.75, below STREAM's
    // 0.79-0.93 of the vendor bandwidth, hardware/params.md §1, is the stream-memory option: with eval-passes it
    // measured forward CV 9.32 % against 6.51 % for eval-passes alone, so it is not the default.)
    L.gemm = L.add({"gemm efficiency", 0.2, 1.0, 0.8});
    L.conv = L.add({"conv efficiency", 0.05, 1.0, 0.65});
    L.attention = L.add({"attention efficiency", 0.05, 1.0, 0.6});
    L.memory = L.add({"memory efficiency", shared.stream_memory ? 0.75 : 0.3, 1.0, 0.85});
    // roof-blend: the exponent of the roofs' p-norm, from 1 (loads and math never overlap: the sum) to 32 (within
    // 2 % of the larger roof everywhere).
    // tensor-memory: the tensor-core kernels' own memory efficiency, within the same bounds.
    if (shared.tensor_memory) L.tensor_memory = L.add({"tensor memory efficiency", 0.3, 1.0, 0.85});
    if (shared.roof_blend) L.roof_exponent = L.add({"roof exponent", 1.0, 32.0, 4.0});
    // An eager launch costs at least the CUDA launch itself, ~2 us of host time (kernel_time.hpp): below that the
    // fit would be free to make eager small-batch steps cheaper than the driver allows, which the <= 64-GPU
    // results (never launch-bound) cannot contradict.
    L.launch = L.add({"launch seconds", 2e-6, 1e-4, 5e-6});
    // The eager evaluation loops' host cost per kernel (eval-launch): from the CUDA launch to 2 ms (a Python
    // framework op of several PyTorch dispatches, hooks and host syncs).
    if (shared.eval_launch) L.eval_launch = L.add({"eval launch seconds", 2e-6, 2e-3, 5e-5});
    // GPU time per kernel beyond the roofline: 0.1-20 us.
    if (shared.kernel_overhead) L.kernel_overhead = L.add({"kernel overhead seconds", 1e-7, 2e-5, 2e-6});
    // class-overhead: the streaming kernels' own, within the same bounds (with kernel-overhead only).
    if (shared.kernel_overhead && shared.class_overhead)
        L.streaming_overhead = L.add({"streaming kernel overhead seconds", 1e-7, 2e-5, 2e-6});
    std::set<std::string>& gpus = L.gpus;
    std::set<std::string>& workloads = L.workloads;
    std::set<std::string> stacks, releases, round_offsets, rounds;
    bool any_multi_node = false, any_eval = false;
    for (const CalibrationPoint* p : points) {
        gpus.insert(p->scenario.gpu->name);
        workloads.insert(p->scenario.workload->name);
        rounds.insert(p->result.round);
        // Its stack, then its release where named, then its round's offset where it has a round.
        for (const std::string& key : speed_keys(*p))
            (is_round_offset(key) ? round_offsets : key == speed_keys(*p).front() ? stacks : releases).insert(key);
        any_multi_node = any_multi_node || p->scenario.system.spans_domains(p->scenario.gpus);
        any_eval = any_eval || p->scenario.evaluations > 0;
    }
    // Speed of a GPU family against its roofline: 0.3-3x the reference GPU's.
    // With same-die, a GPU on the reference's die keeps its speed (1): not searched.
    // With gpu-efficiencies, its own four class efficiencies instead, within the reference's bounds and from its
    // starts (a family without fit results is not in `gpus`: it gets no profile here, and ProfileSet::find
    // transfers the nearest calibrated GPU's).
    for (const std::string& gpu : gpus) {
        if (gpu == reference_gpu().name) continue;
        if (shared.gpu_efficiencies) {
            std::array<int, 4> own{L.gemm, L.conv, L.attention, L.memory};   // the shared ones, then the family's
            for (int& index : own) {
                const Dimension shared_dim = L.dims[static_cast<std::size_t>(index)];   // a copy: add() grows dims
                index = L.add({gpu + " " + shared_dim.name, shared_dim.lower, shared_dim.upper, shared_dim.start});
            }
            L.gpu_efficiency[gpu] = own;
        } else if (!(shared.same_die && !find_gpu(gpu).die.empty() && find_gpu(gpu).die == reference_gpu().die)) {
            L.gpu_speed[gpu] = L.add({gpu + " speed", 0.3, 3.0, 1.0});
        }
    }
    // Per workload: fixed step cost 10 us..1 s; run overhead 10 ms..5 min (as the lumped fit's bounds).
    // With logged-overhead, a workload whose fit results have a logged first-segment excess takes the median of
    // them (clamped to the same bounds) instead of a searched overhead.
    const std::map<std::string, double> excesses =
        shared.logged_overhead ? median_by_workload(points, &CalibrationPoint::measured_excess_seconds)
                               : std::map<std::string, double>{};
    // With logged-scoring, each workload whose fit results' logs give a final scoring: their median, per run.
    if (shared.logged_scoring) L.logged_scoring = median_by_workload(points, &CalibrationPoint::measured_final_scoring_seconds);
    // With identified-host-cost, only where the workload's results run at two or more per-GPU batches (a workload
    // without one is held: Problem::profile).
    std::map<std::string, std::set<double>> per_gpu_batches;
    for (const CalibrationPoint* p : points) per_gpu_batches[p->scenario.workload->name].insert(p->scenario.samples_per_gpu);
    for (const std::string& w : workloads) {
        if (!shared.identified_host_cost || per_gpu_batches[w].size() > 1)
            L.fixed_step[w] = L.add({w + " fixed step seconds", kHeldFixedStepSeconds, 1.0, 5e-3});
        if (const auto found = excesses.find(w); found != excesses.end()) {
            L.logged_run_overhead[w] = std::clamp(found->second, 0.01, 300.0);
        } else if (shared.workload_run_overhead) {
            L.workload_run_overhead[w] = L.add({w + " run overhead seconds", 0.01, 300.0, 5.0});
        }
    }
    if (shared.run_overhead && !shared.workload_run_overhead) L.run_overhead = L.add({"run overhead seconds", 0.01, 300.0, 5.0});
    // Step-time noise only where some result has stragglers to wait for (with jitter-nodes: a job over more than one
    // node): on single-node results alone it changes nothing, and an unseen dimension would keep whatever value
    // the search started it at (a Sobol start), not its prior.
    bool any_straggler = false;
    for (const CalibrationPoint* p : points)
        any_straggler = any_straggler ||
                        (shared.jitter_nodes ? p->scenario.node_straggler_sigmas : p->scenario.straggler_sigmas) > 0;
    if (shared.jitter_cv && any_straggler) L.jitter_cv = L.add({"step jitter cv", 1e-4, 0.3, 0.01});
    if (shared.multi_node && any_multi_node) L.multi_node = L.add({"multi-node step seconds", 1e-5, 0.1, 0.005});
    if (shared.eval_fixed && any_eval) L.eval_fixed = L.add({"eval fixed seconds", 1e-3, 30.0, 0.05});
    // Per workload with evaluations on the clock: an evaluation's forward passes cost 0.3-30x their training price
    // (post-processing, eval batch), plus 1 ms-60 s per evaluation (gather, scoring).
    if (shared.eval_cost)
        for (const std::string& w : workloads)
            if (find_workload(w).eval_on_the_clock) {
                L.eval_factor[w] = L.add({w + " eval forward factor", 0.3, 30.0, 1.0});
                L.workload_eval_fixed[w] = L.add({w + " eval fixed seconds", 1e-3, 60.0, 0.05});
            }
    // Per workload with evaluations on the clock: 0.1 ms-3 s per step of its evaluation loop (EvalPasses::step).
    // (Searched only where the loop steps by global batches, NeMo's validation_step, it measured forward CV 7.60 %,
    // LOCO 5.46 %, against 6.74 / 5.94 % for every workload and 5.91 / 5.22 % without the term: neither helps.)
    if (shared.eval_step_cost)
        for (const std::string& w : workloads)
            if (find_workload(w).eval_on_the_clock) L.eval_step[w] = L.add({w + " eval step seconds", 1e-4, 3.0, 0.01});
    // Per workload with evaluations on the clock (eval-host-ops): 1-100,000 eager host operations per evaluation
    // sample beyond the catalog's (a 70B decoder's 80 layers at ~1,000 a layer at most).
    if (shared.eval_host_ops)
        for (const std::string& w : workloads)
            if (find_workload(w).eval_on_the_clock)
                L.eval_host_ops[w] = L.add({w + " eval host kernels per sample", 1.0, 1e5, 100.0});
    // Share of TP/CP collective time exposed: 1-100 %.
    bool any_model_parallel = false;
    for (const CalibrationPoint* p : points) any_model_parallel = any_model_parallel || p->scenario.tp_cp_comm_seconds_per_micro_step > 0;
    if (shared.tp_exposed && any_model_parallel) L.tp_exposed = L.add({"TP/CP exposed fraction", 0.01, 1.0, 0.3});
    if (shared.step_jitter && any_straggler) L.step_jitter = L.add({"step jitter seconds", 1e-6, 0.05, 1e-4});
    // Stack speeds 0.5-2x their family.
    if (shared.system_speed)
        for (const std::string& stack : stacks) L.stack_speed[stack] = L.add({stack + " speed", 0.5, 2.0, 1.0});
    // Release speeds, the same bounds and prior, where a result's system name says its container release.
    if (shared.release_speed)
        for (const std::string& release : releases) L.stack_speed[release] = L.add({release + " speed", 0.5, 2.0, 1.0});
    // A fit over several rounds: each round's software per workload and GPU family, besides the default round's
    // (the reference, 1), with the stacks' bounds and prior. One round alone has nothing to offset against.
    if (rounds.size() > 1)
        for (const std::string& key : round_offsets) L.stack_speed[key] = L.add({key + " speed", 0.5, 2.0, 1.0});

    return L;
}

}  // namespace

CalibrationReport calibrate_operator_points(const std::vector<CalibrationPoint>& all_points, const std::string& description,
                                            const SharedFit& shared, const ConvergenceLags& convergence_lags) {
    std::vector<const CalibrationPoint*> points;
    for (const CalibrationPoint& p : all_points)
        if (p.scenario.operator_table) points.push_back(&p);
    TTSIM_ASSERT(!points.empty(), "operator calibration without a result whose workload has a layer graph");

    CalibrationReport report;
    // The problem of one stage: these options' dimensions, each result's speed indices into them, its weight.
    auto prepare = [&](const SharedFit& options) {
        Problem problem;
        problem.points = &points;
        problem.shared = options;
        problem.evaluations = &report.objective_evaluations;
        problem.layout = build_layout(points, options);
        for (const CalibrationPoint* p : points) {
            std::vector<int>& indices = problem.speed_indices.emplace_back();
            for (const std::string& key : speed_keys(*p))
                if (const auto found = problem.layout.stack_speed.find(key); found != problem.layout.stack_speed.end())
                    indices.push_back(found->second);
        }
        std::map<std::pair<std::string, int>, int> per_count;
        for (const CalibrationPoint* p : points) ++per_count[{p->scenario.workload->name + "/" + p->scenario.gpu->name, p->scenario.gpus}];
        for (const CalibrationPoint* p : points)
            problem.weights.push_back(options.configuration_weights
                                          ? 1.0 / per_count[{p->scenario.workload->name + "/" + p->scenario.gpu->name, p->scenario.gpus}]
                                          : 1.0);
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
    // graph-host-overlap: a workload's fixed host cost hidden behind every step it was fitted on leaves the loss
    // flat, so the search may leave it anywhere below those steps, and a step the fit never saw (more GPUs, a
    // faster part: a shorter graphed step) would pay an arbitrary cost (without the lowering below: RetinaNet's
    // 4 -> 8 GPU fold +88 %, its 2,528-GPU hold-out point +67 %). Take the smallest value with the same loss: the
    // floor where the loss does not move, else the edge of the flat range by bisection in log space. Every fitted
    // loss is unchanged.
    auto lower_hidden_host_costs = [](const Problem& problem, std::vector<double>& x) {
        if (!problem.shared.graph_host_overlap || !problem.free_dims.empty()) return;
        const double loss = problem(x);
        for (const auto& [workload, index] : problem.layout.fixed_step) {
            const auto i = static_cast<std::size_t>(index);
            std::vector<double> trial = x;
            auto same_loss = [&](double log_seconds) {
                trial[i] = log_seconds;
                return problem(trial) <= loss;
            };
            double moved = std::log(problem.layout.dims[i].lower), same = x[i];
            if (same_loss(moved)) {
                x[i] = moved;
                continue;
            }
            for (int k = 0; k < 40; ++k) {   // 40 halvings of at most ln(1e5): below 1e-10 in log seconds
                const double mid = 0.5 * (moved + same);
                (same_loss(mid) ? same : moved) = mid;
            }
            x[i] = same;
        }
    };
    auto log_starts = [](const Layout& layout) {
        std::vector<double> x;
        for (const Dimension& d : layout.dims) x.push_back(std::log(d.start));
        return x;
    };

    Problem problem = prepare(shared);
    const Layout& L = problem.layout;
    std::vector<double> x = log_starts(L);
    if (shared.eval_stage) {
        // eval-stage: first every term but the evaluation's own, then only those and the per-run overheads with the
        // rest held at the first stage's values (calibration.hpp SharedFit::eval_stage).
        const Problem first = prepare(shared.without_evaluation_terms());
        std::vector<double> first_x = log_starts(first.layout);
        search(first, first_x, kOperatorFitExtraStarts);
        lower_hidden_host_costs(first, first_x);
        std::set<int> run_overheads;
        for (const auto& [w, index] : L.workload_run_overhead) run_overheads.insert(index);
        if (L.run_overhead >= 0) run_overheads.insert(L.run_overhead);
        std::vector<int> first_stage_dims;   // the dimensions the first stage searched (matched by name)
        for (std::size_t i = 0; i < L.dims.size(); ++i) {
            const auto same = std::find_if(first.layout.dims.begin(), first.layout.dims.end(),
                                           [&](const Dimension& d) { return d.name == L.dims[i].name; });
            if (same != first.layout.dims.end()) {
                x[i] = first_x[static_cast<std::size_t>(same - first.layout.dims.begin())];
                first_stage_dims.push_back(static_cast<int>(i));
            }
            if (same == first.layout.dims.end() || run_overheads.count(static_cast<int>(i)))
                problem.free_dims.push_back(static_cast<int>(i));
        }
        problem.frozen = x;
        // The second stage searches few dimensions, but the loss is flat in an evaluation's host cost wherever its
        // passes are GPU-bound (a pass takes max(GPU, host)), so a start below the GPU time never sees it: more
        // starts. Results with nothing for it to fit (a fold without evaluations on the clock, and no per-run
        // overhead) keep the first stage's values.
        if (!problem.free_dims.empty()) search(problem, x, kEvalStageExtraStarts);
        if (shared.staged_refit && !problem.free_dims.empty()) {
            // staged-refit: the first stage's dimensions again, now with every evaluation priced as the second
            // stage has it (the framework's own passes and host work, held), then the second stage again; each a
            // local search from where the stages left off.
            Problem whole = problem;   // nothing frozen: the loss of a full vector
            whole.frozen.clear();
            whole.free_dims.clear();
            Problem refit = whole;
            refit.frozen = x;
            refit.free_dims = first_stage_dims;
            search(refit, x, 0);
            lower_hidden_host_costs(whole, x);
            problem.frozen = x;
            search(problem, x, 0);
        }
    } else {
        search(problem, x, kOperatorFitExtraStarts);
        lower_hidden_host_costs(problem, x);
    }

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
    apply_convergence_lags(report.profiles, convergence_lags);
    double sum = 0;
    for (const CalibrationPoint* p : points) {
        report.fitted.push_back(evaluate_point(*p, report.profiles));
        sum += std::pow(std::log1p(report.fitted.back().error), 2);
    }
    report.rms_log_error = points.empty() ? 0.0 : std::sqrt(sum / points.size());
    report.data_description = description + "\nmodel: operator-level (layer graphs, roofline kernels); fitted" +
                              (shared.eval_stage ? " (eval-stage: the evaluation terms and per-run overheads in a second stage)" : "") +
                              ": ";
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
