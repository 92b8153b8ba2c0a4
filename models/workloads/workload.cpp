// The rules over the workload catalog (evaluation cadence, default layouts and batches, model state); the
// catalog itself is data, read by workload_catalog.cpp.
#include "models/workloads/workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/errors.hpp"

namespace ttsim {
namespace {

std::uint64_t checked_global_batch(std::int64_t global_batch) {
    if (global_batch < 1)
        throw InputError("global batch must be at least 1 (got " + std::to_string(global_batch) + ")",
                         Field::global_batch);
    return static_cast<std::uint64_t>(global_batch);
}

}  // namespace

const char* to_string(ConvergenceUnit unit) {
    switch (unit) {
        case ConvergenceUnit::samples: return "samples";
        case ConvergenceUnit::epochs: return "epochs";
        case ConvergenceUnit::tokens: return "tokens";
    }
    return "samples";
}

std::uint64_t bert_eval_interval_samples(std::int64_t global_batch) {
    return eval_schedule(find_workload("bert"), global_batch).interval_samples;
}

long long evaluations_until(const EvalSchedule& schedule, double samples) {
    if (!schedule.on_the_clock || schedule.interval_samples == 0) return 0;
    const double first = static_cast<double>(schedule.first_eval_samples);
    if (samples <= first) return 1;
    return 1 + static_cast<long long>(std::ceil((samples - first) / static_cast<double>(schedule.interval_samples) - 1e-9));
}

EvalSchedule eval_schedule(const Workload& workload, std::int64_t global_batch) {
    const std::uint64_t gbs = checked_global_batch(global_batch);
    const EvalRule& rule = workload.eval_rule;
    EvalSchedule s;
    s.on_the_clock = workload.eval_on_the_clock;
    switch (rule.interval) {
        case EvalRule::Interval::fixed:
            s.interval_samples = static_cast<std::uint64_t>(rule.samples);
            if (rule.whole_steps) s.interval_samples = (s.interval_samples + gbs - 1) / gbs * gbs;
            break;
        case EvalRule::Interval::epoch:
            TTSIM_ASSERT(workload.train_samples.has_value(), workload.name + " evaluates per epoch but has no dataset size");
            s.interval_samples = *workload.train_samples;
            break;
        case EvalRule::Interval::batch_linear: {
            const double raw = rule.scale * (rule.per_batch * static_cast<double>(gbs) + rule.base);
            s.interval_samples =
                static_cast<std::uint64_t>(std::floor(raw / rule.round_to)) * static_cast<std::uint64_t>(rule.round_to);
            break;
        }
    }
    const std::uint64_t skipped =
        static_cast<std::uint64_t>(std::floor(rule.skip_per_batch * static_cast<double>(gbs) + rule.skip_base));
    s.first_eval_samples = (skipped + 1) * s.interval_samples;
    return s;
}

// How the default is derived (see the header): nearest published GPU count of the same family (or of H100-SXM
// when the family has nothing within 2x), keep model parallelism, rescale data parallelism, hold the global
// batch when it splits evenly.
ParallelismChoice default_parallelism(const Workload& workload, std::string_view system_family, int gpus) {
    if (gpus < 1) throw InputError("GPU count must be at least 1 (got " + std::to_string(gpus) + ")", Field::gpus);
    const GpuSpec& gpu = find_gpu(system_family);   // InputError for unknown families
    ParallelismChoice choice;

    // Nearest published GPU count in log scale; ties go to the requested family, then to the smaller count.
    auto nearest_of = [&](bool include_reference_platform) -> const PublishedParallelism* {
        const PublishedParallelism* best = nullptr;
        double best_distance = 0;
        for (const PublishedParallelism& p : workload.published_parallelism) {
            const bool own = p.system_family == gpu.name;
            if (!own && !(include_reference_platform && p.system_family == reference_gpu().name)) continue;
            const double distance = std::abs(std::log(static_cast<double>(gpus) / p.gpus));
            bool better = best == nullptr || distance < best_distance - 1e-12;
            if (!better && std::abs(distance - best_distance) <= 1e-12) {
                const bool best_own = best->system_family == gpu.name;
                better = (own && !best_own) || (own == best_own && p.gpus < best->gpus);
            }
            if (better) {
                best = &p;
                best_distance = distance;
            }
        }
        return best;
    };
    // The family's own layouts if one is within 2x of the requested count; otherwise NVIDIA's H100-SXM layouts
    // (its reference platform, published up to thousands of GPUs) compete too.
    const PublishedParallelism* nearest = nearest_of(false);
    if (nearest == nullptr || std::abs(std::log(static_cast<double>(gpus) / nearest->gpus)) > std::log(2.0) + 1e-12)
        nearest = nearest_of(true);
    TTSIM_ASSERT(nearest != nullptr, "workload without published H100 parallelism");
    if (nearest->system_family != gpu.name)
        choice.notes.push_back("no published " + workload.name + " layout for " + gpu.name + " near " +
                               std::to_string(gpus) + " GPUs; derived from " + nearest->system_family + " at " +
                               std::to_string(nearest->gpus) + " GPUs");
    choice.basis = *nearest;
    choice.exact_match = nearest->gpus == gpus && nearest->system_family == gpu.name;

    ParallelismConfig c = nearest->config;
    // A submission's own departures from the workload's recipe (its GEMM precision, a masked-LM head on every token:
    // BERT at 3,472 GPUs; FP8 attention: LoRA on one H100 node and on B200) describe that run, not a scale or a GPU:
    // a layout derived from it takes the workload's own. (Its launch mode, cuda_graphs, is kept: it follows the
    // per-GPU batch the scale brings. So are its gradient reduction and block count: the recipe NVIDIA tuned at that
    // scale, the nearest evidence of what the framework does there.)
    if (!choice.exact_match) {
        c.precision.clear();
        c.head_on_all_tokens = false;
        c.attention_precision.clear();
    }
    const int model_parallel = c.tensor_parallel * c.context_parallel * c.pipeline_parallel;
    if (gpus % model_parallel != 0)
        throw InputError(std::to_string(gpus) + " GPUs cannot hold " + workload.name + "'s published layout (TP " +
                             std::to_string(c.tensor_parallel) + " x CP " + std::to_string(c.context_parallel) +
                             " x PP " + std::to_string(c.pipeline_parallel) + " = " + std::to_string(model_parallel) +
                             " GPUs per replica); use a multiple of " + std::to_string(model_parallel),
                         Field::gpus);
    c.data_parallel = gpus / model_parallel;

    // The batch v4.1 suggests here: interpolated in log(batch) over log(GPUs) between the published scales around
    // the requested count (batches grew with scale in v4.1 roughly as a power law). The ladder is the reference
    // platform's (H100-SXM, published from 4 to thousands of GPUs) whatever the GPU: the batch is what convergence
    // is measured at, a property of the workload and the scale, so a what-if over GPU types compares them at the
    // same batch (a family's own ladder would give an H200 or B200 job at 16 GPUs its 8-GPU batch, 768 for BERT,
    // where an H100 job takes 1,392). An exact match of the family's own published layout keeps its own batch.
    {
        const std::string& ladder = reference_gpu().name;
        const PublishedParallelism* below = nullptr;
        const PublishedParallelism* above = nullptr;
        for (const PublishedParallelism& p : workload.published_parallelism) {
            if (p.system_family != ladder) continue;
            if (p.gpus <= gpus && (!below || p.gpus > below->gpus)) below = &p;
            if (p.gpus >= gpus && (!above || p.gpus < above->gpus)) above = &p;
        }
        const std::string family = " " + ladder + " GPUs";
        if (below && above && below->gpus != above->gpus &&
            below->config.global_batch == above->config.global_batch) {
            choice.batch_target = below->config.global_batch;
            choice.batch_source = "v4.1's at " + std::to_string(below->gpus) + " and " + std::to_string(above->gpus) + family;
        } else if (below && above && below->gpus != above->gpus) {
            const double t = std::log(static_cast<double>(gpus) / below->gpus) / std::log(static_cast<double>(above->gpus) / below->gpus);
            const double logb = std::log(below->config.global_batch) +
                                t * std::log(static_cast<double>(above->config.global_batch) / below->config.global_batch);
            choice.batch_target = static_cast<int>(std::lround(std::exp(logb)));
            choice.batch_source = "interpolated between v4.1's " + std::to_string(below->config.global_batch) + " at " +
                                  std::to_string(below->gpus) + " and " + std::to_string(above->config.global_batch) +
                                  " at " + std::to_string(above->gpus) + family;
        } else {
            const PublishedParallelism* edge = below ? below : above;   // outside the ladder: its nearest end
            choice.batch_target = edge->config.global_batch;
            choice.batch_source = "v4.1's at " + std::to_string(edge->gpus) + family;
        }
        if (choice.exact_match) {
            choice.batch_target = nearest->config.global_batch;
            choice.batch_source = "v4.1's at " + std::to_string(nearest->gpus) + " " + nearest->system_family + " GPUs";
        }
    }
    if (!choice.exact_match) {
        const BatchChoice batch = default_global_batch(choice.batch_target, largest_published_micro_batch(workload),
                                                       c.data_parallel, BatchBounds{}, choice.batch_source);
        c.global_batch = batch.global_batch;
        c.samples_per_micro_batch = batch.samples_per_micro_batch;
        c.gradient_accumulation = batch.gradient_accumulation;
        choice.batch_note = batch.note;
        if (c.packing_factor > 1 && c.samples_per_micro_batch % c.packing_factor != 0) {
            c.packing_factor = 1;
            choice.notes.push_back("micro batch not a multiple of the packing factor; packing off");
        }
        // NVIDIA enables SHARP on multi-node runs (params.md §2) and has nothing to reduce in-network on one node.
        // (Stated once by the caller that decides the final switch, e.g. predict.)
        const bool multi_node = gpus > gpu.gpus_per_scaleup_domain;
        if (gpu.vendor == "NVIDIA") c.sharp = multi_node;
    }
    TTSIM_ASSERT(c.gpus() == gpus, "derived parallelism does not cover the requested GPUs");
    choice.config = c;
    return choice;
}

long long round_to_data_parallel(long long target, long long data_parallel, long long floor, long long smallest_rcp,
                                 long long largest_rcp) {
    TTSIM_ASSERT(target > 0 && data_parallel > 0, "batch rounding needs positive sizes");
    const long long up = std::max(data_parallel, (target + data_parallel - 1) / data_parallel * data_parallel);
    const long long down = target / data_parallel * data_parallel;
    const bool down_possible = down >= data_parallel && down >= smallest_rcp;
    const bool down_nearer = target - down < up - target;
    if (down_possible && down_nearer && down >= floor) return down;
    // Up would leave the RCPs' measured convergence: the nearer of the two, even below the floor.
    if (down_possible && down_nearer && largest_rcp > 0 && up > largest_rcp) return down;
    return up;
}

BatchChoice default_global_batch(int published_batch, int published_micro, int data_parallel,
                                 const BatchBounds& bounds, const std::string& source) {
    TTSIM_ASSERT(published_batch > 0 && published_micro > 0 && data_parallel > 0, "batch rule needs positive sizes");
    BatchChoice b;
    const long long dp = data_parallel;
    long long target = published_batch;
    std::vector<std::string> why;
    if (bounds.largest_rcp > 0 && target > bounds.largest_rcp) {
        target = bounds.largest_rcp;
        why.push_back("capped at the largest RCP batch " + std::to_string(bounds.largest_rcp));
    }
    if (bounds.smallest_rcp > 0 && target < bounds.smallest_rcp) {
        target = bounds.smallest_rcp;
        why.push_back("raised to the smallest RCP batch " + std::to_string(bounds.smallest_rcp));
    }
    if (bounds.at_fewer_gpus > target) {
        target = bounds.at_fewer_gpus;
        why.push_back("raised to " + std::to_string(target) + ", v4.1's batch at fewer GPUs (a default never falls below it)");
    }
    const long long batch =
        round_to_data_parallel(target, dp, bounds.at_fewer_gpus, bounds.smallest_rcp, bounds.largest_rcp);
    const bool below_floor_for_rcps = batch < bounds.at_fewer_gpus;
    if (batch != target)
        why.push_back(std::string("rounded ") + (batch < target ? "down" : "up") + " to a multiple of " +
                      std::to_string(data_parallel) + " data-parallel ranks");
    if (below_floor_for_rcps)
        why.push_back("below v4.1's " + std::to_string(bounds.at_fewer_gpus) +
                      " at fewer GPUs: rounding up, farther, would pass the largest RCP batch " +
                      std::to_string(bounds.largest_rcp));
    if (bounds.largest_rcp > 0 && batch > bounds.largest_rcp)
        why.push_back("beyond the largest RCP batch " + std::to_string(bounds.largest_rcp) + ": convergence extrapolated");
    b.note = "global batch " + std::to_string(batch) + " (" +
             (batch == published_batch ? source : std::to_string(published_batch) + ", " + source);
    for (const std::string& reason : why) b.note += "; " + reason;
    b.note += ")";
    TTSIM_ASSERT(batch <= std::numeric_limits<int>::max(), "global batch overflows");
    const long long share = batch / dp;
    const int accumulation = fewest_micro_steps(share, published_micro);
    b.global_batch = static_cast<int>(batch);
    b.samples_per_micro_batch = static_cast<int>(share / accumulation);
    b.gradient_accumulation = static_cast<int>(accumulation);
    return b;
}

int fewest_micro_steps(long long share, int micro_limit) {
    TTSIM_ASSERT(share > 0 && micro_limit > 0, "micro-step split needs positive sizes");
    long long steps = (share + micro_limit - 1) / micro_limit;
    while (share % steps != 0) ++steps;
    return static_cast<int>(steps);
}

int largest_published_micro_batch(const Workload& workload) {
    int largest = 1;
    for (const PublishedParallelism& p : workload.published_parallelism)
        largest = std::max(largest, p.config.samples_per_micro_batch);
    return largest;
}

double model_state_bytes_per_gpu(const Workload& workload, const ParallelismConfig& layout) {
    const double model_split = static_cast<double>(layout.tensor_parallel) * layout.pipeline_parallel;
    const double shards = layout.distributed_optimizer ? layout.weight_replicas() : 1.0;
    const double weights = 2.0 * static_cast<double>(workload.total_params) / model_split;
    // Gradients as the framework keeps them (fp32 for LoRA's grad_reduce_in_fp32), as the layer memory model does.
    const double gradients =
        workload.gradient_element_bytes() * static_cast<double>(workload.trainable_params) / model_split;
    const double optimizer = 12.0 * static_cast<double>(workload.trainable_params) / model_split / shards;
    return weights + gradients + optimizer;
}

void set_distributed_optimizer(ParallelismConfig& layout, bool on) {
    if (layout.distributed_optimizer && !on) {
        layout.gradient_reduction_after_backward = false;
        layout.gradient_buckets = 0;
    }
    layout.distributed_optimizer = on;
}

void set_reduction_after_backward(ParallelismConfig& layout, bool after_backward) {
    if (layout.gradient_reduction_after_backward == after_backward) return;
    layout.gradient_reduction_after_backward = after_backward;
    layout.gradient_buckets = 0;
}

}  // namespace ttsim
