// Speed of one time-to-train prediction (acceptance: a 16,384-GPU prediction in <= 2 s).
#include <benchmark/benchmark.h>

#include "models/compute/profile_files.hpp"
#include "models/training/predict.hpp"

namespace {
void predict_at_scale(benchmark::State& state, const char* workload, const char* system) {
    // The shipped profiles of the default compute model, as `ttsim predict` / `ttsim run` price with them.
    const ttsim::ProfileSet profiles = ttsim::load_profiles(ttsim::ProfileSet::default_dir(), ttsim::kDefaultComputeModel);
    ttsim::PredictionRequest request;
    request.workload = workload;
    request.system = system;
    request.gpus = static_cast<int>(state.range(0));
    for (auto _ : state) benchmark::DoNotOptimize(ttsim::predict(request, profiles).ttt_minutes);
}
}  // namespace

BENCHMARK_CAPTURE(predict_at_scale, bert_b200, "bert", "dgx-b200")->Arg(8)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
// SD cannot run on 16,384 GPUs by default: one sample per data-parallel rank already exceeds 2x its largest RCP
// batch and it has no model parallelism to grow the replica (InputError), so it is benchmarked at its largest valid
// scale. LoRA's default batch there is sized for larger replicas (TP 4 x CP 16, predict_layout.cpp).
BENCHMARK_CAPTURE(predict_at_scale, lora_h100, "llama2_70b_lora", "dgx-h100")->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(predict_at_scale, sd_gb200, "stable_diffusion", "gb200-nvl72")->Arg(2048)->Unit(benchmark::kMillisecond);
// The 131,072-GPU h100-100k prediction (acceptance: <= 2 s): its layout search prices collectives over groups of up to
// 131,072 ranks, each routed and classified once (collective_simulator.hpp).
BENCHMARK_CAPTURE(predict_at_scale, lora_h100_100k, "llama2_70b_lora", "h100-100k")->Arg(131072)->Iterations(2)->Unit(benchmark::kMillisecond);
