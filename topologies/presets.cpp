// Preset systems. Figures from /work/shared/data/hardware/params.md sections 1-2 (source keys in brackets).
#include "topologies/presets.hpp"

#include <cctype>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "sim/errors.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "topologies/fabric_shape.hpp"
#include "topologies/superpod_fabric.hpp"

namespace ttsim {
namespace {

constexpr double kGB = 1e9;

// NVLink bandwidth per GPU per direction: NVLink4 18 links = 450 GB/s (GLK_H100, NT_212; H200 same, NV_DS);
// NVLink5 18 links = 900 GB/s (GLK_B200, SPOD_B200; GB200 SPOD_GB200).
constexpr double kNvLink4 = 450 * kGB;
constexpr double kNvLink5 = 900 * kGB;
// GPU <-> NIC: PCIe Gen5 x16 = 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s per direction (params.md, arithmetic).
constexpr double kPcieGen5x16 = 63.0 * kGB;
// An 800 Gb/s XDR port (100 GB/s) would be capped by Gen5; ConnectX-8 attaches over PCIe Gen6 x16, twice
// Gen5's rate (estimate: Gen6 doubles the transfer rate; not in params.md).
constexpr double kPcieGen6x16 = 2 * kPcieGen5x16;
// IB port line rate per direction (NicSpeed): HDR 200 Gb/s = 25 GB/s (NCCL_812), NDR 400 Gb/s = 50 GB/s
// (MLP41 systems, SPOD_H100); XDR 800 Gb/s = 100 GB/s (CX8), or any what-if rate. NCCL achieves 46-49 GB/s
// per NDR NIC (NT_290, NT_267); that efficiency belongs to the NCCL model, not to the wire, so links carry
// the line rate.

// GPU <-> NIC attachment for a NIC of `nic_bytes_per_second`: the slower of Gen5 x16 and Gen6 x16 that carries
// the NIC's line rate (NDR and slower: Gen5, as ConnectX-7 on DGX H100/B200; XDR: Gen6, as ConnectX-8). No
// product above Gen6 x16 (126 GB/s = 1008 Gb/s) is sourced, so a faster what-if NIC is assumed to get an
// attachment that carries its line rate: the NIC, not an invented PCIe generation, limits it, as in the
// analytic model (gpu.nic_bandwidth_per_direction, point_prediction.cpp), which has no PCIe.
double nic_attachment_bandwidth(double nic_bytes_per_second) {
    if (nic_bytes_per_second <= kPcieGen5x16) return kPcieGen5x16;
    if (nic_bytes_per_second <= kPcieGen6x16) return kPcieGen6x16;
    return nic_bytes_per_second;
}

// Latencies: ALL ESTIMATES, no authoritative hardware figure exists (params.md section 2 and item 7.2).
// - NVSwitch traversal 0.5 us + 0.25 us per NVLink port crossing: GPU -> switch -> GPU = 1.0 us, the figure
//   CALCULON uses for NVLink (params.md "NVSwitch/NVLink hop latency").
// - IB switch hop 300 ns: third-party figures are ~330 ns / <400 ns for Quantum-2, 130 ns for HDR
//   (params.md "IB switch hop latency").
// - Cable propagation 50 ns (~10 m of fibre at ~5 ns/m).
// - NIC + PCIe traversal 0.5 us each way, so that a same-leaf RDMA path GPU->NIC->leaf->NIC->GPU is
//   0.5 + 0.35 + 0.05 + 0.5 = 1.4 us, inside the 1-2 us end-to-end estimate (params.md).
const SimTime kNvLinkPortLatency = SimTime::nanoseconds(250);
const SimTime kNvSwitchLatency = SimTime::nanoseconds(500);
const SimTime kIbSwitchLatency = SimTime::nanoseconds(300);
const SimTime kCableLatency = SimTime::nanoseconds(50);
const SimTime kNicLatency = SimTime::nanoseconds(500);

// A GB200 NVL72 rack: 18 compute trays x 4 GPUs in one NVLink5 domain (SPOD_GB200).
constexpr int kTraysPerNvl72Rack = 18;

struct NodeType {
    PresetInfo info;
};

const std::vector<NodeType>& node_types() {
    // DGX H100/H200/B200: 8 GPUs, one NVSwitch domain per node, 8 compute NICs (one per GPU; the 2 storage
    // NICs are not modelled) (MLP41/MLP50 systems). GB200: 4 GPUs and 4 CX-7 NICs per compute tray
    // (MLP50 tyche systems), 72 GPUs per NVLink domain.
    //
    // Two fabrics beyond the DGX SuperPOD of 64-port NDR switches:
    // - gb200-nvl72-xdr: GB200 NVL72 racks with one ConnectX-8 800G (XDR) NIC per GPU on Quantum-X800 Q3400
    //   switches, 144 x 800G ports (NVIDIA Quantum-X800 announcement, GTC, 18 March 2024; the GB300 NVL72 DGX
    //   SuperPOD is built so): two tiers hold 10,368 GPUs, three ~746k.
    // - h100-100k: a 100k-class H100 cluster as xAI's Colossus (100,000 H100 on Spectrum-X Ethernet, one 400G
    //   BlueField-3 SuperNIC per GPU: NVIDIA press release, 28 October 2024), Spectrum-4 SN5600 switches as
    //   128 x 400GbE (SN5600 datasheet: 64 x 800GbE, each splittable in two). Three tiers hold 524,288 GPUs.
    FabricOptions xdr144;
    xdr144.nic = NicSpeed::Xdr800;
    xdr144.switch_ports = 144;
    FabricOptions ethernet128;
    ethernet128.switch_ports = 128;
    ethernet128.infiniband = false;
    static const std::vector<NodeType> types = {
        {{"dgx-h100", 8, 8, kNvLink4}},
        {{"dgx-h200", 8, 8, kNvLink4}},
        {{"dgx-b200", 8, 8, kNvLink5}},
        {{"gb200-nvl72", 4, 4 * kTraysPerNvl72Rack, kNvLink5}},
        {{"gb200-nvl72-xdr", 4, 4 * kTraysPerNvl72Rack, kNvLink5, xdr144,
          "ConnectX-8 XDR 800G per GPU, Quantum-X800 Q3400 144 x 800G switches (NVIDIA, GTC 2024)"}},
        {{"h100-100k", 8, 8, kNvLink4, ethernet128,
          "xAI Colossus class: 400G per GPU on Spectrum-X Ethernet, SN5600 as 128 x 400GbE (NVIDIA, Oct 2024)"}},
    };
    return types;
}

std::string known_systems() {
    std::vector<std::string> names;
    for (const NodeType& t : node_types()) names.push_back(t.info.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::string fabric_tiers_phrase(const FabricOptions& options) {
    static const char* const kWords[] = {"", "", "two", "three", "four"};
    const int tiers = options.tiers == 0 ? 3 : options.tiers;
    return std::string(kWords[tiers]) + " tiers";
}

namespace {

void check_gpu_count(const PresetInfo& info, int gpus, const FabricOptions& options) {
    const int per_node = info.gpus_per_node;
    const int most = max_cluster_gpus(info, options);
    const bool one_partial_node = gpus >= 1 && gpus <= per_node;
    const bool whole_nodes = gpus > 0 && gpus % per_node == 0 && gpus <= most;
    if (one_partial_node || whole_nodes) return;
    throw InputError(info.name + " takes 1 to " + std::to_string(per_node) + " GPUs (one " +
                     (info.gpus_per_node == info.gpus_per_nvlink_domain ? "node" : "compute tray") +
                     ") or a multiple of " + std::to_string(per_node) + " up to " + std::to_string(most) +
                     " GPUs (" + fabric_tiers_phrase(options) + " of " + std::to_string(options.switch_ports) +
                     "-port switches); got " +
                     std::to_string(gpus),
                     Field::gpus);
}

// InputError unless `nic` is within NicSpeed's accepted rates; `shown` is how the message names it.
void check_nic_range(const NicSpeed& nic, const std::string& shown) {
    if (!(nic.bytes_per_second >= NicSpeed::kMinBytesPerSecond && nic.bytes_per_second <= NicSpeed::kMaxBytesPerSecond))
        throw InputError("NIC speed " + shown + " is outside the physical range " + kNicBandwidthRange.text, Field::nic);
}

}  // namespace

std::string NicSpeed::label() const {
    if (*this == Hdr200) return "hdr";
    if (*this == Ndr400) return "ndr";
    if (*this == Xdr800) return "xdr";
    return units::format_number(gigabits_per_second()) + "Gb/s";
}

std::string NicSpeed::description() const {
    // The generations as the collective header has always named them; any other rate as the rate itself.
    if (*this == Hdr200) return "HDR 200G";
    if (*this == Ndr400) return "NDR 400G";
    if (*this == Xdr800) return "XDR 800G";
    // A rate beyond the fastest named generation says so: 400GB/s (bytes) for a 400Gb/s NIC is an easy slip.
    if (bytes_per_second > Xdr800.bytes_per_second * (1 + 1e-9))
        return label() + " (" + units::format_number(bytes_per_second / Xdr800.bytes_per_second, 3) + "x XDR 800G)";
    return label();
}

NicSpeed parse_nic_speed(std::string_view text) {
    if (text == "hdr" || text == "hdr200") return NicSpeed::Hdr200;
    if (text == "ndr" || text == "ndr400") return NicSpeed::Ndr400;
    if (text == "xdr" || text == "xdr800") return NicSpeed::Xdr800;
    const std::string usage = "use hdr (200Gb/s), ndr (400Gb/s), xdr (800Gb/s) or a bandwidth such as 200Gb/s or 25GB/s";
    // A bandwidth starts with its number; anything else is a misspelt generation, named as such.
    const bool numeric = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' ||
                                           text[0] == '+' || text[0] == '.');
    if (!numeric) throw InputError("unknown NIC speed '" + std::string(text) + "'; " + usage, Field::nic);
    double bytes_per_second = 0;
    try {
        bytes_per_second = units::parse_bandwidth(text);
    } catch (const InputError& e) {
        throw InputError("NIC speed: " + e.message() + "; " + usage, Field::nic);   // says what the number was
    }
    check_nic_range(NicSpeed{bytes_per_second}, "'" + std::string(text) + "'");
    return NicSpeed{bytes_per_second};
}

const std::vector<PresetInfo>& preset_systems() {
    static const std::vector<PresetInfo> infos = [] {
        std::vector<PresetInfo> out;
        for (const NodeType& t : node_types()) out.push_back(t.info);
        return out;
    }();
    return infos;
}

namespace {

const PresetInfo& find_node_type(std::string_view system) {
    for (const NodeType& t : node_types())
        if (t.info.name == system) return t.info;
    throw InputError("unknown system '" + std::string(system) + "'; known systems: " + known_systems(), Field::system);
}

// Checks every argument of build_cluster; InputError names what is wrong.
void check_cluster(const PresetInfo& node, int gpus, const FabricOptions& options) {
    // A radix splits half down, half up at a leaf, into whole cables per trunk: even, 8 (the smallest useful
    // leaf) to 512 (a chassis switch's order).
    if (options.switch_ports < kMinSwitchPorts || options.switch_ports > kMaxSwitchPorts || options.switch_ports % 2 != 0)
        throw InputError("switch radix must be an even number of ports from " + std::to_string(kMinSwitchPorts) + " to " +
                             std::to_string(kMaxSwitchPorts) + "; got " +
                             std::to_string(options.switch_ports),
                         Field::switch_ports);
    if (options.tiers != 0 && (options.tiers < kMinFabricTiers || options.tiers > kMaxFabricTiers))
        throw InputError("a fat tree has " + std::to_string(kMinFabricTiers) + " to " + std::to_string(kMaxFabricTiers) +
                             " switch tiers; got " + std::to_string(options.tiers),
                         Field::tiers);
    if (options.planes < 1 || options.planes > kMaxPlanes)
        throw InputError("planes per NIC must be 1 to " + std::to_string(kMaxPlanes) + "; got " + std::to_string(options.planes), Field::planes);
    if (options.nic.bytes_per_second / options.planes < NicSpeed::kMinBytesPerSecond)
        throw InputError("a plane of " + options.nic.label() + " over " + std::to_string(options.planes) +
                             " planes is below " + kNicBandwidthRange.text,
                         Field::planes);
    if (!std::isfinite(options.spine_oversubscription) || options.spine_oversubscription < 1.0 ||
        options.spine_oversubscription > kMaxSpineOversubscription)
        throw InputError("spine oversubscription must be between 1 (non-blocking) and 64; got " +
                             std::to_string(options.spine_oversubscription),
                         Field::spine_oversubscription);
    if (!std::isfinite(options.superspine_oversubscription) || options.superspine_oversubscription < 1.0 ||
        options.superspine_oversubscription > kMaxSpineOversubscription)
        throw InputError("super-spine oversubscription must be between 1 (non-blocking) and 64; got " +
                             std::to_string(options.superspine_oversubscription),
                         Field::superspine_oversubscription);
    check_gpu_count(node, gpus, options);
    check_nic_range(options.nic, options.nic.label());
    if (!std::isfinite(options.oversubscription) || options.oversubscription < 1.0 ||
        options.oversubscription > 64.0)
        throw InputError("oversubscription must be between 1 (non-blocking) and 64; got " +
                         std::to_string(options.oversubscription),
                         Field::oversubscription);
    // Oversubscription shapes the leaf uplinks, which a job within one NVLink domain never uses.
    check_fabric_applies(node.name, node.gpus_per_nvlink_domain, gpus, options, options);
    const double nvlink = options.nvlink_bandwidth.value_or(node.nvlink_bandwidth);
    // 1 Gb/s to 100 Tb/s per GPU per direction: below, the event clock overflows; above, over ten times NVLink5.
    if (!(nvlink >= NicSpeed::kMinBytesPerSecond && nvlink <= 100e12 / 8))
        throw InputError("NVLink bandwidth must be between 1Gb/s and 100Tb/s per GPU per direction");
    if (node.gpus_per_node < 1 || node.gpus_per_nvlink_domain < node.gpus_per_node ||
        node.gpus_per_nvlink_domain % node.gpus_per_node != 0)
        throw InputError(node.name + ": an NVLink domain must be a whole number of nodes");
}

}  // namespace

int checked_gpu_request(std::int64_t gpus, Field field) {
    check_resources({.gpus = gpus}, field);
    if (gpus > kMaxPresetGpus)
        throw InputError("no system holds more than " + std::to_string(kMaxPresetGpus) + " GPUs; got " +
                             std::to_string(gpus),
                         field);
    return static_cast<int>(gpus);
}

int max_cluster_gpus(const PresetInfo& node, const FabricOptions& options) {
    const int rails = node.gpus_per_node;   // one NIC per GPU
    const std::int64_t nodes =
        superpod_max_nodes(rails, options.switch_ports / 2, options.switch_ports, options.tiers, options.rail_optimized);
    return static_cast<int>(std::min<std::int64_t>(nodes * node.gpus_per_node, kMaxPresetGpus));
}

void validate_preset(std::string_view system, int gpus, const FabricOptions& options) {
    const PresetInfo& node = find_node_type(system);
    check_cluster(node, gpus, options);
    // A collective within one NVLink domain runs with the default NIC and routing (the table's header would
    // otherwise name a NIC the collective never uses).
    check_fabric_applies(node.name, node.gpus_per_nvlink_domain, gpus, options, FabricOptions{});
}

std::string within_one_domain(std::string_view name, int gpus_per_domain, int gpus) {
    return std::to_string(gpus) + (gpus == 1 ? " GPU fits" : " GPUs fit") + " in one " + std::string(name) +
           " NVLink domain (up to " + std::to_string(gpus_per_domain) + " GPUs)";
}

void check_fabric_applies(std::string_view name, int gpus_per_domain, int gpus, const FabricOptions& asked,
                          const FabricOptions& runs_with) {
    if (gpus > gpus_per_domain) return;
    const std::string within = within_one_domain(name, gpus_per_domain, gpus);
    if (asked.oversubscription != 1.0)
        throw InputError(within + ", which uses no network switch: oversubscription cannot apply", Field::oversubscription);
    if (asked.spine_oversubscription != runs_with.spine_oversubscription)
        throw InputError(within + ", which uses no network switch: spine oversubscription cannot apply",
                         Field::spine_oversubscription);
    if (asked.superspine_oversubscription != runs_with.superspine_oversubscription)
        throw InputError(within + ", which uses no network switch: super-spine oversubscription cannot apply",
                         Field::superspine_oversubscription);
    if (asked.rail_optimized != runs_with.rail_optimized)
        throw InputError(within + ", which uses no network switch: leaves' rails cannot apply", Field::rail_optimized);
    if (asked.planes != runs_with.planes)
        throw InputError(within + ", which uses no NIC: planes cannot apply", Field::planes);
    if (asked.tiers != runs_with.tiers)
        throw InputError(within + ", which uses no network switch: switch tiers cannot apply", Field::tiers);
    if (asked.switch_ports != runs_with.switch_ports)
        throw InputError(within + ", which uses no network switch: another radix cannot apply", Field::switch_ports);
    if (asked.nic.bytes_per_second != runs_with.nic.bytes_per_second)
        throw InputError(within + ", which uses no NIC: another NIC speed cannot apply", Field::nic);
    if (asked.routing != runs_with.routing)
        throw InputError(within + ", which uses no network switch: another routing cannot apply", Field::routing);
}

std::string fabric_shape_note(const FabricOptions& options) {
    std::string text;
    if (!options.infiniband) text += ", Ethernet";
    if (options.switch_ports != FabricOptions{}.switch_ports) text += ", " + std::to_string(options.switch_ports) + "-port switches";
    if (options.tiers != 0) text += ", " + std::to_string(options.tiers) + " tiers";
    if (options.planes > 1) text += ", " + std::to_string(options.planes) + " planes";
    if (options.spine_oversubscription != 1.0)
        text += ", spines " + units::format_number(options.spine_oversubscription) + ":1 oversubscribed";
    if (options.superspine_oversubscription != 1.0)
        text += ", super-spines " + units::format_number(options.superspine_oversubscription) + ":1 oversubscribed";
    if (!options.rail_optimized) text += ", leaves not rail-optimised";
    return text;
}

double fabric_switch_equivalents(int gpus, int gpus_per_node, const FabricOptions& options) {
    return options.planes *
           superpod_switch_equivalents(gpus, gpus_per_node, options.switch_ports / 2, options.switch_ports, options.tiers,
                                       options.rail_optimized);
}

std::string nic_description(const FabricOptions& options) {
    return options.infiniband ? options.nic.description() : units::format_number(options.nic.gigabits_per_second()) + "GbE";
}

FabricOptions preset_fabric(std::string_view system) { return find_node_type(system).fabric; }

Topology build_preset(std::string_view system, int gpus) { return build_preset(system, gpus, preset_fabric(system)); }

void validate_preset(std::string_view system, int gpus) { validate_preset(system, gpus, preset_fabric(system)); }

Topology build_preset(std::string_view system, int gpus, const FabricOptions& options) {
    return build_cluster(find_node_type(system), gpus, options);
}

void validate_cluster(const PresetInfo& node, int gpus, const FabricOptions& options) {
    check_cluster(node, gpus, options);
}

Topology build_cluster(const PresetInfo& node, int gpus, const FabricOptions& options) {
    check_cluster(node, gpus, options);
    const PortSpec nvlink{options.nvlink_bandwidth.value_or(node.nvlink_bandwidth),
                          kNvLinkPortLatency + kNvSwitchLatency, kNvLinkPortLatency};
    const PortSpec pcie{nic_attachment_bandwidth(options.nic.bytes_per_second), kNicLatency, kNicLatency};

    Topology topology(node.name + " x" + std::to_string(gpus));
    const int per_node = node.gpus_per_node;
    const int per_domain = node.gpus_per_nvlink_domain;
    const int half = options.switch_ports / 2;
    {
        // Every GPU brings a NIC and two duplex links (NVLink, PCIe); each NVLink domain a switch vertex.
        std::size_t vertices = 2 * static_cast<std::size_t>(gpus) + static_cast<std::size_t>((gpus + per_domain - 1) / per_domain);
        std::size_t links = 4 * static_cast<std::size_t>(gpus);
        if (gpus > per_domain) {
            const SuperPodSize fabric =
                superpod_size(superpod_shape((gpus + per_node - 1) / per_node, std::min(gpus, per_node), half,
                                             options.switch_ports, options.tiers, options.rail_optimized),
                              gpus);
            vertices += fabric.switches;
            links += fabric.directed_links;
        }
        topology.reserve(static_cast<std::size_t>(gpus), vertices, links);
    }
    Vertex domain = kNoVertex;
    for (int rank = 0; rank < gpus; ++rank) {
        if (rank % per_domain == 0) {
            const std::string unit = per_domain == per_node ? "node" : "rack";
            domain = topology.add_vertex(VertexKind::NvSwitch,
                                         unit + std::to_string(rank / per_domain) + ".nvswitch");
        }
        topology.add_gpu(rank / per_node, rank % per_node, domain, nvlink, pcie);
    }
    // One NVLink domain needs no scale-out fabric; its NICs stay unconnected, as on a lone DGX.
    if (gpus > per_domain) {
        SuperPodFabricSpec spec;
        // Every port at the NIC's rate (host-to-leaf and the trunks alike, as a fabric of that generation), the
        // planes together: P identical trees, each at 1/P of it, with every connection striped evenly over them,
        // are one equivalence class (FabricOptions::planes). The radix is the option's, whatever the rate.
        spec.port_bandwidth_bytes_per_s = options.nic.bytes_per_second;
        spec.switch_ports = options.switch_ports;
        spec.nodes_per_unit = half;
        spec.tiers = options.tiers;
        spec.oversubscription = {options.oversubscription, options.spine_oversubscription,
                                 options.superspine_oversubscription};
        spec.rail_optimized = options.rail_optimized;
        spec.link_kind = options.infiniband ? LinkKind::InfiniBand : LinkKind::Ethernet;
        spec.switch_latency = kIbSwitchLatency;
        spec.cable_latency = kCableLatency;
        spec.routing = options.routing;
        build_superpod_fabric(topology, spec);
    }
    topology.finalize();
    const std::string problem = topology.connectivity_problem();
    TTSIM_ASSERT(problem.empty(), "preset " + topology.name() + " is not connected: " + problem);
    return topology;
}

}  // namespace ttsim
