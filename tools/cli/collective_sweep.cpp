#include "tools/cli/collective_sweep.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/nccl_params.hpp"
#include "models/collectives/tuner.hpp"
#include "sim/units.hpp"
#include "tools/cli/collective_table.hpp"

namespace ttsim::cli {

// Sizes double from min while they do not exceed max, as nccl-tests' -f 2 does: max itself is included only when
// it is min x 2^k (1MiB..3MiB gives 1 and 2 MiB; the table says the maximum was not reached).
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = min_bytes; s <= max_bytes; s *= 2) {
        sizes.push_back(s);
        if (s > max_bytes / 2) break;
    }
    return sizes;
}

std::string one_gpu_message(int gpus) {
    return "a collective needs at least " + std::to_string(kMinCollectiveGpus) + " GPUs (got " + std::to_string(gpus) +
           "): with one GPU there is nothing to communicate";
}

namespace {

// The topology whose whole-cluster group has the same applicability facts as the spec's cluster. For a
// preset these facts are: one NVLink domain or several, the same number of GPUs in every domain or not, and a
// switch fabric or none (GroupLayout: single_nvlink_domain, island_count >= 2, uniform, infiniband_fabric); a preset
// of at most two domains (d + d, or d + the remainder) has the same ones and builds in well under a
// millisecond, where the real cluster may be 65,536 GPUs. tests/unit/test_cli_applicability.cpp checks that
// the proxy and the real preset give the same answers.
Topology applicability_topology(const ClusterSpec& cluster) {
    if (cluster.topology_file) return cluster.build();
    int per_domain = 0;
    for (const PresetInfo& info : preset_systems())
        if (info.name == cluster.system) per_domain = info.gpus_per_nvlink_domain;
    const int gpus = cluster.gpus;
    if (per_domain == 0 || gpus <= per_domain) return build_preset(cluster.system, gpus, cluster.fabric);
    const int proxy = per_domain + (gpus % per_domain == 0 ? per_domain : gpus % per_domain);
    return build_preset(cluster.system, proxy, cluster.fabric);
}

std::string op_text(CollectiveOp op) { return std::string(to_string(op)); }

// The whole cluster's GPUs sit on InfiniBand switches, where SHARP can run (the model's rule, tuner.hpp).
bool infiniband_switches(const Topology& topology) { return GroupLayout(topology, {}).infiniband_fabric(); }

}  // namespace

std::string describe_collective_cluster(const ClusterSpec& cluster) {
    return cluster.describe(infiniband_switches(applicability_topology(cluster)));
}

std::optional<CollectiveSpecProblem> applicability_problem(const CollectiveSweepSpec& spec, std::string_view sharp_on) {
    const bool explicit_algorithm = spec.algorithm != CollectiveAlgorithm::Auto;
    const bool explicit_protocol = spec.protocol != NcclProtocol::Auto;
    if (!explicit_algorithm && !explicit_protocol) return std::nullopt;   // `auto` always finds an algorithm
    const Topology topology = applicability_topology(spec.cluster);
    const GroupLayout layout(topology, {});
    const bool sharp = spec.cluster.sharp;
    const std::string on = " on " + spec.cluster.describe(layout.infiniband_fabric());
    if (explicit_algorithm) {
        std::string reason = inapplicable_reason(spec.algorithm, spec.op, layout, sharp);
        // Turning SHARP on is all it would take: say how, in the input's own words.
        if (!reason.empty() && !sharp && inapplicable_reason(spec.algorithm, spec.op, layout, true).empty())
            reason += "; turn it on with " + std::string(sharp_on);
        if (!reason.empty())
            return CollectiveSpecProblem{"algorithm", "'" + std::string(to_string(spec.algorithm)) + "' cannot run " +
                                                          op_text(spec.op) + on + ": " + reason};
    }
    if (!explicit_protocol) return std::nullopt;
    // A protocol runs on an algorithm when the model gives it a bandwidth (choose_protocol's test).
    const NcclParams params = nccl_params(gpu_generation_of(topology));
    const LatencyShape shape{spec.op, layout.size(), layout.island_count(), layout.max_per_island()};
    auto runs = [&](CollectiveAlgorithm a) { return protocol_busbw(params, a, spec.protocol, shape, 1.0, 1) > 0.0; };
    const std::string protocol(to_string(spec.protocol));
    if (explicit_algorithm) {
        if (!runs(spec.algorithm))
            return CollectiveSpecProblem{"protocol", protocol + " does not run on algorithm '" +
                                                         std::string(to_string(spec.algorithm)) + "' (it runs Simple only)"};
        return std::nullopt;
    }
    for (const CollectiveAlgorithm a : candidate_algorithms(spec.op, layout, sharp))
        if (runs(a)) return std::nullopt;
    return CollectiveSpecProblem{"protocol", "no algorithm runs " + op_text(spec.op) + " with protocol " + protocol + on};
}

