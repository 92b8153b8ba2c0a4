// One sweep point -> one time-to-train prediction, with the what-if options predict() does not take itself.
//
// predict.hpp takes a system name, a GPU count, a global batch and SHARP on/off, and simulates collectives on the
// system's preset topology (catalog link rates, default fabric). For hardware and network what-ifs this file
// builds a modified GpuSpec and runs predict()'s own pipeline (prepare -> prepare_with_layout -> evaluate) with
// collective durations from the analytic NCCL model (comm_model.hpp), which reads the GpuSpec's NVLink and NIC
// figures; every point of such a sweep, the baseline included, uses that model (SweepPoint::analytic_comm):
//  - the layout (TP/CP/DP, micro batch, accumulation) comes from prepare() on the catalog system, so a
//    hypothetical GPU is laid out exactly like the real one it is derived from;
//  - the compute profile is the catalog GPU's calibrated one (fractions of peak), so faster FLOP/s or HBM act
//    through the physics in compute_profile.hpp;
//  - NIC (`nic:` hdr, xdr or a bandwidth such as 100Gb/s; NicSpeed, presets.hpp): the GPU's NIC line rate per
//    direction becomes that rate (xdr: 800 Gb/s = 100 GB/s); ndr, the default, keeps the system's own NIC;
//  - oversubscription r > 1: when the job spans more than one scalable unit (32 nodes: one leaf switch per rail,
//    superpod_fabric.hpp) inter-node traffic crosses leaf uplinks with 1/r of the downlink capacity; the
//    analytic model has no fabric, so we apply the worst case - every NIC's bandwidth divided by r. Within one
//    unit, rail traffic never leaves its leaf and oversubscription has no effect.
// What predict.hpp needs to make this exact (FabricOptions and a GpuSpec override in PredictionRequest, passed to
// build_preset) is listed in the planning report.
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
    std::string catalog_gpu;             // the catalog GPU the point derives from (published comparisons)
    std::vector<std::string> notes;      // what-if adjustments made, for the report
};

// The line rate per direction (bytes/s) of each of the point's NICs, before oversubscription: the network
// option's NIC, or under the default (ndr) the variant's or catalog GPU's own.
double nic_line_rate(const SweepPoint& point);

// The GPU a point models: catalog GPU of base_system or the variant, with the network option applied.
GpuSpec effective_gpu(const SweepPoint& point);

// The prepared scenario and profile of a point at one global batch (nullopt = the layout's default): what
// evaluate() consumes, exposed for the trace writer. `gpu` must outlive the returned scenario.
struct PreparedPoint {
    PreparedScenario scenario;
    ComputeProfile profile;
};
PreparedPoint prepare_point(const SweepPoint& point, const GpuSpec& gpu, const ProfileSet& profiles,
                            std::optional<int> global_batch);

// Runs the point (all batch rules). Never throws InputError: it becomes !ok with the message.
PointOutcome predict_point(const SweepPoint& point, const ProfileSet& profiles);

// Global batches the RCP table offers for `workload` (ascending), the candidates of BatchRule::rcp_optimal.
std::vector<int> rcp_batches(const std::string& workload);

}  // namespace ttsim::planning
