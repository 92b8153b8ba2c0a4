#include "models/planning/plan_evaluator.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "models/planning/prediction_band.hpp"
#include "models/planning/variant_config.hpp"
#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"
#include "models/workloads/workload.hpp"
#include "topologies/presets.hpp"

namespace ttsim::planning {

void add_published_counts(PlanQuery& query, const std::string& workload) {
    if (query.custom_workload) return;   // a user model has no published results
    const Workload& w = find_workload(workload);
    for (const std::string& label : query.systems) {
        const std::string family = resolve_system(base_system_of(label, query.variants)).catalog_gpu->name;
        std::vector<int>& counts = query.published_counts[label];
        for (const PublishedParallelism& p : w.published_parallelism)
            if (p.system_family == family) counts.push_back(p.gpus);
    }
}

RunProfile run_profile_of(const SweepPoint& point, const PointOutcome& outcome, const EnergyParameters& energy) {
    const Prediction& p = outcome.prediction;
    const System system = point_system(point);
    RunProfile run;
    run.gpus = point.gpus;
    run.units = system.allocation_units(point.gpus);
    run.rented_gpus = run.units * system.allocation_unit_gpus;
    run.unit_watts = non_gpu_watts_per_unit(system, energy);
    run.ttt_seconds = p.ttt_minutes * 60.0;
    // Busy = compute of every step (compute_ms includes the optimizer) + on-the-clock evaluation.
    run.busy_seconds = std::min(run.ttt_seconds, p.steps * p.compute_ms / 1e3 + p.eval_minutes * 60.0);
    run.gpu_tdp_watts = outcome.gpu_tdp_watts;
    run.gpu_idle_watts = outcome.gpu_idle_watts;
    run.network_switches = network_switches_for(point.gpus, outcome.gpus_per_node, system.fabric);
    return run;
}

PlanEvaluator make_prediction_evaluator(const std::string& workload, const ProfileSet& profiles,
                                        const EnergyParameters& energy, const CostParameters& cost,
                                        const PlanQuery& query) {
    // Variants' GPUs, built once (make_variant_gpu validates them).
    std::map<std::string, std::pair<std::string, std::shared_ptr<const GpuSpec>>> variants;
    for (const HardwareVariant& v : query.variants)
        variants[v.name] = {v.base_system, std::make_shared<const GpuSpec>(make_variant_gpu(v))};
    return [workload, &profiles, energy, cost, routing = query.routing, sharp = query.sharp, network = query.network,
            memory_reserve = query.memory_reserve_bytes, reliability = query.reliability,
            topology_file = query.topology_file, batch = query.batch, allocation = query.allocation, layout = query.layout,
            custom_workload = query.custom_workload, model_errors = query.model_errors,
            not_quoted = query.model_error_not_quoted, stack_named = query.stack_named,
            variants = std::move(variants)](const PlanCandidate& candidate) {
        SweepPoint point;
        point.workload = workload;
        point.system = candidate.system;
        point.base_system = candidate.system;
        if (const auto v = variants.find(candidate.system); v != variants.end()) {
            point.base_system = v->second.first;
            point.variant_gpu = v->second.second;
        }
        point.gpus = candidate.gpus;
        point.routing = routing;
        point.sharp = sharp;
        point.memory_reserve_bytes = memory_reserve;
        point.reliability = reliability;
        point.network = network;
        point.topology_file = topology_file;
        point.batch = batch;
        point.allocation = allocation;
        point.layout = layout;
        point.custom_workload = custom_workload;
        const PointOutcome outcome = predict_point(point, profiles);
        PlanEvaluation e;
        e.ok = outcome.ok;
        e.error = outcome.error;
        if (!outcome.ok) return e;
        e.ttt_minutes = outcome.prediction.ttt_minutes;
        // The band: convergence spread, the fit's parameter uncertainty and the model error of this candidate's
        // kind of extrapolation (prediction_band.hpp), judged at the confidence like the spread alone was.
        const ComputeProfile profile = workload_profile(
            profiles, trained_workload(custom_workload, workload), find_gpu(outcome.catalog_gpu));
        const PredictionBand band =
            prediction_band(outcome.prediction, profile, model_errors, {candidate.gpus, stack_named, false}, not_quoted);
        e.ttt_p10_minutes = band.p10;
        e.ttt_p90_minutes = band.p90;
        e.band = describe_band(band);
        e.band_kind = band.model ? key_of(band.model->kind) : "";
        // A deadline is met or missed in wall time: the median and the p90 include failures, checkpoints and
        // restarts (models/reliability), the p90 at the p90 convergence. The p10 stays the failure-free p10 (a run
        // that meets no failure). An MLPerf-length job's median run meets none, so its p50 is unchanged.
        if (const auto& r = outcome.prediction.reliability) {
            e.ttt_minutes = r->runs.p50_wall_seconds / 60.0;
            e.ttt_p90_minutes = std::max(e.ttt_p90_minutes, r->wall_p90_at_p90_minutes);
        }
        e.gpu_hours = outcome.prediction.gpu_hours;
        e.rented_gpus = outcome.rented_gpus;
        e.allocation = outcome.allocation;
        e.layout = describe_layout(outcome.prediction.layout);
        e.global_batch = outcome.prediction.global_batch;
        // Billed in whole units (cost_energy.hpp); a variant is priced as its base system.
        e.cost = rented_gpu_hours(point_system(point), point.gpus, e.ttt_minutes) * cost.price_of(point.system, point.base_system);
        e.energy_kwh = energy_of(run_profile_of(point, outcome, energy), energy).facility_kwh;
        e.warnings = outcome.prediction.warnings;
        return e;
    };
}

}  // namespace ttsim::planning