CollectiveSweepResult run_collective_sweep(const CollectiveSweepSpec& spec, const std::function<bool()>& cancelled,
                                           const CollectiveRowCallback& on_row) {
    if (spec.min_bytes == 0) throw InputError("minimum size must be at least 1B", {}, "--min-size");
    if (spec.max_bytes < spec.min_bytes) throw InputError("maximum size is below the minimum size", {}, "--max-size");
    const Topology topology = spec.cluster.build();
    if (topology.gpu_count() < 2)   // reached only through a topology file; flags and presets check earlier
        throw InputError(one_gpu_message(topology.gpu_count()) + " in topology " + *spec.cluster.topology_file, {},
                         "--topology");
    CollectiveOptions options;
    options.sharp_enabled = spec.cluster.sharp;   // the model refuses SHARP where the fabric cannot run it
    CollectiveSimulator simulator(topology, options);
    const std::vector<std::uint64_t> sizes = sweep_sizes(spec.min_bytes, spec.max_bytes);
    CollectiveSweepResult result;
    result.sizes_requested = sizes.size();
    for (std::uint64_t bytes : sizes) {
        if (cancelled && cancelled()) {
            result.interrupted = true;
            break;
        }
        CollectiveRequest request;
        request.op = spec.op;
        request.bytes = bytes;
        request.algorithm = spec.algorithm;
        request.protocol = spec.protocol;
        result.rows.push_back({bytes, simulator.run(request)});
        if (on_row) on_row(result.rows.back(), result.rows.size(), sizes.size());
    }
    return result;
}

std::string format_sweep_table(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result) {
    std::string out = format_collective_table_header(spec);
    for (const CollectiveSweepRow& row : result.rows) out += format_collective_table_row(spec, row);
    return out + format_collective_table_footer(spec, result);
}

std::string format_sweep_csv_header() {
    return "bytes,time_us,algbw_gbps,busbw_gbps,algo,protocol,lower_bound_us,max_link_utilisation\n";
}

std::string format_sweep_csv_row(const CollectiveSweepRow& row) {
    const auto& r = row.result;
    return fmt::format("{},{:.3f},{:.3f},{:.3f},{},{},{:.3f},{:.4f}\n", row.bytes, r.duration.microseconds_f(),
                       r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9, to_string(r.algorithm),
                       to_string(r.protocol), r.lower_bound.microseconds_f(), r.max_link_utilisation);
}

std::string format_sweep_csv(const CollectiveSweepResult& result) {
    std::string out = format_sweep_csv_header();
    for (const CollectiveSweepRow& row : result.rows) out += format_sweep_csv_row(row);
    return out;
}

int collective_planes(const CollectiveSweepSpec& spec) {
    return spec.cluster.topology_file ? 1 : spec.cluster.fabric.planes;
}

