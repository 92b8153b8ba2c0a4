// Input-time checks of `ttsim collective` and `scenario: collective` (tools/cli): an algorithm or protocol that
// cannot run is refused while the input is read, naming the key or flag, and that check must agree exactly with
// what the collective simulator itself refuses at run time; preset problems name `system` or `gpus`.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "models/collectives/collective_simulator.hpp"
#include "models/collectives/group_layout.hpp"
#include "models/collectives/tuner.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/collective_sweep.hpp"
#include "topologies/presets.hpp"
#include "topologies/yaml_topology.hpp"

using namespace ttsim;
using namespace ttsim::cli;

namespace {

constexpr CollectiveOp kOps[] = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                                 CollectiveOp::Broadcast, CollectiveOp::AllToAll};
constexpr CollectiveAlgorithm kAlgorithms[] = {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring,
                                               CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical,
                                               CollectiveAlgorithm::Nvls, CollectiveAlgorithm::Sharp,
                                               CollectiveAlgorithm::Direct};
constexpr NcclProtocol kProtocols[] = {NcclProtocol::Auto, NcclProtocol::LL, NcclProtocol::LL128,
                                       NcclProtocol::Simple};

const std::string kTopologyFiles = std::string(TTSIM_SOURCE_DIR) + "/topologies/examples/";

CollectiveSweepSpec spec_for(const std::string& system, int gpus, bool sharp) {
    CollectiveSweepSpec spec;
    spec.cluster.system = system;
    spec.cluster.gpus = gpus;
    spec.cluster.sharp = sharp;
    return spec;
}

}  // namespace

TEST_CASE("input-time applicability agrees with what the simulator refuses", "[cli][collective]") {
    // One node, a partial node, several uniform nodes, one NVL72 rack, and a rack plus a tray (non-uniform);
    // then topology files: two DGX on InfiniBand, and PCIe servers on an Ethernet switch fabric (no SHARP, which
    // the simulator itself must refuse: the rule is the model's, not the CLI's).
    const std::pair<std::string, int> clusters[] = {{"dgx-h100", 1},     {"dgx-h100", 4},      {"dgx-h100", 8},
                                                    {"dgx-h100", 24},    {"gb200-nvl72", 72}, {"gb200-nvl72", 76},
                                                    {kTopologyFiles + "two_dgx_h100.yaml", 0},
                                                    {kTopologyFiles + "pcie_servers_ethernet.yaml", 0}};
    int refused = 0, accepted = 0;
    for (const auto& [system, gpus] : clusters) {
        const bool file = gpus == 0;
        const Topology topology = file ? load_topology_file(system) : build_preset(system, gpus);
        for (const bool sharp : {true, false}) {
            CollectiveOptions options;
            options.sharp_enabled = sharp;
            CollectiveSimulator simulator(topology, options);
            for (const CollectiveOp op : kOps)
                for (const CollectiveAlgorithm algorithm : kAlgorithms)
                    for (const NcclProtocol protocol : kProtocols) {
                        CollectiveSweepSpec spec = spec_for(system, gpus, sharp);
                        if (file) spec.cluster.topology_file = system;
                        spec.op = op;
                        spec.algorithm = algorithm;
                        spec.protocol = protocol;
                        CollectiveRequest request;
                        request.op = op;
                        request.bytes = 1 << 20;
                        request.algorithm = algorithm;
                        request.protocol = protocol;
                        bool simulator_refuses = false;
                        try {
                            (void)simulator.run(request);
                        } catch (const InputError&) {
                            simulator_refuses = true;
                        }
                        const auto problem = applicability_problem(spec, "--sharp on");
                        INFO(system << " x" << gpus << " sharp " << sharp << ": " << to_string(op) << " "
                                    << to_string(algorithm) << " " << to_string(protocol)
                                    << (problem ? " -> " + problem->message : std::string(" -> ok")));
                        // One exception, on purpose: with a single GPU nothing is sent, so the simulator returns
                        // before evaluating the protocol; the input check refuses the combination regardless.
                        const bool lone_gpu_protocol = gpus == 1 && problem && problem->field == "protocol" &&
                                                       algorithm != CollectiveAlgorithm::Auto;
                        REQUIRE(problem.has_value() == (simulator_refuses || lone_gpu_protocol));
                        if (problem) {
                            // The field is one the spec sets explicitly, so a reader can point at its key.
                            CHECK(((problem->field == "algorithm" && algorithm != CollectiveAlgorithm::Auto) ||
                                   (problem->field == "protocol" && protocol != NcclProtocol::Auto)));
                            ++refused;
                        } else {
                            ++accepted;
                        }
                    }
        }
    }
    CHECK(refused > 100);   // both outcomes are exercised
    CHECK(accepted > 100);
}

