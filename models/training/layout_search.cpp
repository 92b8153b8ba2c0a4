#include "models/training/layout_search.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <queue>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/training/layer_graph_cache.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "models/training/step_bounds.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim {

namespace {

std::vector<int> divisors(int n) {
    std::vector<int> out;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

bool pinned_out(const std::optional<int>& pin, int value) { return pin && *pin != value; }

// Fastest first; at equal times the smaller model split (fewer collectives to go wrong), then the larger micro
// batch, then the distributed optimizer off (the simpler layout), so the order never depends on enumeration.
bool faster(const LayoutCandidate& a, const LayoutCandidate& b) {
    if (a.ttt_minutes != b.ttt_minutes) return a.ttt_minutes < b.ttt_minutes;
    const int split_a = a.layout.model_split(), split_b = b.layout.model_split();
    if (split_a != split_b) return split_a < split_b;
    if (a.layout.tensor_parallel != b.layout.tensor_parallel) return a.layout.tensor_parallel < b.layout.tensor_parallel;
    if (a.layout.samples_per_micro_batch != b.layout.samples_per_micro_batch)
        return a.layout.samples_per_micro_batch > b.layout.samples_per_micro_batch;
    return !a.layout.distributed_optimizer && b.layout.distributed_optimizer;
}

}  // namespace

void check_pins_apply(const Workload& workload, const System& system, const LayoutPins& pins, Field tensor_parallel_field,
                      Field context_parallel_field) {
    auto check_pin = [&](const std::optional<int>& pin, bool modelled, const char* what, Field field) {
        if (pin && *pin > 1 && !modelled)
            throw InputError(std::string(what) + " is not modelled for " + workload.name, field);
    };
    check_pin(pins.tensor_parallel, workload.tensor_parallel_modelled(), "tensor parallelism", tensor_parallel_field);
    check_pin(pins.context_parallel, workload.context_parallel_modelled(), "context parallelism", context_parallel_field);
    check_pin(pins.pipeline_parallel, workload.pipeline_parallel_modelled(), "pipeline parallelism", Field::layout);
    if (pins.virtual_pipeline && *pins.virtual_pipeline > 1 && pins.pipeline_parallel && *pins.pipeline_parallel == 1)
        throw InputError("vp=" + std::to_string(*pins.virtual_pipeline) +
                             " needs pipeline parallelism: virtual stages interleave chunks over PP >= 2 devices",
                         Field::layout);
    if (pins.schedule && pins.pipeline_parallel && *pins.pipeline_parallel == 1)
        throw InputError("schedule=" + *pins.schedule + " needs pipeline parallelism (PP >= 2): pp=1 runs no schedule",
                         Field::layout);
    if (pins.schedule && *pins.schedule != to_string(PipeScheduleKind::interleaved) && pins.virtual_pipeline &&
        *pins.virtual_pipeline > 1)
        throw InputError("vp=" + std::to_string(*pins.virtual_pipeline) + " needs schedule=interleaved, not schedule=" +
                             *pins.schedule + ": only the interleaved schedule runs virtual stages",
                         Field::layout);
    if (pins.tensor_parallel && *pins.tensor_parallel > system.gpus_per_nvlink_domain)
        throw InputError(system.tensor_parallel_domain_problem(*pins.tensor_parallel), tensor_parallel_field);
}

void check_pins_apply_somewhere(const Workload& workload, const std::vector<System>& systems, const LayoutPins& pins) {
    TTSIM_ASSERT(!systems.empty(), "a pin check needs a system");
    for (const System& system : systems) {
        try {
            check_pins_apply(workload, system, pins);
            return;
        } catch (const InputError&) {
        }
    }
    check_pins_apply(workload, systems.front(), pins);   // throws the first system's reason
}

void check_pins_split_model(const Workload& workload, const LayoutPins& pins, const std::vector<int>& counts) {
    const int tp = pins.tensor_parallel.value_or(1), cp = pins.context_parallel.value_or(1);
    if (tp * cp == 1) return;
    if (std::none_of(counts.begin(), counts.end(), [&](int n) { return n % (tp * cp) == 0; }))
        throw InputError(fmt::format("TP {} x CP {} = {} GPUs a replica divides none of the GPU counts ({})", tp, cp,
                                     tp * cp, fmt::join(counts, ", ")),
                         Field::layout);
    // The graph the search builds for a layout with these pins (build_layout_graph), at one sample.
    ParallelismConfig split;
    split.tensor_parallel = tp;
    split.context_parallel = cp;
    try {
        build_layout_graph(workload, layer_description(workload), split);
    } catch (const InputError& e) {
        throw InputError(fmt::format("TP {} x CP {} does not fit the model: {}", tp, cp, e.message()), Field::layout);
    }
}

LayoutSearchResult search_layouts(const LayoutSearchJob& job, const ComputeProfile& profile) {
    const auto start = std::chrono::steady_clock::now();
    const Workload& workload = job.owned_workload ? *job.owned_workload : *job.workload;
    TTSIM_ASSERT(workload.layer_model.has_value(), "layout search needs a layer graph");
    TTSIM_ASSERT((job.global_batch >= 1 || (job.samples_per_rank && *job.samples_per_rank >= 1)) && job.gpus >= 1,
                 "layout search needs a GPU count and a global batch (or one per data-parallel rank)");
    const GpuSpec& gpu = *job.system.gpu;
    const LayoutPins& pins = job.pins;
    check_pins_apply(workload, job.system, pins, job.tensor_parallel_field, job.context_parallel_field);
    // A pinned split that does not divide the GPUs matches no layout; say so rather than "none matches the pins".
    const int tp_pin = pins.tensor_parallel.value_or(1), cp_pin = pins.context_parallel.value_or(1);
    if (job.gpus % (tp_pin * cp_pin) != 0) {
        const std::string split = pins.tensor_parallel && pins.context_parallel
                                      ? fmt::format("TP x CP = {} x {} = {}", tp_pin, cp_pin, tp_pin * cp_pin)
                                  : pins.tensor_parallel ? fmt::format("TP {}", tp_pin)
                                                         : fmt::format("CP {}", cp_pin);
        throw InputError(fmt::format("{} GPUs are not divisible by {}", job.gpus, split),
                         job.gpus % tp_pin != 0 ? job.tensor_parallel_field : job.context_parallel_field);
    }
    if (!job.system.tensor_parallel_fits_domain(tp_pin, job.gpus))
        throw InputError(job.system.tensor_parallel_domain_problem(tp_pin), job.tensor_parallel_field);
    if (pins.pipeline_parallel && job.gpus % (tp_pin * cp_pin * *pins.pipeline_parallel) != 0)
        throw InputError(fmt::format("{} GPUs are not divisible by TP x CP x PP = {} x {} x {}", job.gpus, tp_pin, cp_pin,
                                     *pins.pipeline_parallel),
                         Field::layout);
    if (pins.context_parallel && !job.system.model_parallel_fits_domain(tp_pin, cp_pin, job.gpus) &&
        (pins.tensor_parallel || !job.system.model_parallel_fits_domain(1, cp_pin, job.gpus)))
        throw InputError(job.system.model_parallel_domain_problem(tp_pin, cp_pin, job.gpus), job.context_parallel_field);

    LayoutSearchResult result;
    // Why splits were refused, each once, in the order they were met (TP, then CP, ascending).
    std::vector<std::string> reasons;
    std::set<std::string> reasons_seen;
    auto reject = [&](std::string reason) {
        if (reasons_seen.insert(reason).second) reasons.push_back(std::move(reason));
    };
    // A layout that fits, with its evaluation table and the lower bound of its time to train, waiting to be priced.
    struct Unpriced {
        LayoutCandidate candidate;
        std::shared_ptr<const OperatorTable> bound_table;   // shared by the layouts of its graph and optimizer shards
        std::shared_ptr<const EvalTable> eval_table;
        std::optional<double> ttt_bound;   // minutes; null: none (prices it)
        // Whether ttt_bound is the step with free collectives (ttt_unsimulated_lower_bound_minutes) or only the
        // quicker compute bound below it (quick_bound), to tighten before pricing.
        bool full_bound = false;
    };
    std::vector<Unpriced> unpriced;
    std::optional<StepCollectiveSession> own_session;
    if (!job.collectives) own_session.emplace(job.system, job.gpus, job.switches.sharp);
    StepCollectiveSession& session = job.collectives ? *job.collectives : *own_session;
    // A layout of this job prepared for pricing (a user's model keeps its own lifetime in the scenario).
    auto prepare_layout = [&](const ParallelismConfig& c, const PrepareReuse& reuse) {
        return job.owned_workload ? prepare_with_layout(job.owned_workload, job.system, job.gpus, c, reuse)
                                  : prepare_with_layout(workload, job.system, job.gpus, c, reuse);
    };
    // Graphs by build options, and the layer description parsed once: the caller's (a sweep's points share one) or
    // the search's own.
    LayerGraphCache own_graphs;
    LayerGraphCache& graph_cache = job.graphs ? *job.graphs : own_graphs;
    const ConfigNode& description = graph_cache.description(workload);
    const layers::MemoryAssumptions memory = memory_assumptions_of(job.system);
    // Evaluation tables by (TP, CP, samples per pass): the evaluation batch does not follow the training micro batch.
    std::map<std::tuple<int, int, double>, std::shared_ptr<const EvalTable>> eval_tables;
    auto eval_table_of = [&](const ParallelismConfig& c, const OperatorTable& training) -> std::shared_ptr<const EvalTable> {
        if (!workload.eval_on_the_clock) return nullptr;
        const double samples_per_rank = eval_samples_per_rank(workload, c);
        auto& slot = eval_tables[{c.tensor_parallel, c.context_parallel, eval_samples_per_pass(workload, c, samples_per_rank)}];
        if (!slot) slot = build_eval_table(workload, description, gpu, c, samples_per_rank, training);
        return slot;
    };
    // Pipeline depths: 1, and where the workload's blocks split into stages, every divisor of the GPUs per TP x CP
    // group (the stage rule prunes those that do not split the blocks).
    auto pipeline_depths = [&](int gpus_per_split) {
        return workload.pipeline_parallel_modelled() ? divisors(gpus_per_split) : std::vector<int>{1};
    };
    // Chunks per device: 1, and with PP the divisors of the stage's blocks (pins choose among them).
    auto virtual_depths = [&](const layers::LayerGraph& graph, int pp) {
        std::vector<int> out{1};
        if (pp == 1) return out;
        const int blocks = static_cast<int>(layers::block_count(graph));
        for (int v = 2; v * pp <= blocks + 2; ++v)
            if (layers::pipeline_stage_problem(graph, pp * v).empty()) out.push_back(v);
        return out;
    };
    // Bound tables by graph (TP, CP, micro batch, recomputation): every depth and optimizer setting shares one.
    using GraphKey = std::tuple<int, int, int, std::string>;
    auto graph_key = [](const ParallelismConfig& c) {
        return GraphKey{c.tensor_parallel, c.context_parallel, c.samples_per_micro_batch, c.recompute};
    };
    // Operator tables for the bounds, by graph and optimizer shards.
    std::map<std::pair<GraphKey, int>, std::shared_ptr<const OperatorTable>> bound_tables;
    // The optimizer's shards by split (TP, CP, PP; DP follows) and distributed optimizer: the session lists every
    // weight replica's rank to count them, thousands at thousands of GPUs, and a split has many layouts.
    std::map<std::tuple<int, int, int, bool>, int> shards_by_split;
    auto optimizer_shards = [&](const ParallelismConfig& c) {
        const auto key = std::make_tuple(c.tensor_parallel, c.context_parallel, c.pipeline_parallel, c.distributed_optimizer);
        auto it = shards_by_split.find(key);
        if (it == shards_by_split.end()) it = shards_by_split.emplace(key, session.optimizer_shards(c)).first;
        return it->second;
    };
    // The quick bound of a layout's time to train, from its bound table alone: the busiest device computes at
    // least its 1/PP share of the micro batches (m x (F + B) / PP, the passes priced without the host's fixed cost
    // spread over them, which only lengthens them, times the straggler factor), each step pays the fixed per-step
    // cost, and the run takes at least its steps of that plus its fixed overhead (evaluations and everything else are
    // at least 0). The straggler factor and the fixed per-step cost depend on the GPU count and the profile only, the
    // steps on the global batch: one kernel pricing per table and one scenario and plan per global batch serve every
    // layout.
    struct PerBatch {
        PreparedScenario scenario;
        double straggler_factor = 1, fixed_step_seconds = 0;
    };
    std::map<const OperatorTable*, double> micro_step_floor;
    std::map<int, PerBatch> by_global_batch;
    auto quick_bound = [&](const ParallelismConfig& c, const std::shared_ptr<const OperatorTable>& table,
                           const std::shared_ptr<const EvalTable>& eval_table) -> std::optional<double> {
        if (!profile.operator_efficiency || !(profile.tp_comm_exposed_fraction >= 0) || !(profile.eval_forward_factor >= 0))
            return std::nullopt;
        auto floor = micro_step_floor.find(table.get());
        if (floor == micro_step_floor.end()) {
            const OperatorStepTimes t = price_operator_step(*table, *profile.operator_efficiency, profile.operator_speed,
                                                            0.0, profile.operator_stack_speed);
            floor = micro_step_floor.emplace(table.get(), t.forward_seconds + t.backward_seconds).first;
        }
        auto run = by_global_batch.find(c.global_batch);
        if (run == by_global_batch.end()) {
            PerBatch b{prepare_layout(c, {.collectives = &session, .operator_table = table, .eval_table = eval_table,
                                          .without_collectives = true})};
            const IterationPlan plan = make_iteration_plan(b.scenario, profile);
            b.straggler_factor = plan.straggler_factor;
            b.fixed_step_seconds = plan.fixed_step_seconds;
            run = by_global_batch.emplace(c.global_batch, std::move(b)).first;
        }
        const PerBatch& b = run->second;
        const double step =
            c.gradient_accumulation * floor->second * b.straggler_factor / c.pipeline_parallel + b.fixed_step_seconds;
        const RunClock clock{step, 0.0, profile.run_overhead_seconds, c.global_batch, b.scenario.eval_schedule};
        return clock.seconds(trained_samples(b.scenario, profile, b.scenario.samples_mean)) / 60.0;
    };
    // Recomputation: the workload's own, and where its blocks can be pipelined (a transformer) full recomputation
    // too, unless pinned. It only adds forward work, so the bounds below keep it out wherever memory does not force it.
    std::vector<std::string> recompute_choices{job.switches.recompute};
    if (pins.recompute)
        recompute_choices = {*pins.recompute};
    else if (workload.pipeline_parallel_modelled() && job.switches.recompute != "full")
        recompute_choices.push_back("full");
    std::vector<int> tps{1}, cps{1};
    if (workload.tensor_parallel_modelled()) {
        tps.clear();
        for (int t : divisors(job.gpus))
            if (job.system.tensor_parallel_fits_domain(t, job.gpus)) tps.push_back(t);
    }
    // One pass over TP x CP x recomputation x PP x micro batch x VP x distributed optimizer: every layout that fits
    // is bounded, and the bounds (below) decide which are simulated (docs/pipeline.md). Splits (TP, CP, PP, micro
    // batch) where every layout fits with the workload's own recomputation.
    std::set<std::tuple<int, int, int, int>> own_recompute_fits;
    for (int tp : tps) {
        if (pinned_out(pins.tensor_parallel, tp)) continue;
        if (workload.context_parallel_modelled()) cps = divisors(job.gpus / tp);
        for (int cp : cps) {
            if (pinned_out(pins.context_parallel, cp)) continue;
            if (!job.system.model_parallel_fits_domain(tp, cp, job.gpus)) continue;
            for (const std::string& recompute : recompute_choices) {
            for (int pp : pipeline_depths(job.gpus / (tp * cp))) {
            if (pinned_out(pins.pipeline_parallel, pp)) continue;
            if (pins.schedule && pp == 1) {
                reject("schedule=" + *pins.schedule + " pinned: PP 1 runs no pipeline schedule");
                continue;
            }
            const int dp = job.gpus / (tp * cp * pp);
            const long long global = job.samples_per_rank ? static_cast<long long>(*job.samples_per_rank) * dp
                                                          : job.global_batch;
            if (global > (1 << 30)) {
                reject(fmt::format("DP {}: a global batch of {} is beyond 2^30", dp, global));
                continue;
            }
            if (global % dp != 0) {
                reject(fmt::format("global batch {} is not divisible by DP {} (TP {} x CP {} x PP {})", global, dp, tp,
                                   cp, pp));
                continue;
            }
            // Per rank, each DP has its own batch, which the convergence data may not reach: that split cannot
            // run (at one global batch every layout converges alike, and its refusal is the job's, below).
            if (job.samples_per_rank) {
                try {
                    samples_to_train_at(workload, static_cast<int>(global));
                } catch (const InputError& e) {
                    if (e.field() != Field::global_batch) throw;
                    reject(fmt::format("DP {} (global batch {}): {}", dp, global, e.message()));
                    continue;
                }
            }
            const int share = static_cast<int>(global / dp);
            for (int micro : divisors(share)) {
                const int accumulation = share / micro;
                if (pinned_out(pins.micro_batch, micro) || pinned_out(pins.gradient_accumulation, accumulation)) continue;
                // 1F1B with fewer micro batches than stages leaves stages idle for most of the step (Megatron-LM runs
                // it, no layout search should pick it).
                if (pp > 1 && accumulation < pp) {
                    reject(fmt::format("PP {}: {} micro batches per step, fewer than the stages", pp, accumulation));
                    continue;
                }
                // Full recomputation where the workload's own fits every depth and optimizer setting of this split
                // and micro batch: the same layouts with more forward work and the same collectives, so never
                // faster (with each device's order fixed, longer passes end no earlier); not enumerated.
                const auto split = std::make_tuple(tp, cp, pp, micro);
                if (recompute != recompute_choices.front() && own_recompute_fits.count(split)) continue;
                const std::size_t too_big_before = result.too_big.size();
                const int enumerated_before = result.enumerated;
                // Whether the layout that needs the least memory at this micro batch (one chunk per device, the
                // optimizer sharded where it can be) is over HBM: then every larger micro batch is too, as each
                // device's activations in flight, micro batch x min(its schedule's count, micro batches), only grow.
                bool least_over = false;
                ParallelismConfig c = job.switches;
                c.tensor_parallel = tp;
                c.context_parallel = cp;
                c.pipeline_parallel = pp;
                c.virtual_pipeline = 1;
                c.data_parallel = dp;
                c.samples_per_micro_batch = micro;
                c.gradient_accumulation = accumulation;
                c.global_batch = static_cast<int>(global);
                if (c.packing_factor > 1 && micro % c.packing_factor != 0) c.packing_factor = 1;
                c.recompute = recompute;
                if (pins.schedule) c.pipeline_schedule = *pins.schedule;
                // One graph for every depth and optimizer setting: they change memory and the schedule, not the
                // layers.
                const layers::LayerGraph* graph = nullptr;
                try {
                    graph = &graph_cache.graph(workload, c);
                } catch (const InputError& e) {
                    // The family's own split checks (heads over TP, sequence over CP): the split is not valid.
                    reject(fmt::format("TP {} x CP {}: {}", tp, cp, e.message()));
                    break;
                }
                for (int vp : virtual_depths(*graph, pp)) {
                    if (pinned_out(pins.virtual_pipeline, vp)) continue;
                    const std::string stages = layers::pipeline_stage_problem(*graph, pp * vp);
                    if (!stages.empty()) {
                        reject(fmt::format("PP {} x VP {}: {}", pp, vp, stages));
                        continue;
                    }
                    // The search runs Megatron-LM's schedules unless one is pinned: GPipe keeps every micro batch's
                    // activations in flight for the same bubble as 1F1B, so it never wins at equal memory.
                    const std::string order =
                        schedule_problem(pipe_schedule_of(c.pipeline_schedule, vp), pp, vp, accumulation);
                    if (!order.empty()) {
                        reject(fmt::format("PP {} x VP {}: {}", pp, vp, order));
                        continue;
                    }
                    c.virtual_pipeline = vp;
                for (bool dopt : {false, true}) {
                    if (dopt && c.weight_replicas() == 1) continue;   // nothing to shard
                    if (pins.distributed_optimizer && *pins.distributed_optimizer != dopt) continue;
                    ParallelismConfig layout = c;
                    set_distributed_optimizer(layout, dopt);
                    if (pins.reduction_after_backward) set_reduction_after_backward(layout, *pins.reduction_after_backward);
                    ++result.enumerated;
                    // The memory estimate first, from the graph the table would be built from (its shape options)
                    // and the layout's split: most layouts of a large model are over HBM and need no kernels priced.
                    const bool known_to_fit = job.known_to_fit && job.known_to_fit(layout);
                    layers::MemoryEstimate estimate = layout_memory(workload, *graph, gpu, layout, memory);
                    if (vp == 1 && dopt == (layout.weight_replicas() > 1) && !job.known_to_fit) least_over = !estimate.fits;
                    if (!estimate.fits && !known_to_fit) {
                        result.too_big.push_back(LayoutCandidate{layout, std::move(estimate)});
                        continue;
                    }
                    // The kernels' prices depend on the graph and the optimizer's shards only: layouts that differ in
                    // PP, VP or DP share one table for their bounds; the few that are priced get their own (below),
                    // whose memory is their layout's.
                    const int shards = optimizer_shards(layout);
                    std::shared_ptr<const OperatorTable>& table = bound_tables[{graph_key(layout), shards}];
                    if (!table) table = build_operator_table(workload, *graph, gpu, layout, shards, memory);
                    LayoutCandidate candidate{layout, std::move(estimate)};
                    std::shared_ptr<const EvalTable> eval_table = eval_table_of(layout, *table);
                    const std::optional<double> quick = quick_bound(layout, table, eval_table);
                    unpriced.push_back({std::move(candidate), table, std::move(eval_table), quick});
                }
                }
                if (recompute == recompute_choices.front() && result.enumerated > enumerated_before &&
                    result.too_big.size() == too_big_before)
                    own_recompute_fits.insert(split);
                if (least_over) break;
            }
            }
            }
        }
    }

    // Branch and bound: take the layouts in ascending order of their quick bound; one whose bound cannot beat the
    // fastest priced so far is out; else its bound is tightened to the step with free collectives, and only if that
    // still can is it priced. Only a bound above the best by a relative 1e-9 (far more than the rounding of the sums)
    // skips, so a layout that could tie, and win the tie (`faster`), is priced. Both bounds are lower bounds, so the
    // winner is the one pricing all would give: `faster` orders every priced layout, and none skipped could beat it.
    // Best first over (bound, enumeration index): a layout whose quick bound comes up has its bound tightened and
    // goes back in, so layouts are priced in ascending order of their tighter bound, as if every one had it.
    using Entry = std::pair<double, std::size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
    for (std::size_t i = 0; i < unpriced.size(); ++i) queue.push({unpriced[i].ttt_bound.value_or(0.0), i});
    std::vector<LayoutCandidate> bounded;
    while (!queue.empty()) {
        Unpriced& u = unpriced[queue.top().second];
        const std::size_t index = queue.top().second;
        queue.pop();
        LayoutCandidate& candidate = u.candidate;
        const ParallelismConfig& c = candidate.layout;
        const bool always = job.always_price && job.always_price(c);
        if (result.best && u.ttt_bound && *u.ttt_bound > result.best->ttt_minutes * (1 + 1e-9) && !always) {
            candidate.ttt_lower_bound_minutes = *u.ttt_bound;
            bounded.push_back(std::move(candidate));
            continue;
        }
        if (!u.full_bound) {
            // The step with free collectives; a pipeline's without simulating it (step_bounds.hpp): with free
            // communication the 1F1B and interleaved bounds are their bubbles, so a simulated one would cost about
            // what pricing the layout does.
            const PrepareReuse reuse{.collectives = &session, .operator_table = u.bound_table, .eval_table = u.eval_table,
                                     .without_collectives = true};
            u.ttt_bound = ttt_unsimulated_lower_bound_minutes(prepare_layout(c, reuse), profile);
            u.full_bound = true;
            queue.push({u.ttt_bound.value_or(0.0), index});
            continue;
        }
        // Its own table: the bound's shared one holds another layout's memory.
        const std::shared_ptr<const OperatorTable> table =
            table_with_layout_memory(*u.bound_table, workload, graph_cache.graph(workload, c), gpu, c, memory);
        PreparedScenario scenario =
            prepare_layout(c, {.collectives = &session, .operator_table = table, .eval_table = u.eval_table});
        Prediction p = evaluate(scenario, profile);
        candidate.priced = true;
        candidate.ttt_minutes = p.ttt_minutes;
        candidate.step_ms = p.step_ms;
        ++result.priced;
        if (result.fitting.empty() || faster(candidate, result.fitting.front())) {
            result.best_scenario = std::move(scenario);
            result.best = std::move(p);
            result.fitting.insert(result.fitting.begin(), std::move(candidate));
        } else {
            result.fitting.push_back(std::move(candidate));
        }
    }
    std::sort(result.fitting.begin(), result.fitting.end(), faster);
    std::stable_sort(bounded.begin(), bounded.end(), [](const LayoutCandidate& a, const LayoutCandidate& b) {
        return a.ttt_lower_bound_minutes < b.ttt_lower_bound_minutes;
    });
    for (LayoutCandidate& b : bounded) result.fitting.push_back(std::move(b));   // in ascending order of bound
    std::sort(result.too_big.begin(), result.too_big.end(),
              [](const LayoutCandidate& a, const LayoutCandidate& b) { return a.memory.total < b.memory.total; });
    result.rejected = std::move(reasons);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace ttsim
