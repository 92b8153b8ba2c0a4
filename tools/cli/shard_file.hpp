// `ttsim run SWEEP.yaml --shard I/N --out DIR` for schedulers without MPI (job arrays): the run computes every
// N-th point of the expanded sweep (points i with i mod N = I - 1: strided, so each shard gets a like mix of
// cheap and expensive points) and writes DIR/shard-I-of-N.cbor. `ttsim merge DIR...` joins N such files into
// the files one whole run writes (the same rows, assembled by the same code).
//
// A shard file (CBOR: every double exact) holds the scenario's whole text and path, I, N, the sweep's point
// count and the shard's rows (row_codec.hpp). Merging refuses, naming the file, shards of another scenario
// text, of another N or point count, a shard given twice, a missing one, or a file that is not a whole shard.
// A shard file is written only when its share is complete (an interrupted shard writes none).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ttsim::cli {

struct ShardSpec {
    int index = 1;   // I, 1-based
    int count = 1;   // N
};

// "I/N" with 1 <= I <= N <= 100000; InputError otherwise (the caller names --shard).
ShardSpec parse_shard(const std::string& text);
// The points of a sweep of `points` that shard `spec` computes, ascending.
std::vector<std::size_t> shard_indices(std::size_t points, const ShardSpec& spec);
// "shard-2-of-3.cbor"
std::string shard_file_name(const ShardSpec& spec);

struct ShardFile {
    std::string scenario_file;   // absolute path of the scenario when the shard ran (relative files resolve from it)
    std::string scenario_text;
    ShardSpec shard;
    std::size_t points = 0;      // of the whole sweep
    std::vector<std::pair<std::size_t, nlohmann::json>> rows;   // (point index, row), ascending
};

// A shard of the scenario in `scenario_file` (read again for its text; the path made absolute), without rows.
ShardFile new_shard(const std::string& scenario_file, const ShardSpec& spec, std::size_t points);

// Writes `shard` into `dir` atomically; returns the file's path.
std::string write_shard(const std::string& dir, const ShardFile& shard);

// The shards joined: every point's row in sweep order. Each argument is a shard file or a directory holding
// exactly one. InputError naming the file on any mismatch or gap.
struct MergedShards {
    std::string scenario_file, scenario_text;
    std::vector<nlohmann::json> rows;
};
MergedShards merge_shards(const std::vector<std::string>& paths);

}  // namespace ttsim::cli
