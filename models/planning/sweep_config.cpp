#include "models/planning/sweep_config.hpp"

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/planning/network_check.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/custom_workload.hpp"
#include "models/workloads/workload.hpp"
#include "sim/input_errors.hpp"
#include "sim/resource_guard.hpp"
#include "sim/units.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"

namespace ttsim::planning {

namespace {

// The largest GPU count a sweep may ask for: what the presets can build (topologies/presets.hpp).
constexpr int kMaxSweepGpus = kMaxPresetGpus;

std::string short_number(double value) { return units::format_number(value); }

// A GPU count to simulate: any whole number up to kMaxRequestableGpus is read, so that an absurd one is refused by
// the resource guard with its estimate (checked_gpu_request), at this key's line.
int read_gpu_count(const ConfigNode& node) {
    const std::int64_t gpus = node.as_int(1, kMaxRequestableGpus);
    return node.feeding([&] { return checked_gpu_request(gpus); });
}

// A list entry that names what an earlier one named (an alias included) would run every point twice: refused.
void push_unique(std::vector<std::string>& list, std::string value, const ConfigNode& item) {
    if (std::find(list.begin(), list.end(), value) != list.end()) item.fail("'" + value + "' is listed twice");
    list.push_back(std::move(value));
}

}  // namespace

std::vector<int> read_gpu_counts(const ConfigNode& node) {
    std::set<int> counts;
    if (node.is_map()) {
        node.check_keys({"from", "to"});
        const int from = read_gpu_count(node.required("from"));
        const int to = read_gpu_count(node.required("to"));
        if (to < from) node.required("to").fail("is below 'from'");
        for (int n : doubling_counts(from, to)) counts.insert(n);
    } else if (node.is_sequence()) {
        for (const ConfigNode& item : node.items())
            if (!counts.insert(read_gpu_count(item)).second)   // as a workload or system listed twice
                item.fail("'" + item.as_string() + "' is listed twice");
        if (counts.empty()) node.fail("must list at least one GPU count");
    } else {
        counts.insert(read_gpu_count(node));
    }
    return {counts.begin(), counts.end()};
}

namespace {

BatchChoice read_batch(const ConfigNode& node) {
    BatchChoice b;
    if (node.is_scalar()) {
        const std::string rule = node.as_choice({"published", "rcp_optimal"});
        b.rule = rule == "published" ? BatchRule::published : BatchRule::rcp_optimal;
        return b;
    }
    node.check_keys({"global", "per_rank"});
    if (node.has("global") == node.has("per_rank")) node.fail("give exactly one of 'global' or 'per_rank'");
    if (auto g = node.optional("global")) {
        b.rule = BatchRule::fixed_global;
        b.value = static_cast<int>(g->as_int(1, 1 << 24));
    } else {
        b.rule = BatchRule::per_rank;
        b.value = static_cast<int>(node.required("per_rank").as_int(1, 1 << 16));
    }
    return b;
}

}  // namespace

NetworkOption read_network(const ConfigNode& node) {
    std::vector<std::string> keys = {"name", "nic", "sharp", "oversubscription"};
    keys.insert(keys.end(), std::begin(kFabricShapeKeys), std::end(kFabricShapeKeys));
    node.check_keys(keys);
    NetworkOption n;
    if (auto nic = node.optional("nic")) n.nic = nic->feeding([&] { return parse_nic_speed(nic->as_string()); });
    if (auto sharp = node.optional("sharp")) n.sharp = sharp->as_bool();
    if (auto over = node.optional("oversubscription")) n.oversubscription = over->as_double(1.0, 64.0);
    n.shape = read_fabric_shape(node);
    if (auto name = node.optional("name")) {
        n.name = name->as_string();
    } else {
        n.name = n.nic.label() +
                 (n.sharp ? (*n.sharp ? "-sharp" : "-nosharp") : "") +
                 (n.oversubscription > 1.0 ? "-over" + short_number(n.oversubscription) : "") +
                 (n.shape.any() ? "-" + n.shape.label() : "");
        if (n.is_default()) n.name = "default";
    }
    return n;
}

namespace {

std::string read_format(const ConfigNode& root) {
    if (auto output = root.optional("output")) {
        output->check_keys({"format"});
        if (auto format = output->optional("format")) return format->as_choice({"table", "csv", "json"});
    }
    return "table";
}

std::string canonical_workload(const ConfigNode& node) {
    return node.feeding([&] { return find_workload(node.as_string()).name; });
}

std::string canonical_system(const ConfigNode& node, const std::string& name,
                             const std::vector<HardwareVariant>& variants) {
    for (const auto& v : variants)
        if (v.name == name) return name;
    try {
        return resolve_system(name).name;
    } catch (const InputError& e) {
        node.fail(e.message() + " (or the name of a gpu_variants entry)");
    }
}

// `cluster: {topology_file: FILE}`: every point's collectives run on that YAML topology (its GPUs, NVLink domains,
// NICs and switches) with the systems' GPUs. The file fixes the GPU count: `gpus` may be left out, else must be it.
// Network options that describe another fabric (NIC, oversubscription) and routing cannot apply to it.
void read_sweep_cluster(const ConfigNode& cluster, const ConfigNode& root, SweepSpec& spec) {
    cluster.check_keys({"topology_file"});
    const ConfigNode file = cluster.required("topology_file");
    const std::filesystem::path path = topology_file_path(file);
    int file_gpus = 0;
    try {
        file_gpus = load_topology_file(path.string()).gpu_count();
    } catch (const InputError& e) {
        file.fail(e.what());   // an error in the other file, reached from this key: both locations
    }
    spec.topology_file = path.string();
    if (root.has("gpus")) {
        for (int n : spec.gpu_counts)
            if (n != file_gpus)
                root.required("gpus").fail("topology " + path.string() + " has " + std::to_string(file_gpus) +
                                           " GPUs; a sweep on it runs that count only (got " + std::to_string(n) + ")");
    } else {
        spec.gpu_counts = {file_gpus};
    }
    if (auto routing = root.optional("routing"))
        routing->fail("a topology file routes by its own rules (static ECMP); drop 'routing' or 'cluster'");
    if (auto network = root.optional("network"))
        for (const NetworkOption& n : spec.networks)
            if (n.shapes_scale_out())
                network->fail("network option '" + n.name + "' sets a NIC, an oversubscription or a fabric shape (planes, "
                              "switch_ports, tiers, spine_oversubscription), but topology " +
                              path.string() + " describes its own fabric; only 'sharp' applies");
}

}  // namespace

namespace {

// `allocation: rack|tray`: what every system (catalog names) is rented by, refused at the key where one has no such
// unit (a DGX is rented by the node only); nullopt when absent (each system's own unit).
std::optional<AllocationUnit> read_allocation(const ConfigNode& root, const std::vector<std::string>& base_systems) {
    const auto x = root.optional("allocation");
    if (!x) return std::nullopt;
    const AllocationUnit unit = parse_allocation(x->as_choice({"rack", "tray"}));
    // Applies to the rack-scale systems; refused where no system searched is one (a DGX is rented by the node only).
    x->feeding([&] {
        check_allocation_applies_somewhere(base_systems, unit);
        return 0;
    });
    return unit;
}

}  // namespace

ComputeModel read_compute_model(const ConfigNode& root) {
    const auto node = root.optional("model");
    if (!node) return kDefaultComputeModel;
    return *parse_compute_model(node->as_choice({"lumped", "operator"}));
}

LayoutRequest read_layout(const ConfigNode& node, ComputeModel model) {
    LayoutRequest request;
    if (node.is_scalar()) {
        request = node.feeding([&] { return parse_layout_request(node.as_string()); });
    } else {
        node.check_keys({"tp", "cp", "pp", "vp", "micro", "accumulation", "recompute", "schedule", "distributed_optimizer",
                         "reduction"});
        request.mode = LayoutMode::pinned;
        const std::pair<const char*, std::optional<int> LayoutPins::*> counts[] = {
            {"tp", &LayoutPins::tensor_parallel},
            {"cp", &LayoutPins::context_parallel},
            {"pp", &LayoutPins::pipeline_parallel},
            {"vp", &LayoutPins::virtual_pipeline},
            {"micro", &LayoutPins::micro_batch},
            {"accumulation", &LayoutPins::gradient_accumulation}};
        for (const auto& [key, member] : counts)
            if (auto x = node.optional(key)) request.pins.*member = static_cast<int>(x->as_int(1, 1 << 20));
        if (auto x = node.optional("distributed_optimizer")) request.pins.distributed_optimizer = x->as_bool();
        if (auto x = node.optional("recompute")) request.pins.recompute = x->as_choice({"none", "full"});
        if (auto x = node.optional("schedule")) request.pins.schedule = x->as_choice(kPipeScheduleNames);
        if (auto x = node.optional("reduction"))
            request.pins.reduction_after_backward = x->as_choice(kGradientReductionNames) == gradient_reduction_name(true);
        if (!request.pins.any())
            node.fail("pins nothing: give tp, cp, pp, vp, micro, recompute, schedule, accumulation, distributed_optimizer or reduction (or layout: "
                      "fastest)");
    }
    if (request.searches() && model != ComputeModel::operator_level)
        node.fail("a searched layout (fastest or pins) is priced by the operator model: add 'model: operator', or use "
                  "'layout: published'");
    return request;
}

namespace {
// `memory_reserve: 6GB`: GPU memory kept free besides the model state, a size with its unit that must leave room on
// every system's GPU (a what-if GPU's own memory is checked where its points are prepared).
double read_memory_reserve(const ConfigNode& node, const std::vector<std::string>& systems,
                           const std::vector<HardwareVariant>& variants) {
    const double bytes = static_cast<double>(node.as_bytes());
    node.feeding([&] {
        for (const std::string& label : systems) check_memory_reserve(bytes, *resolve_system(base_system_of(label, variants)).gpu);
    });
    return bytes;
}
}  // namespace

SweepScenario read_sweep_scenario(const ConfigNode& root) {
    // Every mistake of the file in one run (sim/input_errors.hpp): each section is read on its own, and one that
    // needs another (the GPU counts need the systems) is skipped when that one failed.
    InputErrors errors;
    root.check_keys({"scenario", "name", "description", "workloads", "system", "systems", "gpu_variants", "gpus",
                     "include_published_gpus", "batch", "network", "routing", "sharp", "cluster", "metrics", "cost",
                     "energy", "trace", "plots", "output", "allocation", "model", "layout",
                     "profiles", "like", "round", "memory_reserve", "reliability"}, errors);
    // A required key missing beside an unknown key is most likely that key misspelt: the unknown key's message
    // (with its "did you mean") says it once, and what needs the key is skipped rather than reported again.
    const bool unknown_keys = !errors.empty();
    const auto misspelt = [&](std::string_view key) { return unknown_keys && !root.has(key); };
    SweepScenario s;
    errors.attempt([&] {
        s.kind = root.required("scenario").as_choice({"scaling-study", "sweep"});
        s.name = root.optional("name") ? root.required("name").as_string() : s.kind;
        if (auto d = root.optional("description")) (void)d->as_string();
    });

    const bool workloads_ok = !misspelt("workloads") && errors.attempt([&] {
    for (const ConfigNode& item : root.required("workloads").is_scalar()
                                      ? std::vector<ConfigNode>{root.required("workloads")}
                                      : root.required("workloads").items())
        push_unique(s.spec.workloads, canonical_workload(item), item);
    if (s.spec.workloads.empty()) root.required("workloads").fail("must list at least one workload");
    });

    const bool systems_ok = !(misspelt("system") && misspelt("systems")) && errors.attempt([&] {
    if (auto variants = root.optional("gpu_variants")) s.spec.variants = read_variants(*variants);
    if (root.has("system") == root.has("systems")) root.fail("give exactly one of 'system' or 'systems'");
    const ConfigNode systems = root.has("system") ? root.required("system") : root.required("systems");
    const std::vector<ConfigNode> system_nodes = systems.is_scalar() ? std::vector<ConfigNode>{systems} : systems.items();
    for (const ConfigNode& item : system_nodes)
        push_unique(s.spec.systems, canonical_system(item, item.as_string(), s.spec.variants), item);
    if (s.spec.systems.empty()) systems.fail("must list at least one system");
    if (auto variants = root.optional("gpu_variants")) require_variants_used(*variants, s.spec.variants, s.spec.systems, true);
    });
    // Each system's catalog base (empty when the systems failed: what needs them is skipped).
    const std::vector<std::string> bases = systems_ok ? base_systems_of(s.spec.systems, s.spec.variants) : std::vector<std::string>{};

    const bool gpus_ok = systems_ok && !(misspelt("gpus") && !root.has("cluster")) && errors.attempt([&] {
    if (root.has("gpus") || !root.has("cluster")) s.spec.gpu_counts = read_gpu_counts(root.required("gpus"));
    // Every count must fit every system's nodes (one partial node is fine), here, before anything runs (a
    // topology file's own count is checked with the cluster below).
    for (const std::string& label : root.has("cluster") ? std::vector<std::string>{} : s.spec.systems) {
        const std::string base = base_system_of(label, s.spec.variants);
        const int per_node = resolve_system(base).gpus_per_node;
        for (int n : s.spec.gpu_counts)
            if (n > per_node && n % per_node != 0)
                root.required("gpus").fail(std::to_string(n) + " GPUs is not a whole number of " + base + " nodes (" +
                                           std::to_string(per_node) + " GPUs each)" +
                                           (root.required("gpus").is_sequence() || root.required("gpus").is_scalar()
                                                ? std::string("; give whole nodes, or at most one node's GPUs")
                                                : std::string("; {from, to} doubles from 'from', so 'from' must be a "
                                                              "whole number of nodes too")));
    }
    });
    if (systems_ok) errors.attempt([&] { s.spec.allocation = read_allocation(root, bases); });
    s.spec.add_published_gpu_counts = s.kind == "scaling-study";
    errors.attempt([&] {
        if (auto x = root.optional("include_published_gpus")) s.spec.add_published_gpu_counts = x->as_bool();
    });

    errors.attempt([&] {
    if (auto batch = root.optional("batch")) {
        s.spec.batches.clear();
        if (batch->is_sequence())
            for (const ConfigNode& item : batch->items()) s.spec.batches.push_back(read_batch(item));
        else
            s.spec.batches.push_back(read_batch(*batch));
        if (s.spec.batches.empty()) batch->fail("must list at least one batch rule");
    }
    });
    if (gpus_ok) errors.attempt([&] {
    if (auto network = root.optional("network")) {
        s.spec.networks.clear();
        std::set<std::string> names;
        const std::vector<ConfigNode> items = network->is_sequence() ? network->items() : std::vector<ConfigNode>{*network};
        // A NIC or an oversubscription only acts on a job that spans NVLink domains: an option setting one where no
        // point of the sweep does would label rows with a fabric they never used (predict refuses it the same way).
        // A radix or tiers that cannot hold the largest count are refused at their key, not row by row. A `cluster:`
        // brings its own fabric, which the scenario's cluster check covers.
        const bool checked = !root.has("cluster") && !s.spec.gpu_counts.empty();
        std::vector<System> systems;
        if (checked)
            for (const std::string& base : bases) systems.push_back(resolve_system(base));
        for (const ConfigNode& item : items) {
            NetworkOption n = read_network(item);
            if (!names.insert(n.name).second) item.fail("duplicate network option name '" + n.name + "'");
            if (checked && network_option_unused(n, systems, s.spec.gpu_counts.back()))
                item.fail("network option '" + n.name + "' sets a " +
                          (n.oversubscription > 1.0 ? "leaf oversubscription" : n.shape.any() ? "fabric shape" : "NIC") +
                          ", but no point of this sweep spans NVLink domains (largest " +
                          std::to_string(s.spec.gpu_counts.back()) + " GPUs): it would change nothing");
            if (checked)
                item.feeding_keys(item, [&] {
                    check_network_option_holds(n, systems, s.spec.gpu_counts.back());
                    return 0;
                });
            s.spec.networks.push_back(std::move(n));
        }
        if (s.spec.networks.empty()) network->fail("must list at least one network option");
    }
    });
    errors.attempt([&] { if (auto routing = root.optional("routing")) s.spec.routing = read_fabric_routing(*routing); });
    errors.attempt([&] {
        if (auto r = root.optional("reliability")) s.spec.reliability = reliability::read_reliability_request(*r);
    });
    if (systems_ok)
        errors.attempt([&] {
            if (auto reserve = root.optional("memory_reserve"))
                s.spec.memory_reserve_bytes = read_memory_reserve(*reserve, s.spec.systems, s.spec.variants);
        });
    const bool cluster_ok = gpus_ok && errors.attempt([&] {
        if (auto cluster = root.optional("cluster")) read_sweep_cluster(*cluster, root, s.spec);
    });
    // The GPU counts (the scenario's or the topology file's) are known from here on.
    const bool counts_ok = cluster_ok && !s.spec.gpu_counts.empty();
    if (counts_ok) errors.attempt([&] {
    if (auto sharp = root.optional("sharp")) {
        s.spec.sharp = sharp->as_bool();
        if (std::any_of(s.spec.networks.begin(), s.spec.networks.end(), [](const NetworkOption& n) { return n.sharp; }))
            sharp->fail("network options set 'sharp' themselves (the what-if form); set SHARP in one place");
        if (*s.spec.sharp) {
            const std::string nowhere = sharp_unavailable_everywhere(bases, s.spec.gpu_counts.back());
            if (!nowhere.empty()) sharp->fail(nowhere + "; no point of this sweep spans two domains");
        }
    }
    });
    if (auto metrics = root.optional("metrics")) {
        errors.attempt([&] { metrics->check_keys({"reference_gpus", "break_even_threshold", "break_even", "deadline"}); });
        if (counts_ok) errors.attempt([&] {
        if (auto x = metrics->optional("reference_gpus")) {
            s.options.reference_gpus = static_cast<int>(x->as_int(1, kMaxSweepGpus));
            // A reference outside the sweep would silently become another count; refuse it instead.
            const auto& counts = s.spec.gpu_counts;
            if (std::find(counts.begin(), counts.end(), *s.options.reference_gpus) == counts.end()) {
                std::string list;
                for (int n : counts) list += (list.empty() ? "" : ", ") + std::to_string(n);
                x->fail(std::to_string(*s.options.reference_gpus) + " is not one of the GPU counts in 'gpus' (" + list +
                        "); the reference of speedup and efficiency must be a count the sweep runs");
            }
        }
        });
        errors.attempt([&] {
            if (auto x = metrics->optional("break_even_threshold")) s.options.break_even_threshold = x->as_double(0.01, 1.0);
        });
        // What the reports lead with: the knee (default) or the seed's doubling walk (scaling_metrics.hpp).
        errors.attempt([&] {
            if (auto x = metrics->optional("break_even"))
                s.options.break_even_rule = x->as_choice({"knee", "doubling-walk"}) == "knee" ? BreakEvenRule::knee
                                                                                           : BreakEvenRule::doubling_walk;
        });
        errors.attempt([&] {
            if (auto x = metrics->optional("deadline")) {
                s.options.deadline_minutes = x->as_time_seconds() / 60.0;
                if (*s.options.deadline_minutes <= 0) x->fail("must be positive");
            }
        });
    }
    if (systems_ok)
        errors.attempt([&] {
            if (auto cost = root.optional("cost"))
                read_cost_section(*cost, s.options.cost, bases, "this sweep does not run", variant_names(s.spec.variants));
        });
    errors.attempt([&] { if (auto energy = root.optional("energy")) read_energy_section(*energy, s.options.energy); });
    if (workloads_ok && counts_ok) errors.attempt([&] {
    if (auto trace = root.optional("trace")) {
        trace->check_keys({"workload", "system", "gpus"});
        // What the trace names must be in the sweep, or it would be dropped (or found missing after the run).
        auto listed = [](const std::vector<std::string>& list) { return fmt::format("{}", fmt::join(list, ", ")); };
        if (auto x = trace->optional("workload")) {
            s.trace.workload = canonical_workload(*x);
            if (std::find(s.spec.workloads.begin(), s.spec.workloads.end(), *s.trace.workload) == s.spec.workloads.end())
                x->fail("'" + *s.trace.workload + "' is not a workload of this sweep (" + listed(s.spec.workloads) + ")");
        }
        if (auto x = trace->optional("system")) {
            s.trace.system = canonical_system(*x, x->as_string(), s.spec.variants);
            if (std::find(s.spec.systems.begin(), s.spec.systems.end(), *s.trace.system) == s.spec.systems.end())
                x->fail("'" + *s.trace.system + "' is not a system of this sweep (" + listed(s.spec.systems) + ")");
        }
        if (auto x = trace->optional("gpus")) {
            s.trace.gpus = static_cast<int>(x->as_int(1, kMaxSweepGpus));
            const auto& counts = s.spec.gpu_counts;
            // Published counts join a scaling study later, inside its range.
            const bool maybe_published = s.spec.add_published_gpu_counts && !counts.empty() &&
                                         *s.trace.gpus >= counts.front() && *s.trace.gpus <= counts.back();
            if (std::find(counts.begin(), counts.end(), *s.trace.gpus) == counts.end() && !maybe_published) {
                std::string list;
                for (int n : counts) list += (list.empty() ? "" : ", ") + std::to_string(n);
                x->fail(std::to_string(*s.trace.gpus) + " is not one of the GPU counts in 'gpus' (" + list + ")");
            }
        }
    }
    });
    errors.attempt([&] { if (auto plots = root.optional("plots")) s.plots = plots->as_bool(); });
    errors.attempt([&] { s.format = read_format(root); });
    errors.attempt([&] { s.model = read_compute_model(root); });
    errors.attempt([&] {
    if (auto layout = root.optional("layout")) {
        s.spec.layout = read_layout(*layout, s.model);
        // A sweep prices every workload on every system: a pin one of them cannot take at any count is bad input at
        // the key (as in a plan), not a series of failed rows (a topology file sets its own NVLink domains: its
        // points are left to the search).
        if (workloads_ok && systems_ok && s.spec.layout.mode == LayoutMode::pinned && !s.spec.topology_file)
            layout->feeding([&] {
                for (const std::string& workload : s.spec.workloads)
                    for (const std::string& base : bases)
                        check_pins_apply(find_workload(workload), resolve_system(base), s.spec.layout.pins);
                return 0;
            });
    }
    });
    errors.throw_if_any();

    // Every point is expanded and kept with its result: refuse a sweep whose points alone would not fit
    // (a 16 MiB file can ask for billions) before expanding it. Published counts add a few per series.
    const double points = static_cast<double>(s.spec.workloads.size()) * static_cast<double>(s.spec.systems.size()) *
                          static_cast<double>(s.spec.networks.size()) * static_cast<double>(s.spec.batches.size()) *
                          static_cast<double>(s.spec.gpu_counts.size() + (s.spec.add_published_gpu_counts ? 32 : 0));
    try {
        check_resources({.points = static_cast<std::int64_t>(std::min(points, 1e18))}, "");
    } catch (const InputError& e) {
        root.required("gpus").fail("this sweep has about " + units::format_number(points, 3) +
                                   " points (workloads x systems x networks x batch rules x GPU counts): " + e.message());
    }
    return s;
}

PlanScenario read_plan_scenario(const ConfigNode& root) {
    // Every mistake of the file in one run, as a sweep's (read_sweep_scenario).
    InputErrors errors;
    root.check_keys({"scenario", "name", "description", "workload", "systems", "gpu_variants", "network", "batch",
                     "cluster", "routing", "sharp", "deadline", "budget_gpu_hours", "budget", "confidence", "margin",
                     "minimise", "gpus", "allocation", "cost", "energy", "output", "model", "layout",
                     "profiles", "like", "round", "memory_reserve", "reliability"}, errors);
    const bool unknown_keys = !errors.empty();   // a missing required key is then most likely misspelt (as a sweep's)
    PlanScenario s;
    errors.attempt([&] {
        s.name = root.optional("name") ? root.required("name").as_string() : "plan";
        if (auto d = root.optional("description")) (void)d->as_string();
    });
    // `model:` as a mapping is a user model (custom_workload.hpp) planned in place of `workload:`, priced by the
    // operator model at its own global batch; as a scalar it names the compute model (read_compute_model).
    const bool user_model = root.has("model") && root.required("model").is_map();
    const bool workload_ok =
        !(unknown_keys && !root.has("workload") && !user_model) && errors.attempt([&] {
            if (!user_model) {
                s.workload = canonical_workload(root.required("workload"));
                return;
            }
            if (root.has("workload")) root.required("workload").fail("give workload or a user model's model:, not both");
            const UserModel model = load_user_model(root.required("model"));
            s.workload = model.workload->name;
            s.query.custom_workload = model.workload;
            s.query.batch = {BatchRule::fixed_global, model.global_batch};
        });
    errors.attempt([&] { if (auto energy = root.optional("energy")) read_energy_section(*energy, s.energy); });
    // Hypothetical GPUs, searched where `systems` names them (as in a sweep).
    const bool systems_ok = errors.attempt([&] {
    if (auto variants = root.optional("gpu_variants")) s.query.variants = read_variants(*variants);
    if (auto systems = root.optional("systems")) {
        for (const ConfigNode& item : systems->is_scalar() ? std::vector<ConfigNode>{*systems} : systems->items())
            push_unique(s.query.systems, canonical_system(item, item.as_string(), s.query.variants), item);
        if (s.query.systems.empty()) systems->fail("must list at least one system (or leave it out: the default systems)");
    } else {
        s.query.systems = {"dgx-h100", "dgx-h200", "dgx-b200"};
    }
    if (auto variants = root.optional("gpu_variants"))
        require_variants_used(*variants, s.query.variants, s.query.systems, root.has("systems"));
    });
    const std::vector<std::string> bases = systems_ok ? base_systems_of(s.query.systems, s.query.variants) : std::vector<std::string>{};
    // A price is for a system the plan searches, or a variant of it under its own name.
    const bool cost_ok = systems_ok && errors.attempt([&] {
    if (auto cost = root.optional("cost"))
        read_cost_section(*cost, s.cost, bases, "this plan does not search", variant_names(s.query.variants));
    });
    // Node power applies to node-rented systems; on rack-scale systems only it would change nothing.
    if (systems_ok) errors.attempt([&] {
    if (auto energy = root.optional("energy"))
        if (auto node_power = energy->optional("node_power");
            node_power && std::all_of(bases.begin(), bases.end(), [](const std::string& b) { return resolve_system(b).rack_scale; }))
            node_power->fail("no system searched is rented by the node; a rack-scale system's non-GPU power is its "
                             "rack's published figure less its GPUs' TDP (models/data/prices.yaml power.rack)");
    });
    // One fabric and one batch rule for every candidate (a sweep compares several).
    errors.attempt([&] {
    if (auto network = root.optional("network")) {
        if (network->is_sequence()) network->fail("a plan runs on one network option; compare several with a sweep");
        s.query.network = read_network(*network);
        if (s.query.network.sharp) {
            if (root.has("sharp")) network->fail("set SHARP in one place: 'sharp' or the network option's 'sharp'");
            s.query.sharp = s.query.network.sharp;
            s.query.network.sharp.reset();
        }
    }
    });
    errors.attempt([&] {
        if (auto batch = root.optional("batch")) {
            if (batch->is_sequence()) batch->fail("a plan uses one batch rule; compare several with a sweep");
            if (user_model) batch->fail("a user model trains at its model.global_batch");
            s.query.batch = read_batch(*batch);
        }
    });
    errors.attempt([&] { if (auto routing = root.optional("routing")) s.query.routing = read_fabric_routing(*routing); });
    if (systems_ok)
        errors.attempt([&] {
            if (auto reserve = root.optional("memory_reserve"))
                s.query.memory_reserve_bytes = read_memory_reserve(*reserve, s.query.systems, s.query.variants);
        });
    errors.attempt([&] {
        if (auto r = root.optional("reliability")) s.query.reliability = reliability::read_reliability_request(*r);
    });
    errors.attempt([&] { if (auto sharp = root.optional("sharp")) s.query.sharp = sharp->as_bool(); });
    // The constraints: each read on its own; whether there is one at all is judged when all of them read.
    bool constraints_ok = errors.attempt([&] {
        if (auto x = root.optional("deadline")) {
            s.query.constraints.deadline_minutes = x->as_time_seconds() / 60.0;
            if (*s.query.constraints.deadline_minutes <= 0) x->fail("must be positive");
        }
    });
    constraints_ok = errors.attempt([&] {
        if (auto x = root.optional("budget_gpu_hours")) s.query.constraints.budget_gpu_hours = x->as_double(1e-6, 1e12);
    }) && constraints_ok;
    constraints_ok = cost_ok && errors.attempt([&] {
    if (auto x = root.optional("budget")) {
        const Money m = x->feeding([&] { return parse_money(x->as_string()); });
        if (!m.currency.empty() && m.currency != s.cost.currency)
            x->fail("budget is in " + m.currency + " but prices are in " + s.cost.currency + " (set cost.currency)");
        s.query.constraints.budget_money = m.amount;
    }
    }) && constraints_ok;
    if (constraints_ok && !unknown_keys) errors.attempt([&] {
    if (!s.query.constraints.deadline_minutes && !s.query.constraints.budget_gpu_hours && !s.query.constraints.budget_money)
        root.fail("a plan needs 'deadline', 'budget_gpu_hours' or 'budget'");
    });
    errors.attempt([&] {
        if (auto x = root.optional("confidence"))
            s.query.constraints.confidence = parse_confidence(x->as_choice({"p50", "p90"}));
    });
    errors.attempt([&] {
        if (auto x = root.optional("margin"))
            s.query.constraints.margin = x->feeding([&] { return parse_margin(x->as_string()); });
    });
    s.query.objective = s.query.constraints.deadline_minutes ? Objective::gpus : Objective::time;
    errors.attempt([&] {
        if (auto x = root.optional("minimise"))
            s.query.objective = parse_objective(x->as_choice({"gpus", "time", "cost", "gpu-hours", "energy"}));
    });
    // The search range, the topology file and what needs them (skipped when the systems or the range failed).
    int min_gpus = 8, max_gpus = 8192;
    const bool range_ok = systems_ok && errors.attempt([&] {
    if (auto gpus = root.optional("gpus")) {
        gpus->check_keys({"from", "to"});
        if (auto x = gpus->optional("from")) min_gpus = read_gpu_count(*x);
        if (auto x = gpus->optional("to")) max_gpus = read_gpu_count(*x);
        if (max_gpus < min_gpus) gpus->fail("'to' is below 'from'");
    }
    s.query.gpu_counts = plan_gpu_grid(min_gpus, max_gpus);
    if (auto cluster = root.optional("cluster")) {
        // A YAML topology: every candidate runs its GPU count on it, so the search is over systems only.
        if (auto gpus = root.optional("gpus")) gpus->fail("a plan on cluster.topology_file runs the file's GPU count only");
        SweepSpec on_file;
        on_file.networks = {s.query.network};
        read_sweep_cluster(*cluster, root, on_file);
        s.query.topology_file = on_file.topology_file;
        s.query.gpu_counts = on_file.gpu_counts;
        s.query.refine = false;
        max_gpus = s.query.gpu_counts.back();
    }
    });
    if (range_ok) errors.attempt([&] {
    if (s.query.sharp.value_or(false)) {
        const std::string nowhere = sharp_unavailable_everywhere(bases, max_gpus);
        if (!nowhere.empty()) root.required("sharp").fail(nowhere + "; no configuration searched spans two domains (raise gpus.to)");
    }
    // What every candidate rents: each system's own unit, or `allocation: rack|tray` where every system
    // searched has that unit (a DGX is rented by the node only).
    s.query.allocation = read_allocation(root, bases);
    s.query.unit_of = [variants = s.query.variants, unit = s.query.allocation](const std::string& system) {
        return plan_unit(with_allocation_where_applicable(resolve_system(base_system_of(system, variants)), unit));
    };
    // The range must fit some system's fabric; where the network option asks for a radix, a radix that cannot hold
    // it is named at its key. A NIC, oversubscription or shape where no candidate leaves its NVLink domain would
    // change nothing, as the CLI's plan refuses it.
    const auto gpus = root.optional("gpus");
    const auto network = root.optional("network");
    const bool one_network = network && !network->is_sequence();
    if (one_network && s.query.network.shape.sets_capacity())
        network->feeding_keys(gpus ? *gpus : *network, [&] { check_plan_range(s.query); });
    else if (gpus)
        gpus->feeding([&] { check_plan_range(s.query); });
    if (one_network && !s.query.gpu_counts.empty()) {
        std::vector<System> systems;
        for (const std::string& base : bases) systems.push_back(resolve_system(base));
        if (network_option_unused(s.query.network, systems, s.query.gpu_counts.back()))
            network->fail("the network option sets a NIC, oversubscription or fabric shape, but no configuration "
                          "searched spans two NVLink domains (largest " + std::to_string(s.query.gpu_counts.back()) +
                          " GPUs): it would change nothing (raise gpus.to)");
    }
    });
    errors.attempt([&] { s.format = read_format(root); });
    errors.attempt([&] { s.model = user_model ? ComputeModel::operator_level : read_compute_model(root); });
    errors.attempt([&] {
    if (auto layout = root.optional("layout")) {
        s.query.layout = read_layout(*layout, s.model);
        if (user_model && s.query.layout.mode == LayoutMode::published)
            layout->fail("a user model has no published layout; use fastest or pins (tp: 8, pp: 4, ...)");
        // A pin no system searched can take at any count is bad input at the key, as `ttsim plan --layout` says
        // (a topology file sets its own NVLink domains: its points are left to the search).
        if (workload_ok && systems_ok && s.query.layout.mode == LayoutMode::pinned && !s.query.topology_file) {
            std::vector<System> searched;
            for (const std::string& base : bases) searched.push_back(resolve_system(base));
            layout->feeding([&] {
                check_pins_apply_somewhere(trained_workload(s.query.custom_workload, s.workload),
                                           searched, s.query.layout.pins);
                return 0;
            });
        }
    }
    });
    errors.throw_if_any();
    return s;
}

}  // namespace ttsim::planning
