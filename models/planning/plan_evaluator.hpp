// ttsim's predictions as a PlanEvaluator: a candidate (system, GPU count) is predicted at predict()'s default
// layout and batch, then priced (GPU-hours x price) and its energy estimated (cost_energy.hpp).
#pragma once

#include "models/compute/compute_profile.hpp"
#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_query.hpp"
#include "models/planning/point_prediction.hpp"

namespace ttsim::planning {

// The inputs of the energy model for one predicted point.
RunProfile run_profile_of(const SweepPoint& point, const PointOutcome& outcome, const EnergyParameters& energy);

// `profiles` must outlive the evaluator (`query` need not: its fabric choices are copied). Thread-safe
// (predict() is). Collectives are simulated on the systems' preset topologies with the query's routing and SHARP.
PlanEvaluator make_prediction_evaluator(const std::string& workload, const ProfileSet& profiles,
                                        const EnergyParameters& energy, const CostParameters& cost,
                                        const PlanQuery& query);

// Sets query.published_counts: for each system, the GPU counts `workload` (a catalog name or alias) was
// published at on the system's GPU family (Workload::published_parallelism), so the search tries them too.
void add_published_counts(PlanQuery& query, const std::string& workload);

}  // namespace ttsim::planning
