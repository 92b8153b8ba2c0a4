#include "models/planning/sweep_spec.hpp"

#include <algorithm>
#include <set>

#include "models/training/predict.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"

namespace ttsim::planning {

std::string BatchChoice::label() const {
    switch (rule) {
        case BatchRule::published: return "published";
        case BatchRule::fixed_global: return "global=" + std::to_string(value);
        case BatchRule::per_rank: return "per_rank=" + std::to_string(value);
        case BatchRule::rcp_optimal: return "rcp_optimal";
    }
    return "?";
}

GpuSpec make_variant_gpu(const HardwareVariant& variant) {
    const System base = resolve_system(variant.base_system);
    GpuSpec gpu = make_variant(*base.gpu, variant.name);
    if (variant.compute_scale) {
        gpu.bf16_dense_flops *= *variant.compute_scale;
        if (gpu.fp8_dense_flops) *gpu.fp8_dense_flops *= *variant.compute_scale;
    }
    if (variant.hbm_bandwidth) gpu.hbm_bandwidth = *variant.hbm_bandwidth;
    if (variant.nvlink_bandwidth) {
        // NCCL's per-link constant is what the comm model uses when present: scale it with the line rate so the
        // ratio of achieved to line rate stays that of the base GPU.
        const double ratio = *variant.nvlink_bandwidth / gpu.scaleup_bandwidth_per_direction;
        if (gpu.collective_effective_link_bandwidth) *gpu.collective_effective_link_bandwidth *= ratio;
        gpu.scaleup_bandwidth_per_direction = *variant.nvlink_bandwidth;
        gpu.scaleup_bandwidth_bidirectional = 2 * *variant.nvlink_bandwidth;
    }
    if (variant.nic_bandwidth) gpu.nic_bandwidth_per_direction = *variant.nic_bandwidth;
    if (variant.tdp_watts) {
        // Idle power follows the catalog's rule of a fixed fraction of TDP (gpu_catalog.cpp).
        const double idle_fraction = gpu.tdp_watts > 0 ? gpu.idle_watts / gpu.tdp_watts : 0.12;
        gpu.tdp_watts = *variant.tdp_watts;
        gpu.idle_watts = idle_fraction * gpu.tdp_watts;
    }
    validate_gpu_spec(gpu);
    return gpu;
}

std::string SweepPoint::series_key() const {
    return workload + "|" + system + "|" + network.name + "|" + batch.label();
}

std::string SweepPoint::series_label() const {
    std::string label = system;
    if (network.name != "default") label += " " + network.name;
    if (batch.rule != BatchRule::published) label += " " + batch.label();
    return label;
}

std::string sharp_unavailable_everywhere(const std::vector<std::string>& base_systems, int largest_gpus) {
    std::string first;
    for (const std::string& system : base_systems) {
        const std::string reason = sharp_unavailable_reason(resolve_system(system), largest_gpus);
        if (reason.empty()) return {};
        if (first.empty()) first = reason;
    }
    return first;
}

std::string fabric_choice_note(FabricRouting routing, std::optional<bool> sharp) {
    std::string note = routing != FabricOptions{}.routing ? routing_note(routing) : "";
    // "On" runs only where a job spans NVLink domains (SweepPoint::requested_sharp); say so.
    if (sharp) note += std::string(note.empty() ? "" : ", ") + (*sharp ? "SHARP on across NVLink domains" : "SHARP off");
    return note;
}

std::vector<int> doubling_counts(int from, int to) {
    std::vector<int> counts;
    for (long long n = from; n <= to; n *= 2) counts.push_back(static_cast<int>(n));
    return counts;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec, PublishedCountsFn published_counts) {
    if (spec.workloads.empty()) throw InputError("a sweep needs at least one workload", Field::workload);
    if (spec.systems.empty()) throw InputError("a sweep needs at least one system", Field::system);
    if (spec.gpu_counts.empty()) throw InputError("a sweep needs at least one GPU count", Field::gpus);
    const int min_gpus = *std::min_element(spec.gpu_counts.begin(), spec.gpu_counts.end());
    const int max_gpus = *std::max_element(spec.gpu_counts.begin(), spec.gpu_counts.end());

    // Resolve every system label once: a variant (built and validated here) or a catalog system.
    struct ResolvedSystem {
        std::string label, base;
        std::shared_ptr<const GpuSpec> variant_gpu;
        std::string gpu_family;
        int gpus_per_node = 8;
    };
    std::vector<ResolvedSystem> systems;
    for (const std::string& label : spec.systems) {
        ResolvedSystem r;
        r.label = label;
        const auto variant = std::find_if(spec.variants.begin(), spec.variants.end(),
                                          [&](const HardwareVariant& v) { return v.name == label; });
        if (variant != spec.variants.end()) {
            r.base = variant->base_system;
            r.variant_gpu = std::make_shared<const GpuSpec>(make_variant_gpu(*variant));
        } else {
            r.base = label;
        }
        const System info = resolve_system(r.base);
        r.base = info.name;
        if (!r.variant_gpu) r.label = info.name;
        r.gpu_family = info.gpu->name;
        r.gpus_per_node = info.gpus_per_node;
        systems.push_back(std::move(r));
    }

    std::vector<SweepPoint> points;
    for (const std::string& workload_name : spec.workloads) {
        const std::string workload = find_workload(workload_name).name;
        for (const ResolvedSystem& system : systems) {
            std::set<int> counts(spec.gpu_counts.begin(), spec.gpu_counts.end());
            if (spec.add_published_gpu_counts && published_counts && !system.variant_gpu) {
                for (int n : published_counts(workload, system.gpu_family))
                    if (n >= min_gpus && n <= max_gpus && (n <= system.gpus_per_node || n % system.gpus_per_node == 0))
                        counts.insert(n);
            }
            for (const NetworkOption& network : spec.networks)
                for (const BatchChoice& batch : spec.batches)
                    for (int gpus : counts) {
                        SweepPoint p;
                        p.index = static_cast<int>(points.size());
                        p.workload = workload;
                        p.system = system.label;
                        p.base_system = system.base;
                        p.variant_gpu = system.variant_gpu;
                        p.gpus = gpus;
                        p.batch = batch;
                        p.network = network;
                        p.routing = spec.routing;
                        p.sharp = spec.sharp;
                        p.memory_reserve_bytes = spec.memory_reserve_bytes;
                        p.reliability = spec.reliability;
                        p.topology_file = spec.topology_file;
                        p.allocation = spec.allocation;
                        p.layout = spec.layout;
                        points.push_back(std::move(p));
                    }
        }
    }
    return points;
}

const Workload& trained_workload(const std::shared_ptr<const Workload>& custom, const std::string& name) {
    return custom ? *custom : find_workload(name);
}

}  // namespace ttsim::planning
