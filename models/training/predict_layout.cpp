// predict() with the layout chosen by search (layout_search.hpp): which requests search, how the pins, the
// global batch and the layout's switches are settled, and the published layout's prediction beside the result.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"
#include "sim/errors.hpp"

namespace ttsim {

namespace {

// The published layout's request: today's prediction at this scale (no pins, no search).
PredictionRequest published_request(const PredictionRequest& request) {
    PredictionRequest r = request;
    r.layout = {LayoutMode::published, {}};
    r.tensor_parallel.reset();
    r.context_parallel.reset();
    r.gradient_accumulation.reset();
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

// --tp / --cp / gradient accumulation pin the search like --layout's keys; both for one key must agree.
LayoutPins merged_pins(const PredictionRequest& request) {
    LayoutPins pins = request.layout.pins;
    auto merge = [](std::optional<int>& pin, const std::optional<int>& flag, const char* key, Field field) {
        if (!flag) return;
        if (pin && *pin != *flag)
            throw InputError(fmt::format("--layout {}={} contradicts {}", key, *pin, *flag), field);
        pin = flag;
    };
    merge(pins.tensor_parallel, request.tensor_parallel, "tp", Field::tensor_parallel);
    merge(pins.context_parallel, request.context_parallel, "cp", Field::context_parallel);
    merge(pins.gradient_accumulation, request.gradient_accumulation, "accumulation", Field::layout);
    return pins;
}

// A user model has no published layout; beside its fastest one it gets the layout a Megatron-LM recipe would
// start from: TP within the NVLink domain and at most 8 (the recipes' largest TP: on a 72-GPU NVLink domain TP 72
// would split no model's heads), the largest such TP that is valid and fits, no CP, micro batch 1, distributed
// optimizer (where there is more than one weight replica).
constexpr int kConventionalMaxTp = 8;

bool conventional(const ParallelismConfig& l, int domain) {
    return l.tensor_parallel <= std::min(domain, kConventionalMaxTp) && l.context_parallel == 1 &&
           l.samples_per_micro_batch == 1 && l.distributed_optimizer == (l.weight_replicas() > 1);
}

// The search prices every such candidate always (LayoutSearchJob::always_price), so its time is there when it fits.
std::optional<Prediction::Alternative> conventional_alternative(const LayoutSearchResult& result, int domain) {
    const LayoutCandidate* chosen = nullptr;
    for (const LayoutCandidate& c : result.fitting)
        if (conventional(c.layout, domain) && (!chosen || c.layout.tensor_parallel > chosen->layout.tensor_parallel))
            chosen = &c;
    if (!chosen) return std::nullopt;
    TTSIM_ASSERT(chosen->priced, "the conventional alternative was not priced");
    return Prediction::Alternative{Prediction::Alternative::Basis::megatron,
                                   fmt::format("Megatron-style (TP {}: the largest valid within the NVLink domain and "
                                               "<= {}, micro batch 1, distributed optimizer)",
                                               chosen->layout.tensor_parallel, kConventionalMaxTp),
                                   chosen->layout, chosen->ttt_minutes, chosen->step_ms, chosen->memory.total,
                                   chosen->memory.fits};
}

// The published layout nearest `gpus` (default_parallelism), or none where no published split divides the count.
std::optional<ParallelismConfig> published_split_near(const Workload& workload, const std::string& gpu, int gpus) {
    try {
        return default_parallelism(workload, gpu, gpus).config;
    } catch (const InputError&) {
        return std::nullopt;
    }
}

// Where the published replica cannot serve `gpus` (one sample per data-parallel rank is beyond the RCPs), the
// published request prepared with a larger replica, so the default batch is sized for it as predict() sizes it for
// a pinned TP x CP without search: the pinned one (its own refusal, naming the pins, if even it cannot serve), or
// else the published split with CP (where modelled, else TP within the NVLink domain) doubled until predict() finds
// one sample per replica within the RCPs (its refusal, Field::gpus, is the test: the batch rules live there); none
// where no larger replica serves.
std::optional<PreparedScenario> larger_replica_default(const PredictionRequest& request, const LayoutPins& pins,
                                                       const Workload& workload, const System& system, int gpus,
                                                       StepCollectiveSession* shared) {
    PredictionRequest r = published_request(request);
    if (pins.tensor_parallel || pins.context_parallel) {
        r.tensor_parallel = pins.tensor_parallel;
        r.context_parallel = pins.context_parallel;
        return prepare(r, shared);
    }
    const std::optional<ParallelismConfig> start = published_split_near(workload, system.gpu->name, gpus);
    if (!start) return std::nullopt;   // the published layout's refusal stands
    for (int tp = start->tensor_parallel, cp = start->context_parallel;;) {
        if (workload.context_parallel_modelled()) cp *= 2;
        else if (system.tensor_parallel_fits_domain(tp * 2, gpus)) tp *= 2;
        else return std::nullopt;
        if (static_cast<long long>(tp) * cp * start->pipeline_parallel > gpus) return std::nullopt;
        if (!system.model_parallel_fits_domain(tp, cp, gpus)) continue;   // groups across domains unevenly: skip
        r.tensor_parallel = tp;
        r.context_parallel = cp;
        try {
            return prepare(r, shared);
        } catch (const InputError& e) {
            if (e.field() != Field::gpus) return std::nullopt;   // not the batch refusal: this replica cannot run at all
        }
    }
}

}  // namespace

bool uses_layout_search(const PredictionRequest& request, const ProfileSet& profiles) {
    if (request.custom_workload) return true;
    switch (request.layout.mode) {
        case LayoutMode::published: return false;
        case LayoutMode::fastest:
        case LayoutMode::pinned: return true;
        case LayoutMode::automatic: break;
    }
    const Workload& workload = find_workload(request.workload);
    const System system = resolve_system(request.system);
    if (!workload.layer_model || !system.gpu->sms) return false;
    return workload_profile(profiles, workload, *system.catalog_gpu).operator_efficiency.has_value();
}

Prediction predict_searched(const PredictionRequest& request, const ProfileSet& profiles) {
    return predict_searched_explained(request, profiles).prediction;
}

ExplainedPrediction predict_searched_explained(const PredictionRequest& request, const ProfileSet& profiles) {
    if (request.custom_workload && request.layout.mode == LayoutMode::published)
        throw InputError("a user-defined model has no published layout; use fastest or tp=..,cp=..", Field::layout);
    const std::shared_ptr<const Workload> owned = request.custom_workload;
    const Workload& workload = owned ? *owned : find_workload(request.workload);
    const System system = resolve_request_system(request);
    const GpuSpec& gpu = *system.catalog_gpu;
    const int n = request.gpus;
    check_job_size(system, n);
    if (!workload.layer_model || !system.gpu->sms)
        throw InputError(workload.name + " on " + system.gpu->name +
                             " has no layer graph to search layouts with; use --layout published",
                         Field::layout);
    const ComputeProfile profile = workload_profile(profiles, workload, gpu);
    if (!profile.operator_efficiency)
        throw InputError("the layout search prices layouts with the operator model, and the " + workload.name + " profile for " +
                             gpu.name + " is a lumped one; use --layout published, --tp/--cp instead of --layout pins (priced as given, no search), or an operator profile set",
                         Field::layout);

    // One collective session for the published layout and the search (the published layout is one of the
    // searched ones, so its collectives are simulated once), at the SHARP both settle on; where SHARP is asked
    // for and cannot run, each path refuses it itself, so no session is shared.
    const bool sharp_refused = request.sharp.value_or(false) && !sharp_unavailable_reason(system, n).empty();
    std::optional<StepCollectiveSession> session;
    if (!sharp_refused) session.emplace(system, n, request.sharp.value_or(sharp_by_default(system, n)));
    StepCollectiveSession* shared = session ? &*session : nullptr;

    // The published layout at this scale, where one exists: the comparison, the default batch and the switches.
    std::optional<PreparedScenario> published;
    std::optional<InputError> published_error;
    if (!owned) {
        try {
            published = prepare(published_request(request), shared);
        } catch (const InputError& e) {
            published_error = e;
        }
    }
    LayoutSearchJob job;
    job.owned_workload = owned;
    job.workload = &workload;
    job.system = system;
    job.gpus = n;
    job.pins = merged_pins(request);
    if (request.tensor_parallel) job.tensor_parallel_field = Field::tensor_parallel;
    if (request.context_parallel) job.context_parallel_field = Field::context_parallel;
    std::vector<std::string> defaults;
    // Where the published replica cannot serve this scale, the default batch is sized for a larger one.
    std::optional<PreparedScenario> larger_replica;
    const bool replica_pinned = job.pins.tensor_parallel || job.pins.context_parallel;
    const bool batch_given = request.global_batch || request.samples_per_rank;
    if (!batch_given && !published && published_error && published_error->field() == Field::gpus &&
        workload.tensor_parallel_modelled())
        larger_replica = larger_replica_default(request, job.pins, workload, system, n, shared);
    check_batch_request(request);
    if (request.global_batch) {
        job.global_batch = *request.global_batch;
    } else if (request.samples_per_rank) {
        job.samples_per_rank = *request.samples_per_rank;
        defaults.push_back(fmt::format("global batch = {} samples per data-parallel rank x each layout's DP",
                                       *job.samples_per_rank));
    } else if (published) {
        job.global_batch = published->layout.global_batch;
        // How predict() chose that batch for the published layout (v4.1's own, or interpolated between scales).
        defaults.push_back(published->batch_note.empty()
                               ? fmt::format("global batch {} of the published layout at this scale", job.global_batch)
                               : published->batch_note + "; the layouts are searched at it");
    } else if (larger_replica) {
        job.global_batch = larger_replica->layout.global_batch;
        defaults.push_back(fmt::format(
            "global batch {}: the default batch sized for {} TP {} x CP {} replica (one sample per replica of the "
            "published layout would be more than the RCPs cover); every layout is searched at it",
            job.global_batch, replica_pinned ? "the pinned" : "the smallest larger", larger_replica->layout.tensor_parallel,
            larger_replica->layout.context_parallel));
    } else if (published_error) {
        throw *published_error;   // no batch to search at: what made the published layout fail says why
    } else {
        throw InputError("a user-defined model needs its global batch", Field::global_batch);
    }
    if (published) {
        job.switches = published->layout;
    } else if (larger_replica) {
        job.switches = larger_replica->layout;
    } else {
        // The workload's switches: of the published layout nearest this scale (its batch may be what failed, e.g.
        // per rank), else of the 8-GPU one.
        if (!owned) {
            const std::optional<ParallelismConfig> near = published_split_near(workload, gpu.name, n);
            job.switches = near ? *near : default_parallelism(workload, gpu.name, 8).config;
        }
        job.switches.sequence_parallel = job.switches.sequence_parallel || owned != nullptr;
        const std::string refusal = sharp_unavailable_reason(system, n);
        if (request.sharp.value_or(false) && !refusal.empty()) throw InputError(refusal, Field::sharp);
        job.switches.sharp = request.sharp.value_or(sharp_by_default(system, n));
    }

    TTSIM_ASSERT(!shared || job.switches.sharp == request.sharp.value_or(sharp_by_default(system, n)),
                 "the shared collective session prices another SHARP choice than the search");
    job.collectives = shared;
    job.graphs = request.graphs;
    if (owned) {
        const int domain = system.gpus_per_nvlink_domain;
        job.always_price = [domain](const ParallelismConfig& l) { return conventional(l, domain); };
    }
    // A published layout that ran on this GPU family fits, whatever the estimate says (prepare_as_answer's rule):
    // the search must not refuse what the submission ran (LoRA on 16 GB200s: the v5.0 layout, estimated at 225 GB
    // of 199, was refused, and its batch searched with a slower split). The published layout at this scale
    // follows the run's memory (ran_as_published), so what follows it does too.
    if (published && !published->ran_as_published.empty()) {
        const ParallelismConfig ran = published->layout;
        job.known_to_fit = [ran](const ParallelismConfig& l) { return follows_published_memory(l, ran); };
    }
    LayoutSearchResult result = search_layouts(job, profile);
    const bool pinned = job.pins.any();
    if (result.fitting.empty()) {
        // Name what the user set: --tp, else a --global-batch no split divides, or a --batch-per-rank whose
        // batches have no convergence data (nothing valid was left to try).
        const bool nothing_tried = request.layout.mode != LayoutMode::pinned && result.enumerated == 0;
        const Field field = request.tensor_parallel && request.layout.mode != LayoutMode::pinned ? Field::tensor_parallel
                            : request.global_batch && nothing_tried     ? Field::global_batch
                            : request.samples_per_rank && nothing_tried ? Field::batch_per_rank
                                                                        : Field::layout;
        refuse_layouts(job, result, field);
    }
    Prediction p = *result.best;
    const bool over_estimate = !p.memory_fits && !p.memory_summary.empty() && published;   // job.known_to_fit's
    if (over_estimate) p.warnings.push_back(ran_over_estimate_warning(p.memory_summary, published->ran_as_published));
    p.layouts_enumerated = result.enumerated;
    p.layouts_fitting = static_cast<int>(result.fitting.size());
    p.layout_search_seconds = result.seconds;
    p.layouts_priced = result.priced;
    const int bounded = p.layouts_fitting - result.priced;
    p.layout_choice = fmt::format("fastest of {} layout{} that fit{} ({} valid, {} over HBM{})", p.layouts_fitting,
                                  p.layouts_fitting == 1 ? "" : "s", pinned ? " the pins" : "", result.enumerated,
                                  result.too_big.size(),
                                  bounded == 0 ? std::string()
                                               : fmt::format("; {} priced, {} slower than the fastest even without collectives",
                                                             result.priced, bounded)) +
                      (over_estimate ? "; the fastest is over the memory estimate but holds what the published layout "
                                       "ran"
                                     : "");
    if (published) {
        const Prediction pub = evaluate(*published, profile);
        p.published = Prediction::Alternative{Prediction::Alternative::Basis::published,
                                              published->defaults.empty() ? "published" : published->defaults.front(),
                                              published->layout, pub.ttt_minutes, pub.step_ms,
                                              pub.memory_per_gpu_bytes, pub.memory_fits};
    }
    if (owned) p.published = conventional_alternative(result, system.gpus_per_nvlink_domain);
    for (auto& d : defaults) p.defaults.insert(p.defaults.begin(), d);
    if (owned)
        p.warnings.push_back("user-defined model: no calibrated profile of its own; priced with " + gpu.name +
                             "'s operator efficiencies and launch costs (shared by all workloads) and the median "
                             "per-step fixed cost calibrated on it");
    // A batch that caps the replicas: the data-parallel replicas must divide both the batch and the GPU count, so
    // at most gcd(batch, GPUs) of them (one sample per rank where the batch divides the count; one replica for a
    // prime batch of 509 on 64 GPUs), and where the search took that many the replicas must grow to use the GPUs. A
    // replica far larger than the model is split over at this scale (the published layout nearest this GPU count;
    // a user model's NVLink domain) mostly adds TP/CP communication, so fewer GPUs may train as fast. A split that
    // memory or a pin chose, below that cap, is not the batch's doing and is not warned about.
    const ParallelismConfig& chosen = result.best_scenario->layout;
    int usual_split = system.gpus_per_nvlink_domain;
    if (!owned) {
        const std::optional<ParallelismConfig> near = published_split_near(workload, gpu.name, n);
        usual_split = (near ? *near : default_parallelism(workload, gpu.name, 8).config).model_split();
    }
    const bool batch_caps_replicas = chosen.data_parallel == std::gcd(chosen.global_batch, n);
    if (batch_caps_replicas && chosen.model_split() > 2 * usual_split)
        p.warnings.push_back(fmt::format(
            "global batch {} on {} GPUs {}, so each replica spans {} GPUs (TP {} x CP {}), {:.3g}x the {} of {}; so "
            "large a replica mostly adds TP/CP communication, and fewer GPUs may train as fast or faster (compare GPU "
            "counts, e.g. in a sweep)",
            chosen.global_batch, n,
            chosen.data_parallel == chosen.global_batch
                ? std::string("leaves one sample per data-parallel rank")
                : fmt::format("splits into {} data-parallel replica{} at most at this count (the replicas must divide "
                              "the batch)",
                              chosen.data_parallel, chosen.data_parallel == 1 ? "" : "s"),
            chosen.model_split(), chosen.tensor_parallel, chosen.context_parallel,
            static_cast<double>(chosen.model_split()) / usual_split, usual_split,
            owned ? "the NVLink domain" : "the published layout nearest this scale"));
    if (request.compute_efficiency_vs_8gpu && !owned) p.efficiency_vs_8gpu = throughput_vs_8gpu(request, profile, p);
    return {std::move(p), std::move(*result.best_scenario), profile};
}

}  // namespace ttsim
