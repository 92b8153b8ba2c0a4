// Speed of a layout search over every valid layout (target: <= 1 s at 1,024 GPUs): the shipped
// user-model scenario's 7B decoder (scenarios/custom-decoder-7b.yaml) and Llama2-70B LoRA at the published batch,
// on DGX H100, priced with the shipped operator profile set. Each iteration is a whole search: one topology, every layout's
// layer graph and memory, the collectives (simulated once per distinct collective) and the pricing.
#include <benchmark/benchmark.h>

#include <string>

#include "models/compute/profile_files.hpp"
#include "models/training/layout_search.hpp"
#include "models/workloads/custom_workload.hpp"
#include "models/workloads/layers/layer_workload.hpp"

namespace {

using namespace ttsim;

// The shipped operator profile set (models/profiles/operator_profiles.yaml): H100's efficiencies, as the user-model scenario
// prices with them.
ComputeProfile bench_profile(const Workload& workload) {
    const ProfileSet profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    return workload.user_defined ? user_model_profile(profiles, workload, find_gpu("H100-SXM"))
                                 : profiles.find(workload, find_gpu("H100-SXM"));
}

void search_decoder_7b(benchmark::State& state) {
    const ConfigNode root = ConfigNode::load_file(std::string(TTSIM_SOURCE_DIR) + "/scenarios/custom-decoder-7b.yaml");
    const UserModel model = load_user_model(root.required("model"));
    LayoutSearchJob job;
    job.owned_workload = model.workload;
    job.system = resolve_system("dgx-h100");
    job.gpus = static_cast<int>(state.range(0));
    job.global_batch = model.global_batch;
    job.switches.sequence_parallel = true;
    job.switches.sharp = sharp_by_default(job.system, job.gpus);
    const ComputeProfile profile = bench_profile(*model.workload);
    int valid = 0;
    for (auto _ : state) valid = search_layouts(job, profile).enumerated;
    state.counters["valid_layouts"] = valid;
}

void search_lora(benchmark::State& state) {
    PredictionRequest request;
    request.workload = "llama2_70b_lora";
    request.system = "dgx-h100";
    request.gpus = static_cast<int>(state.range(0));
    request.compute_efficiency_vs_8gpu = false;
    const PreparedScenario published = prepare(request);
    LayoutSearchJob job;
    job.workload = published.workload;
    job.system = published.system;
    job.gpus = request.gpus;
    job.global_batch = published.layout.global_batch;
    job.switches = published.layout;
    const ComputeProfile profile = bench_profile(*published.workload);
    int valid = 0;
    for (auto _ : state) valid = search_layouts(job, profile).enumerated;
    state.counters["valid_layouts"] = valid;
}

}  // namespace

BENCHMARK(search_decoder_7b)->Arg(64)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(search_lora)->Arg(1024)->Unit(benchmark::kMillisecond);

namespace {

// One Llama2-70B LoRA layer graph (80 decoder blocks) at TP `range(0)`, sequence parallel, micro batch 1: what a
// layout search builds once per TP x CP x micro batch it tries (315 layouts at 16,384 GPUs).
void build_lora_graph(benchmark::State& state) {
    using namespace ttsim;
    const ConfigNode description = layers::load_shipped_layer_description("llama2_70b_lora");
    layers::BuildOptions options;
    options.tensor_parallel = static_cast<int>(state.range(0));
    options.sequence_parallel = options.tensor_parallel > 1;
    std::size_t kernels = 0;
    for (auto _ : state) {
        const layers::LayerGraph graph = layers::build_layer_graph(description, "llama2_70b_lora", options);
        kernels = 0;
        for (const layers::Layer& layer : graph.layers) kernels += layer.forward.size() + layer.backward.size();
        benchmark::DoNotOptimize(kernels);
    }
    state.counters["kernels"] = static_cast<double>(kernels);
}

}  // namespace

BENCHMARK(build_lora_graph)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);