std::string format_sweep_json(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result) {
    nlohmann::ordered_json doc;
    doc["schema"] = "ttsim.collective/1";
    if (!spec.name.empty()) doc["name"] = spec.name;
    doc["cluster"] = describe_collective_cluster(spec.cluster);
    doc["op"] = std::string(to_string(spec.op));
    doc["algorithm_requested"] = std::string(to_string(spec.algorithm));
    // nccl-tests' columns (collective_table.hpp): the type fixes `count` only; in-place equals out-of-place.
    doc["type"] = kNcclTestsType;
    doc["redop"] = nccl_tests_redop(spec.op);
    doc["root"] = nccl_tests_root(spec.op);
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const auto& row : result.rows) {
        const auto& r = row.result;
        nlohmann::ordered_json entry;
        entry["bytes"] = row.bytes;
        entry["count"] = nccl_tests_count(spec.op, row.bytes, r.ranks);
        entry["time_us"] = r.duration.microseconds_f();
        entry["algbw_gbps"] = r.algbw_bytes_per_s / 1e9;
        entry["busbw_gbps"] = r.busbw_bytes_per_s / 1e9;
        entry["algo"] = std::string(to_string(r.algorithm));
        entry["protocol"] = std::string(to_string(r.protocol));
        entry["latency_us"] = r.latency.microseconds_f();
        entry["lower_bound_us"] = r.lower_bound.microseconds_f();
        entry["max_link_utilisation"] = r.max_link_utilisation;
        entry["busiest_link"] = r.busiest_link;
        // The scale-out fabric plane by plane (collective.hpp PlaneLoad): one entry per plane, none where the
        // group crosses no fabric link.
        nlohmann::ordered_json planes = nlohmann::ordered_json::array();
        if (!r.busiest_fabric_link.empty())
            for (const PlaneLoad& plane : plane_loads(r, collective_planes(spec)))
                planes.push_back({{"plane", plane.plane}, {"busiest_link", plane.busiest_link},
                                  {"max_link_utilisation", plane.utilisation}, {"nic_bytes_sent", plane.nic_bytes_sent}});
        entry["planes"] = planes;
        entry["fingerprint"] = r.fingerprint;
        results.push_back(entry);
    }
    doc["results"] = results;
    // nccl-tests' "# Avg bus bandwidth": the mean busbw over the sizes (null when none finished).
    doc["avg_busbw_gbps"] = result.rows.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(average_busbw_gbps(result));
    if (result.interrupted)
        doc["interrupted"] = {{"sizes_finished", result.rows.size()}, {"sizes_requested", result.sizes_requested}};
    return doc.dump(2) + "\n";
}

std::string format_sweep(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result) {
    if (spec.format == "csv") return format_sweep_csv(result);
    if (spec.format == "json") return format_sweep_json(spec, result);
    return format_sweep_table(spec, result);
}

void read_collective_section(const ConfigNode& node, CollectiveSweepSpec& spec) {
    node.check_keys({"op", "algorithm", "protocol", "min_size", "max_size"});
    auto parse_with = [](const ConfigNode& value, auto parse) {
        return value.feeding([&] { return parse(value.as_string()); });
    };
    spec.op = parse_with(node.required("op"), [](const std::string& s) { return parse_collective_op(s); });
    if (auto algorithm = node.optional("algorithm"))
        spec.algorithm = parse_with(*algorithm, [](const std::string& s) { return parse_collective_algorithm(s); });
    if (auto protocol = node.optional("protocol"))
        spec.protocol = parse_with(*protocol, [](const std::string& s) { return parse_nccl_protocol(s); });
    const ConfigNode min_size = node.required("min_size");
    const ConfigNode max_size = node.required("max_size");
    spec.min_bytes = min_size.as_bytes();
    spec.max_bytes = max_size.as_bytes();
    if (spec.min_bytes == 0) min_size.fail("must be at least 1B");
    if (spec.max_bytes < spec.min_bytes) max_size.fail("is below min_size");
    if (spec.max_bytes > (1ULL << 40)) max_size.fail("is above 1TiB, beyond any collective buffer");
}

CollectiveSweepSpec read_collective_scenario(const ConfigNode& root) {
    root.check_keys({"scenario", "name", "description", "cluster", "collective", "output"});
    CollectiveSweepSpec spec;
    if (auto name = root.optional("name")) spec.name = name->as_string();
    if (auto description = root.optional("description")) (void)description->as_string();
    spec.cluster = read_cluster(root.required("cluster"));
    if (!spec.cluster.topology_file && spec.cluster.gpus < kMinCollectiveGpus)
        root.required("cluster").required("gpus").fail(one_gpu_message(spec.cluster.gpus));
    const ConfigNode collective = root.required("collective");
    read_collective_section(collective, spec);
    if (auto output = root.optional("output")) {
        output->check_keys({"format"});
        if (auto format = output->optional("format")) spec.format = format->as_choice({"table", "csv", "json"});
    }
    if (const auto problem = applicability_problem(spec, "cluster.sharp: true"))
        collective.required(problem->field).fail(problem->message);
    return spec;
}

}  // namespace ttsim::cli
