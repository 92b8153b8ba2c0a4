// Library errors name a Field (sim/fields.hpp); each front end names it as its user writes it, in one table:
// flags (tools/cli/args.cpp flag_name) and scenario keys (sim/config.cpp scenario_key). These tests hold the
// flag table to the whole Field set and follow library errors from predict() to the flag the user typed, and
// from a preset cluster check to the scenario key's line.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "sim/fields.hpp"
#include "tools/cli/args.hpp"
#include "tools/cli/commands.hpp"
#include "topologies/yaml_topology.hpp"

using namespace ttsim;
using namespace ttsim::cli;

namespace {

// The InputError `ttsim <args>` throws (its what() is the line the user sees), or "no error".
std::string error_line(const CommandArgs& args) {
    std::ostringstream out;
    try {
        dispatch(args, out);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("kAllFields lists every Field once, in declaration order", "[cli][fields]") {
    for (std::size_t i = 0; i < kAllFields.size(); ++i) CHECK(static_cast<std::size_t>(kAllFields[i]) == i);
}

TEST_CASE("every Field has a flag, its own, that a command declares", "[cli][fields]") {
    std::string help;
    for (const Command& command : all_commands()) {
        std::ostringstream out;
        REQUIRE(command.run({"--help"}, out) == 0);
        help += out.str();
    }
    std::set<std::string> flags;
    for (const Field field : kAllFields) {
        const std::string flag(flag_name(field));
        INFO(to_string(field) << " -> --" << flag);
        CHECK_FALSE(flag.empty());
        CHECK(flags.insert(flag).second);   // two fields never share a flag
        // --help lists each declared option as "  --NAME PLACEHOLDER" or, for a switch, "  --NAME" alone.
        CHECK_THAT(help, Catch::Contains("\n  --" + flag + " ") || Catch::Contains("\n  --" + flag + "\n"));
    }
}

TEST_CASE("a library error from predict() reaches the user as the flag that set the field", "[cli][fields]") {
    const CommandArgs bert = {"predict", "--workload", "bert", "--system", "dgx-h100"};
    auto with = [](CommandArgs args, const std::vector<std::string>& more) {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    // Not divisible by the data-parallel size 64 of the published layout: predict() throws Field::global_batch.
    CHECK_THAT(error_line(with(bert, {"--gpus", "64", "--global-batch", "1000", "--model", "lumped"})),
               Catch::StartsWith("'--global-batch': global batch 1000 is not divisible"));
    // A batch whose convergence is unknown (far below the smallest RCP batch) is refused before any layout is
    // searched, and the batch is named.
    CHECK_THAT(error_line(with(bert, {"--gpus", "64", "--global-batch", "100", "--model", "operator"})),
               Catch::StartsWith("'--global-batch': global batch 100 is far below the smallest bert RCP batch"));
    // A batch per data-parallel rank: its own flag, for its own errors and for the convergence of the global batch
    // it makes (Field::batch_per_rank), on the published layout (lumped) and in the search (operator).
    CHECK_THAT(error_line(with(bert, {"--gpus", "64", "--global-batch", "3072", "--batch-per-rank", "48"})),
               Catch::StartsWith("'--batch-per-rank': give a global batch or a batch per data-parallel rank, not both"));
    CHECK_THAT(error_line(with(bert, {"--gpus", "64", "--batch-per-rank", "0"})), Catch::StartsWith("'--batch-per-rank'"));
    for (const char* model : {"lumped", "operator"}) {
        INFO(model);
        // 65,536 a rank is a global batch of at least 65,536 at any data-parallel size, over twice bert's largest
        // RCP batch (16,384) at every layout (8,192 a rank fits at PP 8, DP 4: a global batch of 32,768).
        CHECK_THAT(error_line(with(bert, {"--gpus", "64", "--batch-per-rank", "65536", "--model", model})),
                   Catch::StartsWith("'--batch-per-rank': "));
    }
    // Wider than the 8-GPU NVLink domain: Field::tensor_parallel.
    CHECK_THAT(error_line({"predict", "--workload", "llama2_70b_lora", "--system", "dgx-h100", "--gpus", "64",
                           "--tp", "16"}),
               Catch::StartsWith("'--tp': tensor parallelism 16 exceeds the NVLink domain"));
    // The same pin in a layout search (the operator model's default) names --tp too, as do the pins that do not
    // divide the GPUs.
    for (const char* model : {"lumped", "operator"}) {
        CHECK_THAT(error_line({"predict", "--workload", "llama2_70b_lora", "--system", "dgx-h100", "--gpus", "64",
                               "--tp", "16", "--model", model}),
                   Catch::StartsWith("'--tp': tensor parallelism 16 exceeds the NVLink domain"));
        CHECK_THAT(error_line({"predict", "--workload", "llama2_70b_lora", "--system", "dgx-h100", "--gpus", "64",
                               "--tp", "3", "--cp", "1", "--model", model}),
                   Catch::StartsWith("'--tp': 64 GPUs are not divisible by TP x CP = 3 x 1 = 3"));
    }
    // One DGX has no leaf switch: Field::oversubscription.
    CHECK_THAT(error_line(with(bert, {"--gpus", "8", "--oversubscription", "2"})),
               Catch::StartsWith("'--oversubscription': 8 GPUs fit in one dgx-h100 NVLink domain"));
    // Within one domain no NIC or switch is used: Field::nic, Field::routing (SHARP below).
    CHECK_THAT(error_line(with(bert, {"--gpus", "8", "--nic", "xdr"})),
               Catch::StartsWith("'--nic': 8 GPUs fit in one dgx-h100 NVLink domain (up to 8 GPUs), which uses no NIC"));
    CHECK_THAT(error_line(with(bert, {"--gpus", "8", "--routing", "static"})),
               Catch::StartsWith("'--routing': 8 GPUs fit in one dgx-h100 NVLink domain"));
    CHECK(error_line(with(bert, {"--gpus", "16", "--nic", "xdr", "--routing", "static"})) == "no error");
    // What runs anyway (the system's own NIC, the default routing) is no option that cannot apply.
    CHECK(error_line(with(bert, {"--gpus", "8", "--nic", "ndr", "--routing", "adaptive"})) == "no error");
    // Within one domain SHARP has no switch fabric: Field::sharp.
    CHECK_THAT(error_line(with(bert, {"--gpus", "8", "--sharp", "on"})), Catch::StartsWith("'--sharp': 8 GPUs fit"));
    // Not a whole number of nodes: Field::gpus, from the system's own check.
    CHECK_THAT(error_line(with(bert, {"--gpus", "12"})), Catch::StartsWith("'--gpus': 12 GPUs is not a whole number"));
    // A topology file describes its own NICs: Field::nic, from with_fabric().
    CHECK_THAT(error_line(with(bert, {"--topology", "topologies/examples/two_dgx_h100.yaml", "--nic", "xdr"})),
               Catch::StartsWith("'--nic': a topology file describes its own NICs"));
    CHECK_THAT(error_line({"predict", "--workload", "gpt5", "--system", "dgx-h100", "--gpus", "8"}),
               Catch::StartsWith("'--workload': unknown workload 'gpt5'"));
}

TEST_CASE("a preset cluster error points at the scenario key that holds its field", "[cli][fields]") {
    // One library call fed from several keys (build_preset): the unknown system is at `system`, the count at `gpus`.
    auto error_of = [](const std::string& preset) {
        try {
            (void)load_topology(ConfigNode::load_string("preset:\n" + preset, "t.yaml"));
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of("  system: dgx-a100\n  gpus: 8\n"),
               Catch::StartsWith("t.yaml:2:11: 'preset.system': unknown system 'dgx-a100'"));
    CHECK_THAT(error_of("  system: dgx-h100\n  gpus: 12\n"), Catch::StartsWith("t.yaml:3:9: 'preset.gpus': dgx-h100 takes"));
}
