#include "models/planning/point_prediction.hpp"

#include <algorithm>
#include <cmath>

#include "models/convergence/convergence.hpp"
#include "sim/errors.hpp"

namespace ttsim::planning {

namespace {

// Nodes under one leaf switch per rail: the DGX SuperPOD scalable unit (superpod_fabric.hpp, nodes_per_unit).
constexpr int kNodesPerScalableUnit = 32;

PredictionRequest base_request(const SweepPoint& point) {
    PredictionRequest request;
    request.workload = point.workload;
    request.system = point.base_system;
    request.gpus = point.gpus;
    request.sharp = point.requested_sharp();
    // A sweep or plan asks for SHARP over a range of GPU counts; a job within one NVLink domain has no fabric to
    // run it, so that point runs without, as the default does there, instead of failing (predict() refuses it).
    if (request.sharp.value_or(false) &&
        !sharp_unavailable_reason(resolve_system(point.base_system), point.gpus).empty())
        request.sharp = false;
    request.routing = point.routing;
    request.compute_efficiency_vs_8gpu = false;   // the sweep computes its own reference
    return request;
}

}  // namespace

double nic_line_rate(const SweepPoint& point) {
    // `ndr` is the default option: every preset system's catalog NIC is NDR 400 Gb/s (gpu_catalog.cpp), and a
    // variant's nic_bandwidth stays in force under it, as before any other NIC speed existed.
    if (point.network.nic != NicSpeed::Ndr400) return point.network.nic.bytes_per_second;
    return point.variant_gpu ? point.variant_gpu->nic_bandwidth_per_direction
                             : resolve_system(point.base_system).gpu->nic_bandwidth_per_direction;
}

GpuSpec effective_gpu(const SweepPoint& point) {
    const SystemInfo system = resolve_system(point.base_system);
    GpuSpec gpu = point.variant_gpu ? *point.variant_gpu : *system.gpu;
    gpu.nic_bandwidth_per_direction = nic_line_rate(point);
    const int nodes = (point.gpus + system.gpus_per_node - 1) / system.gpus_per_node;
    if (point.network.oversubscription > 1.0 && nodes > kNodesPerScalableUnit)
        gpu.nic_bandwidth_per_direction /= point.network.oversubscription;
    // predict() simulates collectives on a preset whenever the GPU is a preset system's GPU; a distinct name
    // routes the point to the analytic model (see the header).
    if (point.analytic_comm && !point.variant_gpu) gpu = make_variant(gpu, gpu.name + " (analytic comm)");
    return gpu;
}

std::vector<int> rcp_batches(const std::string& workload) {
    std::vector<int> batches;
    for (const RcpRecord& r : load_rcp_table(find_workload(workload)).kept()) batches.push_back(r.global_batch);
    return batches;
}

PreparedPoint prepare_point(const SweepPoint& point, const GpuSpec& gpu, const ProfileSet& profiles,
                            std::optional<int> global_batch) {
    PredictionRequest request = base_request(point);
    request.global_batch = global_batch;
    PreparedScenario layout_basis = prepare(request);   // catalog GPU: layout, convergence, defaults
    const GpuSpec& catalog_gpu = *layout_basis.gpu;
    PreparedPoint prepared;
    prepared.profile = profiles.find(*layout_basis.workload, catalog_gpu);
    if (!point.analytic_comm) {
        prepared.scenario = std::move(layout_basis);
        return prepared;
    }
    // A system name without a preset selects the analytic comm model for `gpu`.
    prepared.scenario = prepare_with_layout(*layout_basis.workload, gpu, gpu.name, point.gpus, layout_basis.layout);
    prepared.scenario.defaults = layout_basis.defaults;
    auto& warnings = prepared.scenario.warnings;
    warnings.erase(std::remove_if(warnings.begin(), warnings.end(),
                                  [](const std::string& w) { return w.rfind("no preset topology for", 0) == 0; }),
                   warnings.end());
    return prepared;
}

PointOutcome predict_point(const SweepPoint& point, const ProfileSet& profiles) {
    PointOutcome outcome;
    try {
        const GpuSpec gpu = effective_gpu(point);
        outcome.gpu_tdp_watts = gpu.tdp_watts;
        outcome.gpu_idle_watts = gpu.idle_watts;
        outcome.gpus_per_node = resolve_system(point.base_system).gpus_per_node;
        const GpuSpec& catalog = *resolve_system(point.base_system).gpu;
        outcome.catalog_gpu = catalog.name;
        if (point.variant_gpu) outcome.notes.push_back("hypothetical GPU " + gpu.name);
        if (point.analytic_comm) outcome.notes.push_back("what-if sweep: collectives from the analytic NCCL model");
        if (point.network.oversubscription > 1.0 && gpu.nic_bandwidth_per_direction < nic_line_rate(point))
            outcome.notes.push_back("oversubscription applied as NIC bandwidth / oversubscription (worst case)");

        auto run_at = [&](std::optional<int> batch) {
            const PreparedPoint prepared = prepare_point(point, gpu, profiles, batch);
            return evaluate(prepared.scenario, prepared.profile);
        };

        switch (point.batch.rule) {
            case BatchRule::published: outcome.prediction = run_at(std::nullopt); break;
            case BatchRule::fixed_global: outcome.prediction = run_at(point.batch.value); break;
            case BatchRule::per_rank: {
                const PreparedScenario basis = prepare(base_request(point));
                outcome.prediction = run_at(point.batch.value * basis.layout.data_parallel);
                break;
            }
            case BatchRule::rcp_optimal: {
                const PreparedScenario basis = prepare(base_request(point));
                const int dp = basis.layout.data_parallel;
                bool found = false;
                std::string last_error = "no RCP batch is a multiple of the data-parallel size " + std::to_string(dp);
                for (int batch : rcp_batches(point.workload)) {
                    if (batch % dp != 0) continue;
                    try {
                        Prediction p = run_at(batch);
                        if (!found || p.ttt_minutes < outcome.prediction.ttt_minutes) outcome.prediction = std::move(p);
                        found = true;
                    } catch (const InputError& e) {
                        last_error = e.message();
                    }
                }
                if (!found) throw InputError(last_error, {}, "batch");
                outcome.notes.push_back("batch: the fastest of the RCP batches divisible by the data-parallel size");
                break;
            }
        }
        outcome.prediction.system = point.system;
        outcome.ok = true;
    } catch (const InputError& e) {
        outcome.ok = false;
        outcome.error = e.message();
    }
    return outcome;
}

}  // namespace ttsim::planning
