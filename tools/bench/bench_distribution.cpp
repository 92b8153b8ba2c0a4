// Rank 0's work per handed-out chunk of an MPI sweep (tools/cli/distributed_run.cpp), without the transfer
// itself: decoding a rank's request (CBOR) holding the rows of its last chunk, storing them, decoding each into a
// PointOutcome (done once per row when the sweep is assembled), and encoding the reply naming the next chunk.
// With the chunk's size in rows (Arg) the per-row cost follows; the rows are real predictions of a mix of points.
//   build/ttsim_bench --benchmark_filter=chunk
#include <benchmark/benchmark.h>

#include "models/planning/published_results.hpp"
#include "models/planning/row_codec.hpp"
#include "models/planning/sweep_runner.hpp"
#include "tools/cli/distributed_run.hpp"

namespace {

using namespace ttsim::planning;
using nlohmann::json;

// A request as a rank sends it: `rows` rows of real outcomes (cycled from 16 predicted points).
std::string request_of(std::size_t rows) {
    SweepSpec spec;
    spec.workloads = {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = {8, 64, 512, 4096};
    const auto points = expand_sweep(spec, shipped_published_counts);
    const ttsim::ProfileSet profiles = ttsim::ProfileSet::load_dir(ttsim::ProfileSet::default_dir());
    std::vector<std::size_t> all(points.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const auto outcomes = predict_points(points, all, profiles, {});
    json list = json::array();
    for (std::size_t k = 0; k < rows; ++k) list.push_back(json::array({k, outcome_to_json(*outcomes[k % outcomes.size()])}));
    return to_bytes(json{{"threads", 1}, {"interrupted", false}, {"rows", std::move(list)}});
}

void rank0_per_chunk(benchmark::State& state) {
    const std::size_t rows = static_cast<std::size_t>(state.range(0));
    const std::string request = request_of(rows);
    std::vector<std::optional<json>> stored(rows);
    for (auto _ : state) {
        const json message = from_bytes(request, "bench");
        for (const json& row : message.at("rows")) stored[row.at(0).get<std::size_t>()] = row.at(1);
        for (const auto& row : stored) benchmark::DoNotOptimize(outcome_from_json(*row, "bench"));
        const std::size_t next = ttsim::cli::chunk_size(1000, 2, message.at("threads").get<int>());
        benchmark::DoNotOptimize(to_bytes(json{{"begin", 0}, {"end", next}}));
    }
    state.counters["request_bytes"] = static_cast<double>(request.size());
    state.counters["bytes_per_row"] = static_cast<double>(request.size()) / static_cast<double>(rows);
    state.counters["rows"] = static_cast<double>(rows);
}

}  // namespace

BENCHMARK(rank0_per_chunk)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
