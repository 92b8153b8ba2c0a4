// Reading planning scenarios (kinds `scaling-study`, `sweep`, `plan`) from YAML, strictly: unknown keys, wrong
// types and impossible values fail with file:line:column and key path (sim/config.hpp). The keys are documented
// in docs/results-schema.md ("Scenario keys") and shown by the shipped scenarios/*.yaml.
#pragma once

#include <optional>
#include <string>

#include "models/compute/profile_files.hpp"
#include "models/planning/cost_config.hpp"
#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_query.hpp"
#include "models/planning/sweep_runner.hpp"
#include "models/planning/sweep_spec.hpp"
#include "models/planning/variant_config.hpp"
#include "sim/config.hpp"

namespace ttsim::planning {

// Which point gets a Chrome/Perfetto trace of one iteration.
struct TraceChoice {
    std::optional<std::string> workload, system;   // default: the first series
    std::optional<int> gpus;                        // default: the series' largest count <= 64, else its smallest
};

struct SweepScenario {
    std::string kind;                  // "scaling-study" or "sweep"
    std::string name;
    SweepSpec spec;
    SweepOptions options;              // threads and progress are set by the caller
    TraceChoice trace;
    bool plots = true;                 // with --out: gnuplot PNG + SVG per workload
    std::string format = "table";
    ComputeModel model = kDefaultComputeModel;   // `model:`, the shipped profile file the points are priced with
};

// `root` is the whole document; its `scenario:` is "scaling-study" or "sweep" (defaults differ: a scaling study
// adds the published v4.1 GPU counts unless told otherwise).
SweepScenario read_sweep_scenario(const ConfigNode& root);

struct PlanScenario {
    std::string name;
    std::string workload;
    PlanQuery query;
    EnergyParameters energy;
    CostParameters cost;
    std::string format = "table";
    ComputeModel model = kDefaultComputeModel;   // `model:`
};

PlanScenario read_plan_scenario(const ConfigNode& root);

// `model: lumped|operator` of a sweep or plan (default kDefaultComputeModel).
ComputeModel read_compute_model(const ConfigNode& root);
// `layout:` of a sweep or plan: a string as `predict --layout` takes (fastest, published, tp=4,cp=2,...) or a
// mapping of its pins ({tp: 4, cp: 2, micro: 1, accumulation: 2, distributed_optimizer: on}). A searched layout
// (fastest, pins) is priced by the operator model, so it needs `model: operator` (refused naming `layout`).
LayoutRequest read_layout(const ConfigNode& node, ComputeModel model);
// `gpus:` of a sweep (or a user-model scenario): a list, one count, or {from, to} doubling; ascending, each once,
// every count checked against the resource guard at its key.
std::vector<int> read_gpu_counts(const ConfigNode& node);
// One network option (a sweep's `network:` item, a plan's or user model's `network:`): {name, nic, sharp,
// oversubscription} and the fabric shape's keys (kFabricShapeKeys), each optional; unnamed, it is named by what it
// sets ("xdr-sharp-2planes").
NetworkOption read_network(const ConfigNode& node);

}  // namespace ttsim::planning
