// An nccl-tests-like sweep: one collective over message sizes doubling from min to max, on one cluster.
// Shared by `ttsim collective` (flags) and `ttsim run` (a `scenario: collective` file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collectives/collective.hpp"
#include "tools/cli/cluster_spec.hpp"

namespace ttsim::cli {

struct CollectiveSweepSpec {
    std::string name;                  // scenario name, or empty
    ClusterSpec cluster;
    CollectiveOp op = CollectiveOp::AllReduce;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
    NcclProtocol protocol = NcclProtocol::Auto;
    std::uint64_t min_bytes = 1ULL << 20;
    std::uint64_t max_bytes = 8ULL << 30;
    std::string format = "table";      // table | csv | json
};

struct CollectiveSweepRow {
    std::uint64_t bytes = 0;
    CollectiveResult result;
};

struct CollectiveSweepResult {
    std::vector<CollectiveSweepRow> rows;   // the sizes that finished, ascending
    std::size_t sizes_requested = 0;        // sweep_sizes(min, max).size()
    bool interrupted = false;               // cancelled: `rows` holds only the sizes that finished
};

// Called with each size's row as soon as it finishes (streamed output, progress), with how many sizes are done
// and how many were requested.
using CollectiveRowCallback = std::function<void(const CollectiveSweepRow&, std::size_t done, std::size_t total)>;

// Runs the sweep. `cancelled` (empty = never) is polled before each size, as the planning sweeps poll theirs
// (the caller decides what cancels, e.g. the SIGINT flag of tools/cli/interrupt.hpp; nothing here reads global
// state): once it returns true the remaining sizes are skipped and the result is marked interrupted. A size in
// progress finishes first (one size of all-to-all at 16,384 GPUs takes ~17 s).
CollectiveSweepResult run_collective_sweep(const CollectiveSweepSpec& spec,
                                           const std::function<bool()>& cancelled = {},
                                           const CollectiveRowCallback& on_row = {});

// "8 x H100-SXM (dgx-h100, ...)": the cluster as the table header and JSON name it.
std::string describe_collective_cluster(const ClusterSpec& cluster);
// Planes of the sweep's fabric (FabricOptions::planes; 1 on a topology file, which describes its own).
int collective_planes(const CollectiveSweepSpec& spec);

// A collective moves data between GPUs: one GPU has nothing to send (time 0, "1 GPUs"), so it is refused.
inline constexpr int kMinCollectiveGpus = 2;
std::string one_gpu_message(int gpus);

// The message sizes of a sweep: min, 2 min, 4 min, ... while <= max (nccl-tests -f 2; max only if on the doubling).
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);

// An interrupted result says so in the table (a comment line) and the JSON ("interrupted"); CSV has rows only.
// The table is nccl-tests' (collective_table.hpp). Each text is its header, then one piece per row, then (table)
// a footer: what the streamed output (cmd_collective.cpp) prints piece by piece as the sizes finish.
std::string format_sweep_table(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result);
std::string format_sweep_csv_header();
std::string format_sweep_csv_row(const CollectiveSweepRow& row);
std::string format_sweep_csv(const CollectiveSweepResult& result);
std::string format_sweep_json(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result);
std::string format_sweep(const CollectiveSweepSpec& spec, const CollectiveSweepResult& result);

// Why the spec's explicit algorithm or protocol cannot run its op on its cluster, by the collective model's own
// rules (inapplicable_reason in models/collectives/tuner.hpp; protocol_busbw in nccl_params.hpp, which is what
// makes the simulator refuse a protocol), checked when the input is read, before anything is simulated, so the
// error can name the scenario key or the flag. `field` is "algorithm" or "protocol" (always one the spec sets
// explicitly); nullopt when everything applies. A topology file is loaded (and resource-checked) for this; a
// preset is represented by a small preset with the same layout facts (collective_sweep.cpp). `sharp_on` is how
// the input turns SHARP on ("--sharp on", "cluster.sharp: true"), named when that alone would let SHARP run.
struct CollectiveSpecProblem {
    std::string field;
    std::string message;
};
std::optional<CollectiveSpecProblem> applicability_problem(const CollectiveSweepSpec& spec, std::string_view sharp_on);

// Reads a `collective:` section {op, algorithm, protocol, min_size, max_size}.
void read_collective_section(const ConfigNode& node, CollectiveSweepSpec& spec);

// Reads and validates a whole `scenario: collective` document (name, description, cluster, collective,
// output); nothing is simulated.
CollectiveSweepSpec read_collective_scenario(const ConfigNode& root);

}  // namespace ttsim::cli
