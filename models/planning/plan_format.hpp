// Reports of a planning query (table and JSON "ttsim.results/2" with kind "plan"): the answer, the best feasible
// configuration of each system searched, and what was searched.
#pragma once

#include <string>
#include <vector>

#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_query.hpp"

namespace ttsim::planning {

struct PlanReportContext {
    std::string workload;
    const PlanQuery* query = nullptr;
    const CostParameters* cost = nullptr;
    const EnergyParameters* energy = nullptr;
};

std::string format_plan_table(const PlanReportContext& context, const PlanAnswer& answer);
std::string format_plan_json(const std::string& name, const PlanReportContext& context, const PlanAnswer& answer);
std::string format_plan_csv(const PlanReportContext& context, const PlanAnswer& answer);

// A duration for people: "5 s", "1.5 min", "2 h" (the unit that keeps the number between 1 and 120).
std::string format_duration(double minutes);
// "time-to-train <= 5 s and cost <= 5000 USD".
std::string describe_constraints(const PlanConstraints& constraints, const CostParameters& cost);

// When nothing is feasible: per constraint, the evaluated candidate that comes closest (deadline: the fastest;
// GPU-hour budget: the fewest GPU-hours; money budget: the cheapest), so the user sees how far off they are.
struct ClosestCandidate {
    std::string criterion;               // "fastest", "fewest GPU-hours", "cheapest"
    EvaluatedCandidate candidate;
    double ratio = 0;                    // its value / the limit (> 1: over the limit)
};
std::vector<ClosestCandidate> closest_candidates(const PlanQuery& query, const PlanAnswer& answer);

// The candidate is at the largest GPU count searched, so the search range may be what limits it.
bool at_search_limit(const PlanQuery& query, const EvaluatedCandidate& candidate);

}  // namespace ttsim::planning
