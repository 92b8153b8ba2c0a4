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

CollectiveSweepSpec spec_for(const std::string& system, int gpus, bool sharp) {
    CollectiveSweepSpec spec;
    spec.cluster.system = system;
    spec.cluster.gpus = gpus;
    spec.cluster.sharp = sharp;
    return spec;
}

}  // namespace

TEST_CASE("input-time applicability agrees with what the simulator refuses", "[cli][collective]") {
    // One node, a partial node, several uniform nodes, one NVL72 rack, and a rack plus a tray (non-uniform).
    const std::pair<std::string, int> clusters[] = {{"dgx-h100", 1},     {"dgx-h100", 4},      {"dgx-h100", 8},
                                                    {"dgx-h100", 24},    {"gb200-nvl72", 72}, {"gb200-nvl72", 76}};
    int refused = 0, accepted = 0;
    for (const auto& [system, gpus] : clusters) {
        const Topology topology = build_preset(system, gpus);
        for (const bool sharp : {true, false}) {
            CollectiveOptions options;
            options.sharp_enabled = sharp;
            CollectiveSimulator simulator(topology, options);
            for (const CollectiveOp op : kOps)
                for (const CollectiveAlgorithm algorithm : kAlgorithms)
                    for (const NcclProtocol protocol : kProtocols) {
                        CollectiveSweepSpec spec = spec_for(system, gpus, sharp);
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
                        const auto problem = applicability_problem(spec);
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
                    CHECK(applicability_problem(spec).has_value() ==
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
    CHECK_THAT(e.message(), Catch::Contains("SHARP off"));
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
    auto field_of = [](const std::string& system, int gpus) {
        ClusterSpec spec;
        spec.system = system;
        spec.gpus = gpus;
        std::string field = "(none)";
        try {
            check_preset_cluster(spec, [&](const std::string& f, const std::string& message) {
                field = f;
                throw InputError(message, {}, f);
            });
        } catch (const InputError&) {
        }
        return field;
    };
    CHECK(field_of("dgx-h100", 16) == "(none)");
    CHECK(field_of("dgx-h100", 12) == "gpus");
    CHECK(field_of("gb200-nvl72", 6) == "gpus");
    CHECK(field_of("dgx-a100", 8) == "system");
}
