// One sweep point -> one time-to-train prediction (predict.hpp), with the point's what-if options in the request:
//  - a hypothetical GPU (gpu_variants) becomes the request's GPU override: the layout, memory limits and compute
//    profile are those of the catalog GPU it derives from (a what-if GPU is laid out exactly like the real one),
//    and its own FLOP/s, HBM, NVLink and NIC rates act through compute_profile.hpp and the simulated fabric;
//  - a network option's NIC (hdr, xdr or a bandwidth; `ndr`, the default, keeps the system's or variant's own
//    NIC), oversubscription, fabric shape (planes, radix, spine tier) and SHARP go into the request's fabric, so every point's collectives are simulated
//    on the system's topology with that fabric, as `ttsim predict` would;
//  - the sweep's routing and topology file likewise.
#pragma once

#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"
#include "models/planning/sweep_spec.hpp"
#include "models/training/predict.hpp"

namespace ttsim::planning {

// The outcome of one point: a prediction, or why the point cannot run (bad batch for the layout, beyond the
// convergence data, ...). Infeasible points are reported, not fatal: a sweep over a wide range is expected to
// hit some.
struct PointOutcome {
    bool ok = false;
    std::string error;                   // why not, when !ok
    Prediction prediction;
    double gpu_tdp_watts = 0, gpu_idle_watts = 0;   // of the GPU actually modelled (variant or catalog)
    int gpus_per_node = 8;
    int rented_gpus = 0;                 // GPUs of the whole allocation units the point rents (>= its GPUs)
    std::string allocation;              // what it rents: "2 racks (144 GPUs)"
    std::string catalog_gpu;             // the catalog GPU the point derives from (published comparisons)
    std::vector<std::string> notes;      // what-if adjustments made, for the report
};

// The point's catalog system rented by the point's allocation unit (InputError keyed "allocation" where the
// system has no such unit).
System point_system(const SweepPoint& point);
// The fabric a network option and routing ask for: nothing for a job within one NVLink domain (`one_domain`: it
// uses no NIC and no switch, so the option leaves it as it is, where predict() would refuse it), else the option's
// NIC (`ndr`, the default, keeps the system's own), oversubscription, shape and the routing, each where it is not
// the default. Its SHARP is the caller's (SweepPoint::requested_sharp).
FabricChoice network_choice(const NetworkOption& network, FabricRouting routing, bool one_domain);
// Notes on a what-if GPU's bandwidths that are 8x off the base GPU's (bits written for bytes, or the reverse).
std::vector<std::string> variant_unit_notes(const GpuSpec& base, const GpuSpec& variant);

// The prediction request of a point at one global batch (nullopt = the layout's default), or at a batch per
// data-parallel rank (the `per_rank` rule: each layout priced at that many samples per rank times its DP).
PredictionRequest point_request(const SweepPoint& point, std::optional<int> global_batch,
                                std::optional<int> samples_per_rank = std::nullopt);

// The prepared scenario and profile of a point at one global batch (nullopt = the layout's default): what
// evaluate() consumes, exposed for the trace writer.
struct PreparedPoint {
    PreparedScenario scenario;
    ComputeProfile profile;
};
PreparedPoint prepare_point(const SweepPoint& point, const ProfileSet& profiles, std::optional<int> global_batch,
                            std::optional<int> samples_per_rank = std::nullopt);

// Whether the point's layout is searched, as predict() decides (layout_search.hpp uses_layout_search): asked for
// (`layout: fastest` or pins), or left to the default, which searches where the profile is an operator profile and
// the workload has a layer graph; `layout: published` and the lumped model keep the published layout.
bool point_searches_layout(const SweepPoint& point, const ProfileSet& profiles);

// Runs the point (all batch rules). Never throws InputError: it becomes !ok with the message. `graphs`: layer graphs
// shared with the points run before it on this worker (PredictionRequest::graphs); null: its own.
PointOutcome predict_point(const SweepPoint& point, const ProfileSet& profiles, LayerGraphCache* graphs = nullptr);

// Global batches the RCP table offers for `workload` (ascending), the candidates of BatchRule::rcp_optimal.
std::vector<int> rcp_batches(const std::string& workload);

}  // namespace ttsim::planning
