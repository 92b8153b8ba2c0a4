#include "models/hardware/system.hpp"

#include <algorithm>
#include <cctype>

#include "sim/errors.hpp"
#include "sim/text.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "topologies/yaml_topology.hpp"

namespace ttsim {
namespace {

// The preset systems: which catalog GPU each node type holds, and what a user rents. The node shapes (GPUs per
// node and per NVLink domain) are the topology's facts (topologies/presets.cpp).
struct PresetSystem {
    const char* name;
    const char* gpu;
    bool rack_unit;   // rented by the NVLink domain (a GB200 NVL72 rack), else by the node
};
// DGX H100/H200/B200 (MLP41 systems) and GB200 NVL72 (SPOD_GB200: 18 compute trays of 4 GPUs, one NVLink domain,
// sold and deployed as a rack).
// gb200-nvl72-xdr and h100-100k: the same GPUs on larger fabrics (topologies/presets.cpp says whose). A GPU
// name resolves to the first preset of its GPU.
constexpr PresetSystem kPresetSystems[] = {{"dgx-h100", "H100-SXM", false},
                                           {"dgx-h200", "H200-SXM", false},
                                           {"dgx-b200", "B200", false},
                                           {"gb200-nvl72", "GB200", true},
                                           {"gb200-nvl72-xdr", "GB200", true},
                                           {"h100-100k", "H100-SXM", false}};

const PresetInfo& preset_shape(std::string_view name) {
    for (const PresetInfo& p : preset_systems())
        if (p.name == name) return p;
    throw InternalError("preset system without a node shape: " + std::string(name));
}

System preset_system(const PresetSystem& entry) {
    const PresetInfo& shape = preset_shape(entry.name);
    const GpuSpec& gpu = find_gpu(entry.gpu);
    System s;
    s.name = entry.name;
    s.preset = entry.name;
    s.gpu = std::shared_ptr<const GpuSpec>(std::shared_ptr<const GpuSpec>{}, &gpu);   // catalog: static lifetime
    s.catalog_gpu = &gpu;
    s.gpus_per_node = shape.gpus_per_node;
    s.gpus_per_nvlink_domain = shape.gpus_per_nvlink_domain;
    s.rack_scale = entry.rack_unit;
    s.allocation = entry.rack_unit ? AllocationUnit::rack : AllocationUnit::node;
    s.allocation_unit_gpus = entry.rack_unit ? shape.gpus_per_nvlink_domain : shape.gpus_per_node;
    s.fabric = shape.fabric;
    // The DGX SuperPOD presets take the GPU's own NIC (its catalog figure); a preset of its own fabric, its NIC.
    if (shape.fabric_source.empty()) s.fabric.nic = NicSpeed{gpu.nic_bandwidth_per_direction};
    return s;
}

// A GPU without a preset system: nodes of up to 8 of it (its catalog scale-up domain when smaller), one NVLink
// (or Infinity Fabric) domain per node of its catalog size, one NIC per GPU at its catalog rate. MI300X's
// Infinity Fabric is point to point; the generic node models it as one switched domain of the GPU's total link
// bandwidth, which is what a collective spread over all its links sees.
System generic_system(const GpuSpec& gpu) {
    System s;
    s.name = gpu.name;
    s.gpu = std::shared_ptr<const GpuSpec>(std::shared_ptr<const GpuSpec>{}, &gpu);
    s.catalog_gpu = &gpu;
    s.gpus_per_node = std::min(8, gpu.gpus_per_scaleup_domain);
    s.gpus_per_nvlink_domain = std::max(s.gpus_per_node, gpu.gpus_per_scaleup_domain);
    s.allocation_unit_gpus = s.gpus_per_node;
    s.fabric.nic = NicSpeed{gpu.nic_bandwidth_per_direction * std::max(1, gpu.nics_per_gpu)};
    return s;
}

// The topology file's GPU count and NVLink domain size (GPUs per domain; 1 where GPUs have no NVLink).
struct FileShape {
    int gpus = 0;
    int largest_domain = 1;
    int largest_node = 1;   // GPUs of its largest node: the server a user of that cluster rents
    double nvlink_bytes_per_s = 0;   // the slowest GPU's NVLink to its switch, per direction; 0 without NVLink
    bool infiniband = false;         // every GPU's NIC attaches to the switches over InfiniBand (SHARP can run)
};
FileShape file_shape(const std::string& path) {
    const Topology topology = load_topology_file(path);
    FileShape shape;
    shape.gpus = topology.gpu_count();
    std::vector<int> per_domain(topology.gpus().size() + 1, 0);
    std::vector<int> per_node(topology.gpus().size() + 1, 0);
    for (const GpuInfo& g : topology.gpus()) {
        if (g.nvlink_domain_index >= 0)
            shape.largest_domain = std::max(shape.largest_domain, ++per_domain[g.nvlink_domain_index]);
        if (g.node >= 0 && static_cast<std::size_t>(g.node) < per_node.size())
            shape.largest_node = std::max(shape.largest_node, ++per_node[static_cast<std::size_t>(g.node)]);
        if (g.nvlink_up != kNoLink) {
            const double bandwidth = topology.link(g.nvlink_up).bandwidth_bytes_per_s;
            shape.nvlink_bytes_per_s = shape.nvlink_bytes_per_s > 0 ? std::min(shape.nvlink_bytes_per_s, bandwidth) : bandwidth;
        }
    }
    // As the collectives decide where SHARP runs (GroupLayout::infiniband_fabric), for every GPU of the file.
    shape.infiniband = topology.fabric().switch_count() > 0;
    for (int r = 0; shape.infiniband && r < topology.gpu_count(); ++r) shape.infiniband = topology.attached_over_infiniband(r);
    return shape;
}

std::string plural(int count, const char* noun) {
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

const char* to_string(AllocationUnit unit) {
    switch (unit) {
        case AllocationUnit::node: return "node";
        case AllocationUnit::rack: return "rack";
        case AllocationUnit::tray: return "tray";
    }
    return "?";
}

AllocationUnit parse_allocation(const std::string& text) {
    if (text == "rack") return AllocationUnit::rack;
    if (text == "tray") return AllocationUnit::tray;
    throw InputError("unknown allocation unit '" + text + "'; valid: rack, tray", Field::allocation);
}

std::string System::tensor_parallel_domain_problem(int tp) const {
    const std::string domain = std::to_string(gpus_per_nvlink_domain) + " GPUs (" + name + ")";
    if (tp > gpus_per_nvlink_domain) return "tensor parallelism " + std::to_string(tp) + " exceeds the NVLink domain of " + domain;
    return "tensor parallelism " + std::to_string(tp) + " does not divide the NVLink domain of " + domain +
           ": some of its groups would span two domains over the network";
}

std::string System::model_parallel_domain_problem(int tp, int cp, int gpus) const {
    if (!tensor_parallel_fits_domain(tp, gpus)) return tensor_parallel_domain_problem(tp);
    return "TP x CP = " + std::to_string(tp) + " x " + std::to_string(cp) + " = " + std::to_string(tp * cp) +
           " GPUs neither divides nor is a multiple of the NVLink domain of " + std::to_string(gpus_per_nvlink_domain) +
           " GPUs (" + name + "): some context-parallel groups would span domains and others not";
}

int System::allocation_units(int gpus) const {
    TTSIM_ASSERT(allocation_unit_gpus > 0, "allocation unit without GPUs");
    return std::max(1, (gpus + allocation_unit_gpus - 1) / allocation_unit_gpus);
}

std::string System::describe_allocation(int gpus) const {
    const int units = allocation_units(gpus);
    return plural(units, to_string(allocation)) + " (" + plural(units * allocation_unit_gpus, "GPU") + ")";
}

System with_allocation(System system, std::optional<AllocationUnit> choice) {
    if (!choice || *choice == system.allocation) return system;
    const AllocationUnit unit = *choice;
    if (!system.rack_scale)
        throw InputError(system.name + " is rented by the node (" + std::to_string(system.allocation_unit_gpus) +
                             " GPUs) only; '" + to_string(unit) +
                             "' applies to rack-scale systems (gb200-nvl72): drop it or search such a system",
                         Field::allocation);
    // A rack-scale system's rack is its NVLink domain, its tray a node of its topology (SPOD_GB200: 18 x 4 GPUs).
    system.allocation = unit;
    system.allocation_unit_gpus = unit == AllocationUnit::rack ? system.gpus_per_nvlink_domain : system.gpus_per_node;
    return system;
}

System with_allocation_where_applicable(System system, std::optional<AllocationUnit> unit) {
    if (!unit || !system.rack_scale) return system;
    return with_allocation(std::move(system), unit);
}

void check_allocation_applies_somewhere(const std::vector<std::string>& systems, std::optional<AllocationUnit> unit) {
    if (!unit || systems.empty()) return;
    for (const std::string& name : systems)
        if (resolve_system(name).rack_scale) return;
    (void)with_allocation(resolve_system(systems.front()), unit);   // throws the first system's reason
}

std::string partial_allocation_warning(const System& system, int gpus) {
    if (gpus % system.allocation_unit_gpus == 0) return {};
    return plural(gpus, "GPU") + (gpus == 1 ? " is" : " are") + " not a whole number of " + system.name + " " + to_string(system.allocation) +
           "s (" + std::to_string(system.allocation_unit_gpus) + " GPUs each): it rents " +
           system.describe_allocation(gpus) + ", billed whole";
}

PresetInfo System::node_shape() const {
    return PresetInfo{!preset.empty() ? preset : catalog_gpu->name + " node", gpus_per_node, gpus_per_nvlink_domain,
                      gpu->scaleup_bandwidth_per_direction};
}

std::string System::fabric_description() const {
    if (topology_file) return "topology " + *topology_file;
    std::string text = nic_description(fabric) + " NICs";
    if (fabric.oversubscription != 1.0)
        text += ", " + units::format_number(fabric.oversubscription) + ":1 oversubscribed";
    if (fabric.routing != FabricOptions{}.routing) text += ", " + routing_note(fabric.routing);
    return text + fabric_shape_note(fabric);
}

std::vector<std::string> system_names() {
    std::vector<std::string> names;
    for (const PresetSystem& s : kPresetSystems) names.push_back(s.name);
    for (const std::string& g : gpu_names()) names.push_back(g);
    return names;
}

System resolve_system(std::string_view name) {
    const std::string key = name_key(name);
    for (const PresetSystem& s : kPresetSystems)
        if (key == name_key(s.name)) return preset_system(s);
    const GpuSpec* gpu = nullptr;
    try {
        gpu = &find_gpu(name);
    } catch (const InputError&) {
        std::string list;
        for (const std::string& n : system_names()) list += (list.empty() ? "" : ", ") + n;
        throw InputError("unknown system '" + std::string(name) + "'; valid: " + list, Field::system);
    }
    for (const PresetSystem& s : kPresetSystems)
        if (gpu->name == s.gpu) return preset_system(s);
    return generic_system(*gpu);
}

System with_fabric(System system, const FabricChoice& choice) {
    if (choice.topology_file) {
        // A YAML topology describes its own NICs, switches and routing.
        if (choice.nic) throw InputError("a topology file describes its own NICs; drop one of the two", Field::nic);
        if (choice.oversubscription)
            throw InputError("a topology file describes its own switches; drop one of the two", Field::oversubscription);
        if (choice.routing)
            throw InputError("a topology file routes by its own rules (static ECMP); drop one of the two",
                             Field::routing);
        if (choice.shape.any())
            throw InputError("a topology file describes its own switches; drop one of the two", choice.shape.first_field());
        system.topology_file = choice.topology_file;
        const FileShape shape = file_shape(*choice.topology_file);
        system.topology_file_gpus = shape.gpus;
        system.topology_file_nvlink_bytes_per_s = shape.nvlink_bytes_per_s;
        system.topology_file_infiniband = shape.infiniband;
        system.gpus_per_nvlink_domain = shape.largest_domain;
        system.gpus_per_node = std::min(system.gpus_per_node, shape.largest_domain);
        // What is rented is the file's servers, not the preset's DGX nodes or racks: cost and energy per its node.
        system.allocation = AllocationUnit::node;
        system.allocation_unit_gpus = shape.largest_node;
        system.rack_scale = false;
        return system;
    }
    system.fabric = with_choice(system.fabric, choice);
    return system;
}

FabricOptions with_choice(FabricOptions options, const FabricChoice& choice) {
    if (choice.nic) options.nic = *choice.nic;
    if (choice.oversubscription) options.oversubscription = *choice.oversubscription;
    if (choice.routing) options.routing = *choice.routing;
    return choice.shape.applied_to(options);
}

System with_gpu(System system, std::shared_ptr<const GpuSpec> gpu, std::string label) {
    TTSIM_ASSERT(gpu != nullptr, "with_gpu: no GPU");
    system.fabric.nic = NicSpeed{gpu->nic_bandwidth_per_direction * std::max(1, gpu->nics_per_gpu)};
    system.gpu = std::move(gpu);
    system.name = std::move(label);
    return system;
}

void check_job_size(const System& system, int gpus) {
    if (gpus < 1) throw InputError("GPU count must be at least 1 (got " + std::to_string(gpus) + ")", Field::gpus);
    if (system.topology_file) {
        if (gpus != system.topology_file_gpus)
            throw InputError(std::to_string(gpus) + " GPUs asked for, but topology " + *system.topology_file +
                                 " has " + std::to_string(system.topology_file_gpus),
                             Field::gpus);
        return;
    }
    if (const int most = max_cluster_gpus(system.node_shape(), system.fabric); gpus > most)
        throw InputError(system.name + " holds at most " + std::to_string(most) + " GPUs (" + fabric_tiers_phrase(system.fabric) + " of " +
                             std::to_string(system.fabric.switch_ports) + "-port switches; got " +
                             std::to_string(gpus) + ")",
                         Field::gpus);
    if (gpus > system.gpus_per_node && gpus % system.gpus_per_node != 0)
        throw InputError(std::to_string(gpus) + " GPUs is not a whole number of " + system.name +
                             (system.rack_scale ? " compute trays (" : " nodes (") +   // a rack's node is a tray
                             std::to_string(system.gpus_per_node) + " GPUs each)",
                         Field::gpus);
    // Named by the system (a generic node's shape is named "<GPU> node").
    check_fabric_applies(system.name, system.gpus_per_nvlink_domain, gpus, system.fabric, system.fabric);
    validate_cluster(system.node_shape(), gpus, system.fabric);   // its errors name the field at fault
}

Topology build_topology(const System& system, int gpus) {
    check_job_size(system, gpus);
    if (system.topology_file) {
        Topology topology = load_topology_file(*system.topology_file);
        check_resources({.gpus = topology.gpu_count()}, "topology " + *system.topology_file);
        return topology;
    }
    FabricOptions fabric = system.fabric;
    fabric.nvlink_bandwidth = system.gpu->scaleup_bandwidth_per_direction;
    return build_cluster(system.node_shape(), gpus, fabric);
}

std::string sharp_unavailable_reason(const System& system, int gpus) {
    if (system.topology_file && system.spans_domains(gpus) && !system.topology_file_infiniband)
        return "the network of " + *system.topology_file + " does not attach every GPU to InfiniBand switches: SHARP "
               "reduces in InfiniBand switches, so it would change nothing";
    if (system.spans_domains(gpus) && !system.topology_file && !system.fabric.infiniband)
        return system.name + "'s fabric is Ethernet: SHARP reduces in InfiniBand switches, so it would change nothing";
    if (system.spans_domains(gpus)) return {};
    const int domain = system.gpus_per_nvlink_domain;
    return within_one_domain(system.name, domain, gpus) + ": SHARP reduces between NVLink domains in the InfiniBand switches, and one domain has no switch "
           "fabric";
}

bool sharp_by_default(const System& system, int gpus) {
    return !system.topology_file && system.fabric.infiniband && system.gpu->vendor == "NVIDIA" &&
           system.spans_domains(gpus);
}

}  // namespace ttsim
