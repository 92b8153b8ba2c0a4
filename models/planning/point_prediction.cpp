#include "models/planning/point_prediction.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/convergence/convergence.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/operator_step.hpp"
#include "models/workloads/custom_workload.hpp"
#include "sim/errors.hpp"
#include "sim/units.hpp"

namespace ttsim::planning {

std::vector<std::string> variant_unit_notes(const GpuSpec& base, const GpuSpec& variant) {
    std::vector<std::string> notes;
    // A figure 8x off one of the base's is most likely bits where bytes were meant (or the reverse); NVLink is per
    // direction, so the base's bidirectional figure (900 GB/s on H100) is checked too.
    auto check = [&](const char* key, double value, std::vector<std::pair<double, const char*>> base_figures) {
        auto near = [](double a, double b) { return std::abs(a / b - 1) < 0.005; };
        for (const auto& [figure, what] : base_figures) {
            if (near(value, figure) || !(value > 0 && figure > 0)) continue;
            if (near(value * 8, figure) || near(value, figure * 8))
                notes.push_back(fmt::format("{} {} GB/s is 8x off {}'s {} of {} GB/s: check b (bits) against B (bytes)",
                                            key, units::format_number(value / 1e9), base.name, what,
                                            units::format_number(figure / 1e9)));
        }
    };
    if (variant.scaleup_bandwidth_per_direction != base.scaleup_bandwidth_per_direction)
        check("nvlink_bandwidth", variant.scaleup_bandwidth_per_direction,
              {{base.scaleup_bandwidth_per_direction, "NVLink per direction"},
               {base.scaleup_bandwidth_bidirectional, "NVLink both directions"}});
    if (variant.nic_bandwidth_per_direction != base.nic_bandwidth_per_direction)
        check("nic_bandwidth", variant.nic_bandwidth_per_direction, {{base.nic_bandwidth_per_direction, "NIC"}});
    if (variant.hbm_bandwidth != base.hbm_bandwidth) check("hbm_bandwidth", variant.hbm_bandwidth, {{base.hbm_bandwidth, "HBM"}});
    return notes;
}

System point_system(const SweepPoint& point) {
    System system = with_allocation_where_applicable(resolve_system(point.base_system), point.allocation);
    // On a topology file the rented unit is the file's server (with_fabric), not the preset's DGX node or rack.
    if (point.topology_file) return with_fabric(std::move(system), FabricChoice{.topology_file = point.topology_file});
    // The point's fabric shape (planes multiply the switches its energy is charged for), where it runs on one.
    if (system.spans_domains(point.gpus)) system.fabric = point.network.shape.applied_to(system.fabric);
    return system;
}

FabricChoice network_choice(const NetworkOption& network, FabricRouting routing, bool one_domain) {
    // Within one NVLink domain no NIC or switch is used: such a point runs on its domain as it is (predict() refuses
    // the options there), so a series over GPU counts stays whole.
    FabricChoice choice;
    if (one_domain) return choice;
    if (network.nic != NicSpeed::Ndr400) choice.nic = network.nic;   // `ndr` keeps the system's (or variant's) own
    if (network.oversubscription != 1.0) choice.oversubscription = network.oversubscription;
    if (routing != FabricOptions{}.routing) choice.routing = routing;
    choice.shape = network.shape;
    return choice;
}

PredictionRequest point_request(const SweepPoint& point, std::optional<int> global_batch,
                                std::optional<int> samples_per_rank) {
    PredictionRequest request;
    request.workload = point.workload;
    request.system = point.base_system;
    request.gpus = point.gpus;
    request.global_batch = global_batch;
    request.samples_per_rank = samples_per_rank;
    request.sharp = point.requested_sharp();
    // A sweep or plan asks for SHARP over a range of GPU counts; a job within one NVLink domain has no fabric to
    // run it, so that point runs without, as the default does there, instead of failing (predict() refuses it).
    const System system = resolve_system(point.base_system);
    const bool one_domain = !point.topology_file && !system.spans_domains(point.gpus);
    if (request.sharp.value_or(false) && one_domain) request.sharp = false;
    request.fabric = network_choice(point.network, point.routing, one_domain);
    request.fabric.topology_file = point.topology_file;
    request.memory_reserve_bytes = point.memory_reserve_bytes;
    request.reliability = point.reliability;
    if (point.variant_gpu) {
        request.gpu_override = point.variant_gpu;
        request.gpu_label = point.system;
    }
    request.compute_efficiency_vs_8gpu = false;   // the sweep computes its own reference
    request.layout = point.layout;
    request.custom_workload = point.custom_workload;
    return request;
}

std::vector<int> rcp_batches(const std::string& workload) {
    std::vector<int> batches;
    for (const RcpRecord& r : load_rcp_table(find_workload(workload)).kept()) batches.push_back(r.global_batch);
    return batches;
}

bool point_searches_layout(const SweepPoint& point, const ProfileSet& profiles) {
    return uses_layout_search(point_request(point, std::nullopt), profiles);
}

PreparedPoint prepare_point(const SweepPoint& point, const ProfileSet& profiles, std::optional<int> global_batch,
                            std::optional<int> samples_per_rank) {
    PreparedPoint prepared;
    const PredictionRequest request = point_request(point, global_batch, samples_per_rank);
    if (uses_layout_search(request, profiles)) {
        // The scenario and profile the search priced (the trace draws the layout it chose).
        ExplainedPrediction searched = predict_explained(request, profiles);
        prepared.scenario = std::move(searched.scenario);
        prepared.profile = std::move(searched.profile);
        return prepared;
    }
    prepared.scenario = prepare_as_answer(request);
    prepared.profile = workload_profile(profiles, *prepared.scenario.workload, *prepared.scenario.system.catalog_gpu);
    return prepared;
}

namespace {

// A what-if of FLOP/s on the operator model moves only the compute-bound kernels. Where most of the step is
// memory-bound at the fitted memory efficiency (its 0.30 floor, below STREAM's 0.79-0.93 of the vendor bandwidth,
// models/data/hardware/params.md §1), the answer hangs on that fitted split, which no measurement confirms: said.
// `prepared`: the scenario and profile that priced `prediction` (the searched layout's where the point searches).
std::string compute_what_if_note(const SweepPoint& point, const Prediction& prediction, const PreparedPoint& prepared) {
    if (prediction.compute_model != "operator") return "";
    if (!prepared.scenario.operator_table || !prepared.profile.operator_efficiency) return "";
    const layers::Efficiency& e = *prepared.profile.operator_efficiency;
    const double share = memory_bound_share(*prepared.scenario.operator_table, e, prepared.profile.operator_speed);
    if (share < 0.5) return "";
    return fmt::format("compute what-if on {}: {:.0f} % of its kernel time is memory-bound at the fitted memory "
                       "efficiency {:.2f} (STREAM reaches 0.79-0.93), so FLOP/s move it little and HBM bandwidth "
                       "much; that split is fitted, not measured (README, known limitation of what-ifs)",
                       point.workload, 100 * share, e.memory);
}

}  // namespace

PointOutcome predict_point(const SweepPoint& point, const ProfileSet& profiles, LayerGraphCache* graphs) {
    PointOutcome outcome;
    try {
        const System system = point_system(point);
        const GpuSpec& gpu = point.variant_gpu ? *point.variant_gpu : *system.gpu;
        outcome.gpu_tdp_watts = gpu.tdp_watts;
        outcome.gpu_idle_watts = gpu.idle_watts;
        outcome.gpus_per_node = system.gpus_per_node;
        outcome.rented_gpus = system.allocation_units(point.gpus) * system.allocation_unit_gpus;
        outcome.allocation = system.describe_allocation(point.gpus);
        outcome.catalog_gpu = system.catalog_gpu->name;
        if (point.variant_gpu) {
            outcome.notes.push_back("hypothetical GPU " + gpu.name);
            for (std::string& note : variant_unit_notes(*system.catalog_gpu, gpu)) outcome.notes.push_back(std::move(note));
        }

        // As predict(): without `layout:` the operator model searches (the fastest that fits, the published one
        // beside it) and the lumped model keeps the published layout.
        // The prediction with the scenario and profile that priced it (the compute what-if note reads them).
        const bool searched = point_searches_layout(point, profiles);
        PreparedPoint priced;
        auto run_at = [&](std::optional<int> batch, std::optional<int> samples_per_rank = std::nullopt) {
            if (searched) {
                PredictionRequest request = point_request(point, batch, samples_per_rank);
                request.graphs = graphs;
                ExplainedPrediction explained = predict_explained(request, profiles);
                priced = PreparedPoint{std::move(explained.scenario), std::move(explained.profile)};
                return std::move(explained.prediction);
            }
            priced = prepare_point(point, profiles, batch, samples_per_rank);
            return evaluate(priced.scenario, priced.profile);
        };

        switch (point.batch.rule) {
            case BatchRule::published: outcome.prediction = run_at(std::nullopt); break;
            case BatchRule::fixed_global: outcome.prediction = run_at(point.batch.value); break;
            // Per rank of the layout that runs: the published one's DP, or each searched layout's own.
            case BatchRule::per_rank: outcome.prediction = run_at(std::nullopt, point.batch.value); break;
            case BatchRule::rcp_optimal: {
                // A searched point tries every RCP batch (the search keeps the layouts whose DP divides it); the
                // published layout, the batches its DP divides.
                const int dp = searched ? 1 : prepare(point_request(point, std::nullopt)).layout.data_parallel;
                bool found = false;
                PreparedPoint best;
                std::string last_error = searched ? "the RCP table offers no batch"
                                                  : "no RCP batch is a multiple of the data-parallel size " + std::to_string(dp);
                for (int batch : rcp_batches(point.workload)) {
                    if (batch % dp != 0) continue;
                    try {
                        Prediction p = run_at(batch);
                        if (!found || p.ttt_minutes < outcome.prediction.ttt_minutes) {
                            outcome.prediction = std::move(p);
                            best = std::move(priced);
                        }
                        found = true;
                    } catch (const InputError& e) {
                        last_error = e.message();
                    }
                }
                if (!found) throw InputError(last_error);
                priced = std::move(best);
                outcome.notes.push_back(
                    std::string(searched ? "batch: the fastest of the RCP batches, each with its fastest layout"
                                         : "batch: the fastest of the RCP batches divisible by the data-parallel size") +
                    ", among those the RCP pruning keeps (the ones MLPerf's rcp_checker interpolates between; a pruned "
                    "batch has no convergence point of its own here)");
                break;
            }
        }
        outcome.prediction.system = point.system;
        if (point.variant_gpu && point.variant_gpu->bf16_dense_flops != system.catalog_gpu->bf16_dense_flops)
            if (std::string note = compute_what_if_note(point, outcome.prediction, priced); !note.empty())
                outcome.notes.push_back(std::move(note));
        if (std::string w = partial_allocation_warning(system, point.gpus); !w.empty())
            outcome.prediction.warnings.push_back(std::move(w));
        outcome.ok = true;
    } catch (const InputError& e) {
        outcome.ok = false;
        outcome.error = e.message();
    }
    return outcome;
}

}  // namespace ttsim::planning
