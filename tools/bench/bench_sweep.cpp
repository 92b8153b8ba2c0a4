// Speed of planning sweeps (acceptance: 4 workloads x 12 GPU counts x 3 GPU types <= 30 s wall on 2 cores; the
// default scenario <= 10 s). One iteration each: a sweep is seconds long, and every point is independent of the
// others, so the figure is simply the wall time of run_sweep().
//   build/ttsim_bench --benchmark_filter=sweep
#include <benchmark/benchmark.h>

#include "models/compute/compute_profile.hpp"
#include "models/compute/profile_files.hpp"
#include "models/planning/published_results.hpp"
#include "models/planning/sweep_runner.hpp"
#include "models/planning/sweep_spec.hpp"

namespace {

using namespace ttsim::planning;

void run(benchmark::State& state, const SweepSpec& spec) {
    // The shipped profiles of the default compute model, as `ttsim predict` / `ttsim run` price with them.
    const ttsim::ProfileSet profiles = ttsim::load_profiles(ttsim::ProfileSet::default_dir(), ttsim::kDefaultComputeModel);
    const auto points = expand_sweep(spec, shipped_published_counts);
    SweepOptions options;
    options.threads = static_cast<int>(state.range(0));
    std::size_t ok = 0;
    for (auto _ : state) {
        const SweepResult result = run_sweep(points, profiles, options);
        ok = 0;
        for (const auto& p : result.points) ok += p.outcome.ok;
    }
    state.counters["points"] = static_cast<double>(points.size());
    state.counters["ok_points"] = static_cast<double>(ok);
}

// 4 workloads x 12 GPU counts (8 .. 16,384, doubling) x 3 GPU types.
void sweep_4x12x3(benchmark::State& state) {
    SweepSpec spec;
    spec.workloads = {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"};
    spec.systems = {"dgx-h100", "dgx-h200", "dgx-b200"};
    spec.gpu_counts = doubling_counts(8, 16384);
    run(state, spec);
}

// scenarios/default.yaml: 4 workloads on DGX H100, 8 .. 4,096 GPUs plus the published v4.1 counts.
void sweep_default_scenario(benchmark::State& state) {
    SweepSpec spec;
    spec.workloads = {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = doubling_counts(8, 4096);
    spec.add_published_gpu_counts = true;
    run(state, spec);
}

}  // namespace

BENCHMARK(sweep_4x12x3)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(sweep_default_scenario)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
