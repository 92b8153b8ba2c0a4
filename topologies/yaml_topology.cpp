// Loader for YAML topologies; the schema is documented in yaml_topology.hpp.
#include "topologies/yaml_topology.hpp"

#include <filesystem>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "sim/file_reading.hpp"
#include "sim/resource_guard.hpp"
#include "topologies/presets.hpp"

namespace ttsim {
namespace {

// Same cap as the presets: beyond this a run is not a sane use of a flow-level simulator.
constexpr std::int64_t kMaxYamlGpus = 131'072;
constexpr std::int64_t kMaxSwitches = 1'000'000;

struct SwitchGroup {
    std::vector<Vertex> members;
    SimTime latency;  // forwarding latency, added to links entering a member
};

// An endpoint of a `links` entry: all NICs or switches of a group, or a contiguous slice of them.
struct Endpoint {
    bool is_nic = false;
    const SwitchGroup* group = nullptr;
    std::int64_t first = 0;
    std::int64_t count = 0;
};

Endpoint parse_endpoint(const ConfigNode& node, const std::map<std::string, SwitchGroup>& groups,
                        std::int64_t gpu_count) {
    const std::string text = node.as_string();
    std::string name = text;
    std::optional<std::pair<std::int64_t, std::int64_t>> range;
    if (const auto open = text.find('['); open != std::string::npos) {
        if (text.back() != ']') node.fail("expected 'group', 'group[i]' or 'group[i-j]', got '" + text + "'");
        name = text.substr(0, open);
        const std::string inside = text.substr(open + 1, text.size() - open - 2);
        const auto dash = inside.find('-');
        auto number = [&](const std::string& digits) -> std::int64_t {
            if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
                node.fail("bad index '" + digits + "' in '" + text + "'");
            return std::stoll(digits);
        };
        const std::int64_t lo = number(inside.substr(0, dash));
        const std::int64_t hi = dash == std::string::npos ? lo : number(inside.substr(dash + 1));
        if (hi < lo) node.fail("empty range in '" + text + "'");
        range = {lo, hi};
    }
    Endpoint e;
    std::int64_t size = 0;
    if (name == "nic") {
        e.is_nic = true;
        size = gpu_count;
    } else {
        const auto it = groups.find(name);
        if (it == groups.end()) {
            std::vector<std::string> known{"nic"};
            for (const auto& [group_name, group] : groups) known.push_back(group_name);
            node.fail(fmt::format("unknown endpoint '{}'; known: {}", name, fmt::join(known, ", ")));
        }
        e.group = &it->second;
        size = static_cast<std::int64_t>(it->second.members.size());
    }
    e.first = range ? range->first : 0;
    e.count = range ? range->second - range->first + 1 : size;
    if (e.first + e.count > size)
        node.fail("index out of range in '" + text + "': '" + name + "' has " + std::to_string(size) +
                  " members (0 to " + std::to_string(size - 1) + ")");
    return e;
}

PortSpec parse_port(const ConfigNode& node, SimTime switch_latency) {
    const SimTime latency = node.required("latency").as_time(kLatencyRange);
    return PortSpec{node.required("bandwidth").as_bandwidth(kLinkBandwidthRange), latency + switch_latency,
                    latency};
}

Topology load_preset(const ConfigNode& preset) {
    preset.check_keys({"system", "gpus", "nic", "oversubscription", "routing"});
    std::vector<std::string_view> systems;
    for (const PresetInfo& p : preset_systems()) systems.push_back(p.name);
    const std::string system = preset.required("system").as_string();
    FabricOptions options;
    if (auto nic = preset.optional("nic")) options.nic = nic->feeding([&] { return parse_nic_speed(nic->as_string()); });
    if (auto ratio = preset.optional("oversubscription")) options.oversubscription = ratio->as_double(1.0, 64.0);
    if (auto routing = preset.optional("routing")) options.routing = read_fabric_routing(*routing);
    const ConfigNode gpus = preset.required("gpus");
    const std::int64_t requested = gpus.as_int(1, kMaxRequestableGpus);
    // At the key the user has to change: the one holding the field the error names, else the GPU count.
    return preset.feeding_keys(gpus, [&] { return build_preset(system, checked_gpu_request(requested), options); });
}

// The resource guard (sim/resource_guard.hpp) for what the file describes so far, failing at `node`'s line.
void guard_resources(const ConfigNode& node, const SimulationSize& size) {
    node.feeding([&] { check_resources(size, ""); });   // a malformed TTSIM_MAX_* names itself
}

}  // namespace

Topology load_topology(const ConfigNode& root) {
    if (auto preset = root.optional("preset")) {
        root.check_keys({"name", "preset"});
        return load_preset(*preset);
    }
    root.check_keys({"name", "gpus", "nodes", "switches", "links"});
    Topology topology(root.optional("name") ? root.optional("name")->as_string() : std::string("custom"));

    // ---- nodes, GPUs, NICs and NVLink domains ----
    const ConfigNode nodes = root.required("nodes");
    nodes.check_keys({"count", "gpus_per_node", "nvlink", "nic"});
    const std::int64_t node_count = nodes.required("count").as_int(1, kMaxYamlGpus);
    const std::int64_t per_node = nodes.required("gpus_per_node").as_int(1, 72);
    const std::int64_t gpu_count = node_count * per_node;
    if (gpu_count > kMaxYamlGpus)
        nodes.fail("nodes.count x gpus_per_node = " + std::to_string(gpu_count) + " GPUs; at most " +
                   std::to_string(kMaxYamlGpus) + " are supported");
    guard_resources(nodes, {.gpus = gpu_count});
    if (auto gpus = root.optional("gpus"); gpus && gpus->as_int(1, kMaxYamlGpus) != gpu_count)
        gpus->fail("says " + std::to_string(gpus->as_int(1, kMaxYamlGpus)) + " GPUs but nodes describe " +
                   std::to_string(node_count) + " x " + std::to_string(per_node) + " = " +
                   std::to_string(gpu_count));

    const ConfigNode nic = nodes.required("nic");
    nic.check_keys({"bandwidth", "latency"});
    const PortSpec pcie = parse_port(nic, SimTime::zero());

    std::optional<PortSpec> nvlink;
    std::int64_t per_domain = per_node;
    if (auto nv = nodes.optional("nvlink")) {
        nv->check_keys({"bandwidth", "latency", "switch_latency", "gpus_per_domain"});
        const SimTime switch_latency = nv->optional("switch_latency") ? nv->required("switch_latency").as_time(kLatencyRange)
                                                                      : SimTime::zero();
        nvlink = parse_port(*nv, switch_latency);
        if (auto domain = nv->optional("gpus_per_domain")) {
            per_domain = domain->as_int(1, kMaxYamlGpus);
            if (per_domain % per_node != 0)
                domain->fail("an NVLink domain holds whole nodes: must be a multiple of gpus_per_node (" +
                             std::to_string(per_node) + ")");
        }
    }
    Vertex domain = kNoVertex;
    for (std::int64_t rank = 0; rank < gpu_count; ++rank) {
        if (nvlink && rank % per_domain == 0)
            domain = topology.add_vertex(VertexKind::NvSwitch, "domain" + std::to_string(rank / per_domain) +
                                                                   ".nvswitch");
        topology.add_gpu(static_cast<int>(rank / per_node), static_cast<int>(rank % per_node), domain,
                         nvlink.value_or(PortSpec{}), pcie);
    }

    // ---- switch groups ----
    std::map<std::string, SwitchGroup> groups;
    std::int64_t switch_total = 0;
    if (auto switches = root.optional("switches")) {
        for (const ConfigNode& entry : switches->items()) {
            entry.check_keys({"name", "count", "tier", "latency"});
            const ConfigNode name_node = entry.required("name");
            const std::string name = name_node.as_string();
            if (name.empty() || name == "nic" || name.find_first_of("[]") != std::string::npos)
                name_node.fail("a switch group name must be non-empty, not 'nic', without brackets");
            if (groups.count(name)) name_node.fail("duplicate switch group '" + name + "'");
            const std::int64_t count = entry.required("count").as_int(1, kMaxSwitches);
            if ((switch_total += count) > kMaxSwitches) entry.fail("too many switches (at most 1,000,000)");
            VertexKind kind = VertexKind::Switch;
            if (auto tier = entry.optional("tier")) {
                const std::string t = tier->as_choice({"leaf", "spine", "core", "switch"});
                kind = t == "leaf" ? VertexKind::LeafSwitch
                       : t == "spine" ? VertexKind::SpineSwitch
                       : t == "core" ? VertexKind::CoreSwitch
                                     : VertexKind::Switch;
            }
            SwitchGroup group;
            group.latency = entry.optional("latency") ? entry.required("latency").as_time(kLatencyRange) : SimTime::zero();
            for (std::int64_t i = 0; i < count; ++i)
                group.members.push_back(topology.add_vertex(kind, name + "[" + std::to_string(i) + "]"));
            groups.emplace(name, std::move(group));
        }
    }

    // ---- links ----
    const std::optional<ConfigNode> links = root.optional("links");
    if (links) {
        for (const ConfigNode& entry : links->items()) {
            entry.check_keys({"from", "to", "pattern", "bandwidth", "latency", "kind", "cables"});
            const ConfigNode from_node = entry.required("from");
            const ConfigNode to_node = entry.required("to");
            const Endpoint from = parse_endpoint(from_node, groups, gpu_count);
            const Endpoint to = parse_endpoint(to_node, groups, gpu_count);
            if (from.is_nic && to.is_nic) to_node.fail("a NIC connects only to switches, not to another NIC");
            if (to.is_nic) to_node.fail("write NIC links as 'from: nic' (to a switch)");
            const std::int64_t cables = entry.optional("cables") ? entry.required("cables").as_int(1, 4096) : 1;
            const double bandwidth =
                entry.required("bandwidth").as_bandwidth(kLinkBandwidthRange) * static_cast<double>(cables);
            const SimTime latency = entry.required("latency").as_time(kLatencyRange);
            LinkKind kind = LinkKind::InfiniBand;
            if (auto k = entry.optional("kind")) kind = k->as_choice({"infiniband", "ethernet"}) == "ethernet"
                                                            ? LinkKind::Ethernet
                                                            : LinkKind::InfiniBand;
            const std::string pattern =
                entry.optional("pattern") ? entry.required("pattern").as_choice({"all-to-all", "rail", "block"})
                                          : std::string("all-to-all");

            auto from_vertex = [&](std::int64_t i) {
                const std::int64_t index = from.first + i;
                return from.is_nic ? topology.gpu(static_cast<int>(index)).nic
                                   : from.group->members[static_cast<std::size_t>(index)];
            };
            auto to_vertex = [&](std::int64_t j) { return to.group->members[static_cast<std::size_t>(to.first + j)]; };
            const SimTime into_from = from.is_nic ? latency : latency + from.group->latency;
            auto connect = [&](std::int64_t i, std::int64_t j) {
                const Vertex a = from_vertex(i);
                const Vertex b = to_vertex(j);
                if (a == b) entry.fail("links a switch to itself (" + topology.vertex(a).name + ")");
                topology.add_duplex_link(a, b, kind, bandwidth, latency + to.group->latency, into_from);
            };

            if (pattern == "all-to-all" && from.count * to.count > 10'000'000)
                entry.fail("all-to-all would create over 10 million links");
            // The resource guard, before any of this entry's links exist: every link so far plus these.
            const std::int64_t cables_to_add = pattern == "all-to-all" ? from.count * to.count
                                               : pattern == "block"    ? std::max(from.count, to.count)
                                                                       : from.count;
            guard_resources(entry, {.gpus = gpu_count,
                                    .links = static_cast<std::int64_t>(topology.links().size()) + 2 * cables_to_add});
            if (pattern == "all-to-all") {
                for (std::int64_t i = 0; i < from.count; ++i)
                    for (std::int64_t j = 0; j < to.count; ++j) connect(i, j);
            } else if (pattern == "block") {
                if (from.count >= to.count)
                    for (std::int64_t i = 0; i < from.count; ++i) connect(i, i * to.count / from.count);
                else
                    for (std::int64_t j = 0; j < to.count; ++j) connect(j * from.count / to.count, j);
            } else {  // rail
                if (!from.is_nic) from_node.fail("pattern 'rail' connects NICs: 'from' must be nic");
                if (to.count % per_node != 0)
                    to_node.fail("pattern 'rail' needs one switch per rail per unit: a multiple of gpus_per_node (" +
                                 std::to_string(per_node) + ") switches, got " + std::to_string(to.count));
                const std::int64_t units = to.count / per_node;
                const std::int64_t nodes_per_unit = (node_count + units - 1) / units;
                for (std::int64_t i = 0; i < from.count; ++i) {
                    const std::int64_t rank = from.first + i;
                    const std::int64_t unit = (rank / per_node) / nodes_per_unit;
                    connect(i, unit * per_node + rank % per_node);
                }
            }
        }
    }

    topology.finalize();
    if (const std::string problem = topology.connectivity_problem(); !problem.empty())
        (links ? *links : root).fail("topology is disconnected: " + problem);
    return topology;
}

FabricRouting read_fabric_routing(const ConfigNode& node) {
    return parse_fabric_routing(node.as_choice(kFabricRoutingNames));
}

Topology load_topology_file(const std::string& path) { return load_topology(ConfigNode::load_file(path)); }

std::string topology_file_path(const ConfigNode& node) {
    std::filesystem::path path = node.as_string();
    if (path.is_relative()) {
        const std::filesystem::path base = std::filesystem::path(node.location().file).parent_path();
        if (!path_exists(path) && path_exists(base / path)) path = base / path;
    }
    if (!path_exists(path)) node.fail("topology file '" + path.string() + "' not found");
    return path.string();
}

}  // namespace ttsim
