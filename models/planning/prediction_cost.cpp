#include "models/planning/prediction_cost.hpp"

#include "models/hardware/system.hpp"
#include "models/planning/plan_evaluator.hpp"

namespace ttsim::planning {

PredictionCost cost_of_prediction(const Prediction& prediction, const std::string& system_name,
                                  const EnergyParameters& energy, const CostParameters& cost,
                                  std::optional<AllocationUnit> allocation, const FabricShape& shape) {
    const System system = with_allocation(resolve_system(system_name), allocation);
    // The point and outcome a sweep would have made of this prediction: what run_profile_of reads.
    SweepPoint point;
    point.workload = prediction.workload;
    point.system = point.base_system = system.name;
    point.gpus = prediction.gpus;
    point.allocation = allocation;
    point.network.shape = shape;
    PointOutcome outcome;
    outcome.ok = true;
    outcome.prediction = prediction;
    outcome.gpu_tdp_watts = system.gpu->tdp_watts;
    outcome.gpu_idle_watts = system.gpu->idle_watts;
    outcome.gpus_per_node = system.gpus_per_node;
    PredictionCost result;
    result.system = system.name;
    result.price_per_gpu_hour = cost.price_for(system.name);
    result.price_is_estimate = cost.price_is_estimate(system.name);
    // Billed as a sweep or plan row is: the whole allocation units the job rents (a DGX node, an NVL72 rack).
    result.rented_gpu_hours = rented_gpu_hours(system, prediction.gpus, prediction.ttt_minutes);
    result.cost = result.rented_gpu_hours * result.price_per_gpu_hour;
    result.energy = energy_of(run_profile_of(point, outcome, energy), energy);
    return result;
}

}  // namespace ttsim::planning
