// Speed of pipelined predictions at scale (acceptance: a pinned Llama 3.1 405B prediction at 16,384 H100s <= 0.2 s
// CPU; a full layout search for it <= 2 s): scenarios/llama3.1-405b.yaml's model on DGX H100 at Meta's 16M-token
// batch, priced with the shipped operator profile set as a user model is.
//   build/ttsim_bench --benchmark_filter=llama405b
#include <benchmark/benchmark.h>

#include <string>

#include "models/compute/profile_files.hpp"
#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"

namespace {

using namespace ttsim;

const UserModel& llama405b() {
    static const UserModel model = [] {
        const ConfigNode root = ConfigNode::load_file(std::string(TTSIM_SOURCE_DIR) + "/scenarios/llama3.1-405b.yaml");
        return load_user_model(root.required("model"));
    }();
    return model;
}

PredictionRequest request(int gpus, const std::string& layout) {
    PredictionRequest r;
    r.custom_workload = llama405b().workload;
    r.workload = llama405b().workload->name;
    r.system = "dgx-h100";
    r.gpus = gpus;
    r.global_batch = llama405b().global_batch;
    r.layout = parse_layout_request(layout);
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

void predict_llama405b_pinned(benchmark::State& state) {
    const ProfileSet profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    const PredictionRequest r = request(static_cast<int>(state.range(0)), "tp=8,cp=1,pp=16,micro=1");
    double step_ms = 0;
    for (auto _ : state) step_ms = predict(r, profiles).step_ms;
    state.counters["step_ms"] = step_ms;
}

void search_llama405b(benchmark::State& state) {
    const ProfileSet profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    const PredictionRequest r = request(static_cast<int>(state.range(0)), "fastest");
    int valid = 0;
    double step_ms = 0;
    for (auto _ : state) {
        const Prediction p = predict(r, profiles);
        valid = p.layouts_enumerated;
        step_ms = p.step_ms;
    }
    state.counters["valid_layouts"] = valid;
    state.counters["step_ms"] = step_ms;
}

}  // namespace

BENCHMARK(predict_llama405b_pinned)->Arg(16384)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK(search_llama405b)->Arg(16384)->Iterations(1)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
