#include "models/planning/plan_evaluator.hpp"

#include <algorithm>

namespace ttsim::planning {

RunProfile run_profile_of(const SweepPoint& point, const PointOutcome& outcome) {
    const Prediction& p = outcome.prediction;
    RunProfile run;
    run.gpus = point.gpus;
    run.gpus_per_node = outcome.gpus_per_node;
    run.ttt_seconds = p.ttt_minutes * 60.0;
    // Busy = compute of every step (compute_ms includes the optimizer) + on-the-clock evaluation.
    run.busy_seconds = std::min(run.ttt_seconds, p.steps * p.compute_ms / 1e3 + p.eval_minutes * 60.0);
    run.gpu_tdp_watts = outcome.gpu_tdp_watts;
    run.gpu_idle_watts = outcome.gpu_idle_watts;
    run.network_switches = network_switches_for(point.gpus, outcome.gpus_per_node);
    return run;
}

PlanEvaluator make_prediction_evaluator(const std::string& workload, const ProfileSet& profiles,
                                        const EnergyParameters& energy, const CostParameters& cost,
                                        const PlanQuery& query) {
    return [workload, &profiles, energy, cost, routing = query.routing,
            sharp = query.sharp](const PlanCandidate& candidate) {
        SweepPoint point;
        point.workload = workload;
        point.system = candidate.system;
        point.base_system = candidate.system;
        point.gpus = candidate.gpus;
        point.routing = routing;
        point.sharp = sharp;
        const PointOutcome outcome = predict_point(point, profiles);
        PlanEvaluation e;
        e.ok = outcome.ok;
        e.error = outcome.error;
        if (!outcome.ok) return e;
        e.ttt_minutes = outcome.prediction.ttt_minutes;
        e.ttt_p10_minutes = outcome.prediction.ttt_p10_minutes;
        e.ttt_p90_minutes = outcome.prediction.ttt_p90_minutes;
        e.gpu_hours = outcome.prediction.gpu_hours;
        e.cost = e.gpu_hours * cost.price_for(candidate.system);
        e.energy_kwh = energy_of(run_profile_of(point, outcome), energy).facility_kwh;
        e.warnings = outcome.prediction.warnings;
        return e;
    };
}

}  // namespace ttsim::planning