TEST_CASE("the small stand-in for a big preset gives the big preset's answers", "[cli][collective]") {
    // Beyond two NVLink domains the check uses a preset of at most two; compare with the real layout.
    const std::pair<std::string, int> clusters[] = {{"dgx-h100", 1024}, {"dgx-b200", 96},
                                                    {"gb200-nvl72", 220}, {"gb200-nvl72", 288}};
    for (const auto& [system, gpus] : clusters) {
        const Topology topology = build_preset(system, gpus);
        const GroupLayout layout(topology, {});
        for (const bool sharp : {true, false})
            for (const CollectiveOp op : kOps)
                for (const CollectiveAlgorithm algorithm : kAlgorithms) {
                    CollectiveSweepSpec spec = spec_for(system, gpus, sharp);
                    spec.op = op;
                    spec.algorithm = algorithm;
                    INFO(system << " x" << gpus << " sharp " << sharp << ": " << to_string(op) << " "
                                << to_string(algorithm));
                    CHECK(applicability_problem(spec, "--sharp on").has_value() ==
                          !inapplicable_reason(algorithm, op, layout, sharp).empty());
                }
    }
}

TEST_CASE("a scenario's inapplicable algorithm or protocol names its line and key", "[cli][collective]") {
    auto error_of = [](const std::string& text) -> InputError {
        try {
            (void)read_collective_scenario(ConfigNode::load_string(text, "s.yaml"));
        } catch (const InputError& e) {
            return e;
        }
        FAIL("no InputError for:\n" << text);
        throw std::logic_error("unreachable");
    };
    const std::string head = "scenario: collective\ncluster: {system: dgx-h100, gpus: 16, sharp: false}\ncollective:\n";
    InputError e = error_of(head + "  op: alltoall\n  algorithm: nvls\n  min_size: 1MiB\n  max_size: 2MiB\n");
    CHECK(e.key() == "collective.algorithm");
    CHECK(e.where().line == 5);
    CHECK_THAT(e.message(), Catch::Contains("NVLS runs all-reduce"));
    e = error_of(head + "  op: allreduce\n  algorithm: sharp\n  min_size: 1MiB\n  max_size: 2MiB\n");
    CHECK(e.key() == "collective.algorithm");
    CHECK_THAT(e.message(), Catch::Contains("SHARP off") &&
                                Catch::Contains("SHARP in-network reduction needs an InfiniBand switch fabric with "
                                                "SHARP enabled") &&
                                Catch::EndsWith("turn it on with cluster.sharp: true"));
    e = error_of(head + "  op: allreduce\n  algorithm: hierarchical\n  protocol: LL\n  min_size: 1MiB\n  max_size: 2MiB\n");
    CHECK(e.key() == "collective.protocol");
    CHECK(e.where().line == 6);
    e = error_of(head + "  op: alltoall\n  protocol: LL128\n  min_size: 1MiB\n  max_size: 2MiB\n");
    CHECK(e.key() == "collective.protocol");
    CHECK_THAT(e.message(), Catch::Contains("no algorithm runs alltoall with protocol LL128"));
    // Applicable requests read fine.
    CHECK_NOTHROW(read_collective_scenario(ConfigNode::load_string(
        head + "  op: allreduce\n  algorithm: ring\n  protocol: LL\n  min_size: 1MiB\n  max_size: 2MiB\n", "s.yaml")));
}

