// Reports of a planning query (table and JSON "ttsim.results/1" with kind "plan"): the answer, the best feasible
// configuration of each system searched, and what was searched.
#pragma once

#include <string>

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

}  // namespace ttsim::planning