TEST_CASE("preset cluster problems name the system or the GPU count", "[cli]") {
    std::string message;
    auto field_of = [&](const std::string& system, std::int64_t gpus) {
        std::string field = "(none)";
        message.clear();
        try {
            const int count = check_preset_cluster(system, gpus, {});
            CHECK(count == gpus);
        } catch (const InputError& e) {
            field = e.field() ? std::string(to_string(*e.field())) : "no field: " + e.key();
            message = e.message();
        }
        return field;
    };
    CHECK(field_of("dgx-h100", 16) == "(none)");
    CHECK(field_of("dgx-h100", 12) == "gpus");
    CHECK(field_of("gb200-nvl72", 6) == "gpus");
    CHECK(field_of("dgx-a100", 8) == "system");
    CHECK(field_of("dgx-h100", 65'544) == "gpus");
    CHECK_THAT(message, Catch::Contains("up to 65536 GPUs (three tiers of 64-port switches)"));
    // Beyond the largest preset (262,144 GPUs) the resource guard refuses first, at the same count.
    CHECK(field_of("h100-100k", 262'152) == "gpus");
    CHECK_THAT(message, Catch::Contains("262152 GPUs exceed the simulation limit of 262144 GPUs"));
    // An absurd count is refused by the resource guard, with its estimate, before any preset rule.
    CHECK(field_of("dgx-a100", 100'000'000) == "gpus");
    CHECK_THAT(message, Catch::Contains("100000000 GPUs exceed the simulation limit") &&
                            Catch::Contains("estimated memory") && Catch::Contains("TTSIM_MAX_GPUS"));
}

TEST_CASE("SHARP refusals say how to turn it on only when that is all it takes", "[cli][collective]") {
    CollectiveSweepSpec spec = spec_for("dgx-h100", 16, false);
    spec.algorithm = CollectiveAlgorithm::Sharp;
    auto problem = applicability_problem(spec, "--sharp on");
    REQUIRE(problem);
    CHECK(problem->field == "algorithm");
    CHECK_THAT(problem->message, Catch::EndsWith("(SHARP is off); turn it on with --sharp on"));
    CHECK(problem->message.find("::") == std::string::npos);
    spec.cluster.sharp = true;
    CHECK_FALSE(applicability_problem(spec, "--sharp on"));
    // One node: switching SHARP on would not help, so the flag is not suggested.
    spec = spec_for("dgx-h100", 8, false);
    spec.algorithm = CollectiveAlgorithm::Sharp;
    problem = applicability_problem(spec, "--sharp on");
    REQUIRE(problem);
    CHECK_THAT(problem->message, Catch::Contains("at least two nodes") && !Catch::Contains("--sharp"));
    // An Ethernet fabric, SHARP on: refused by the model's rule, without a misleading suggestion.
    spec = spec_for("dgx-h100", 8, true);
    spec.cluster.topology_file = kTopologyFiles + "pcie_servers_ethernet.yaml";
    spec.algorithm = CollectiveAlgorithm::Sharp;
    problem = applicability_problem(spec, "--sharp on");
    REQUIRE(problem);
    CHECK_THAT(problem->message, Catch::Contains("no SHARP (no InfiniBand switches)") &&
                                     Catch::Contains("needs an InfiniBand switch fabric with SHARP enabled") &&
                                     !Catch::Contains("--sharp"));
}

TEST_CASE("a scenario's cluster takes routing: static or adaptive, strictly", "[cli][routing]") {
    auto cluster_of = [](const std::string& text) {
        return read_cluster(ConfigNode::load_string(text, "c.yaml").required("cluster"));
    };
    CHECK(cluster_of("cluster: {system: dgx-h100, gpus: 16}\n").fabric.routing == FabricRouting::Adaptive);
    const ClusterSpec fixed = cluster_of("cluster:\n  system: dgx-h100\n  gpus: 16\n  routing: static\n");
    CHECK(fixed.fabric.routing == FabricRouting::StaticEcmp);
    CHECK(fixed.build().routing() == FabricRouting::StaticEcmp);
    CHECK_THAT(fixed.describe(true), Catch::Contains("static ECMP routing"));
    CHECK(cluster_of("cluster: {system: dgx-h100, gpus: 16, routing: adaptive}\n").build().routing() ==
          FabricRouting::Adaptive);
    auto error_of = [&](const std::string& text) -> InputError {
        try {
            (void)cluster_of(text);
        } catch (const InputError& e) {
            return e;
        }
        FAIL("no InputError for:\n" << text);
        throw std::logic_error("unreachable");
    };
    InputError e = error_of("cluster:\n  system: dgx-h100\n  gpus: 16\n  routing: ecmp\n");
    CHECK(e.key() == "cluster.routing");
    CHECK(e.where().file == "c.yaml");
    CHECK(e.where().line == 4);
    CHECK_THAT(e.message(), Catch::Contains("'ecmp' is not one of: adaptive static"));
    e = error_of("cluster:\n  system: dgx-h100\n  gpus: 16\n  routing: [static]\n");
    CHECK(e.key() == "cluster.routing");
    e = error_of("cluster:\n  topology_file: " + kTopologyFiles + "two_dgx_h100.yaml\n  routing: static\n");
    CHECK(e.key() == "cluster.routing");
    CHECK(e.where().line == 3);
    CHECK_THAT(e.message(), Catch::Contains("cannot be combined with topology_file"));
}

TEST_CASE("a collective sweep polls its cancellation before each size", "[cli][collective]") {
    CollectiveSweepSpec spec = spec_for("dgx-h100", 8, true);
    spec.min_bytes = 1 << 20;
    spec.max_bytes = 16 << 20;   // 1, 2, 4, 8, 16 MiB
    const CollectiveSweepResult whole = run_collective_sweep(spec);
    CHECK(whole.rows.size() == 5);
    CHECK(whole.sizes_requested == 5);
    CHECK_FALSE(whole.interrupted);
    int polls = 0;
    const CollectiveSweepResult part = run_collective_sweep(spec, [&] { return ++polls > 2; });
    CHECK(part.interrupted);
    CHECK(part.sizes_requested == 5);
    REQUIRE(part.rows.size() == 2);
    CHECK(part.rows[1].bytes == whole.rows[1].bytes);
    CHECK(part.rows[1].result.duration == whole.rows[1].result.duration);
    // Reports say it: a comment line in the table, an "interrupted" object in the JSON, rows only in the CSV.
    CHECK_THAT(format_sweep_table(spec, part), Catch::Contains("interrupted: 2 of 5 sizes finished"));
    CHECK_THAT(format_sweep_json(spec, part),
               Catch::Contains("\"interrupted\": {\n    \"sizes_finished\": 2,\n    \"sizes_requested\": 5\n  }"));
    CHECK_THAT(format_sweep_json(spec, whole), !Catch::Contains("interrupted"));
    CHECK(format_sweep_csv(part) == format_sweep_csv({{whole.rows[0], whole.rows[1]}, 5, false}));
}
