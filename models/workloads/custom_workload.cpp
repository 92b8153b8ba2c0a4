#include "models/workloads/custom_workload.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/workloads/layers/families.hpp"
#include "models/workloads/layers/layer_workload.hpp"
#include "sim/errors.hpp"
#include "sim/statistics.hpp"

namespace ttsim {

namespace {

// {tokens: N} or {samples: N} -> samples of `sequence` tokens; `whole`: tokens must be whole sequences.
double read_amount(const ConfigNode& node, double sequence, bool whole, double* tokens_out) {
    if (!node.is_map()) node.fail("expected {tokens: N} or {samples: N}");
    node.check_keys({"tokens", "samples"});
    if (node.has("tokens") == node.has("samples")) node.fail("give exactly one of tokens or samples");
    if (node.has("samples")) {
        const double samples = static_cast<double>(node.required("samples").as_int(1, std::int64_t{1} << 50));
        *tokens_out = samples * sequence;
        return samples;
    }
    const ConfigNode t = node.required("tokens");
    const double tokens = t.as_double(1, 1e18);
    if (tokens < sequence)
        t.fail(fmt::format("{:.6g} tokens is less than one sequence of {:.0f} tokens", tokens, sequence));
    if (whole && std::fmod(tokens, sequence) != 0)
        t.fail(fmt::format("{:.0f} tokens is not a whole number of {:.0f}-token sequences", tokens, sequence));
    *tokens_out = tokens;
    return whole ? tokens / sequence : std::ceil(tokens / sequence);
}

}  // namespace

UserModel load_user_model(const ConfigNode& model) {
    if (!model.is_map()) model.fail("expected a mapping with name, graph, train and global_batch");
    model.check_keys({"name", "graph", "train", "global_batch", "optimizer", "gradients"});
    const std::string name = model.required("name").as_string();
    if (name.find_first_not_of(" \t") == std::string::npos) model.required("name").fail("must not be blank");
    const ConfigNode graph_node = model.required("graph");
    if (!graph_node.is_map()) graph_node.fail("expected a layer description (family, architecture, training)");
    const ConfigNode family = layers::param(graph_node, "family");
    if (family.as_string() != "transformer_decoder")
        family.fail("a user model must be a transformer_decoder (the only family whose tensor and context "
                    "parallelism ttsim models for a user model)");
    const std::string optimizer = model.has("optimizer") ? model.required("optimizer").as_choice({"adam", "lamb"}) : "adam";

    // Built here, at TP = CP = 1 and one sample, so that every error names the scenario's line and key.
    const layers::LayerGraph graph = layers::build_layer_graph(graph_node, name);
    const ConfigNode arch = graph_node.required("architecture");
    const double sequence = static_cast<double>(layers::count_param(arch, "sequence"));
    const auto hidden = layers::count_param(arch, "hidden");
    const auto heads = layers::count_param(arch, "heads");
    const auto kv_heads = layers::count_param_or(arch, "kv_heads", heads, 1);
    const auto head_dim = layers::count_param_or(arch, "head_dim", hidden / heads, 1);

    auto w = std::make_shared<Workload>();
    w->name = name;
    w->mlperf_benchmark = "user";
    const layers::GraphTotals totals = layers::totals(graph);
    const layers::PerSample per_sample = layers::per_sample(graph);
    w->total_params = static_cast<std::uint64_t>(totals.params);
    w->trainable_params = static_cast<std::uint64_t>(totals.trainable_params);
    // Megatron-LM trains bf16 with fp32 main gradients, accumulated and all-reduced in fp32 unless told
    // --grad-reduce-in-bf16 (megatron/training/arguments.py, the bf16 branch: "bfloat16 requires gradient
    // accumulation and all-reduce to be done in fp32"; the grad buffer is torch.float): 4 bytes held per trainable
    // parameter and 4 sent per element by data parallelism. `gradients: bf16` is that flag's layout.
    w->gradient_dtype = model.has("gradients") ? model.required("gradients").as_choice({"fp32", "bf16"}) : "fp32";
    w->gradient_dtype_confirmed = model.has("gradients");
    w->gradient_bytes = static_cast<std::uint64_t>(static_cast<double>(w->trainable_params) * w->gradient_element_bytes());
    w->train_flops_per_sample = per_sample.train_flops;
    w->forward_flops_per_sample = per_sample.forward_flops;
    w->flops_note = fmt::format("layer graph of the user model, one {:.0f}-token sequence", sequence);
    const double params = static_cast<double>(totals.params);
    w->description = fmt::format("user-defined decoder {} ({} parameters, {} optimizer)", name,
                                 params >= 1e9 ? fmt::format("{:.2f} B", params / 1e9) : fmt::format("{:.2f} M", params / 1e6),
                                 optimizer);
    w->eval_on_the_clock = false;   // nothing evaluated: EvalRule fixed at 0 samples gives no evaluations
    w->quality_target = "a fixed amount of training (no quality target)";
    w->user_defined = true;
    // Megatron-style TP with sequence parallelism (all-gather + reduce-scatter per linear pair) and ring
    // attention's K/V all-gathers for CP, the shipped Llama2 workload's styles.
    ModelParallelComm comm;
    comm.layers = static_cast<int>(layers::count_param(arch, "layers", 1, layers::kMaxTransformerLayers));
    comm.hidden = static_cast<double>(hidden);
    comm.tokens_per_sample = sequence;
    comm.tensor_style = ModelParallelComm::TensorStyle::sequence_parallel;
    comm.context_kv_width = static_cast<double>(kv_heads * head_dim);
    comm.activation_bytes = graph.facts.activation_bytes;
    w->model_parallel = comm;
    LayerModelRef ref;
    ref.file = name;
    ref.samples_per_graph_sample = 1;
    ref.source = model.location().file + " " + graph_node.path();
    ref.description_yaml = YAML::Dump(graph_node.raw());
    w->layer_model = ref;

    UserModel out;
    double train_tokens = 0, batch_tokens = 0;
    const double samples = read_amount(model.required("train"), sequence, false, &train_tokens);
    const ConfigNode batch_node = model.required("global_batch");
    const double batch = read_amount(batch_node, sequence, true, &batch_tokens);
    if (batch > (1 << 30)) batch_node.fail("global batch above 2^30 sequences");
    if (batch > samples) batch_node.fail("global batch is larger than the whole run (train)");
    w->samples_to_train = samples;
    out.global_batch = static_cast<int>(batch);
    out.train_note = fmt::format("trains {:.4g} tokens = {:.0f} sequences of {:.0f} tokens (fixed, from the scenario)",
                                 train_tokens, samples, sequence);
    out.batch_note = fmt::format("global batch {:.0f} sequences = {:.4g} tokens (from the scenario)", batch, batch_tokens);
    out.workload = std::move(w);
    return out;
}

ComputeProfile user_model_profile(const ProfileSet& profiles, const Workload& workload, const GpuSpec& gpu) {
    std::optional<ComputeProfile> chosen;
    std::vector<double> fixed;
    for (const auto& [key, profile] : profiles.all()) {
        if (key.second != gpu.name || !profile.operator_efficiency) continue;
        if (!chosen) chosen = profile;
        fixed.push_back(profile.fixed_step_seconds);
    }
    // A GPU without results of its own (GB200 in v4.1): the workloads' profiles transferred to it, as a v4.1
    // workload's prediction there transfers its own (ProfileSet::find; the prediction says so).
    if (!chosen) {
        std::set<std::string> workloads;
        for (const auto& [key, profile] : profiles.all())
            if (profile.operator_efficiency && !profile.transferred_from) workloads.insert(key.first);
        for (const std::string& name : workloads) {
            const ComputeProfile transferred = profiles.find(find_workload(name), gpu);
            if (!transferred.operator_efficiency) continue;
            if (!chosen) chosen = transferred;
            fixed.push_back(transferred.fixed_step_seconds);
        }
    }
    if (!chosen)
        throw InputError("the user model " + workload.name + " has no calibrated profile of its own and the profile set has "
                             "no operator-model profile for " + gpu.name +
                             " to price it with (" + std::string(kUserModelOperatorOnly) +
                             "); use an operator profile set, e.g. from `ttsim calibrate --model operator --out DIR`",
                         Field::profiles);
    ComputeProfile p = *chosen;
    p.workload = workload.name;
    p.fixed_step_seconds = median(fixed);
    // operator_speed stays: it is the GPU family's fitted offset (shared by every workload on the GPU), not the
    // chosen workload's.
    p.calibrated_range.reset();
    return p;   // transferred_from kept where the GPU had no profiles of its own: the prediction warns of it
}

bool names_model_file(const std::string& workload) {
    const auto ends_with = [&](const std::string& suffix) {
        return workload.size() > suffix.size() && workload.compare(workload.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return ends_with(".yaml") || ends_with(".yml");
}

UserModel load_user_model_file(const std::string& path) {
    const ConfigNode root = ConfigNode::load_file(path);
    if (!root.is_map()) root.fail("expected a user model: a mapping with graph, train and global_batch, or a scenario with model:");
    if (root.has("model") && root.required("model").is_map()) return load_user_model(root.required("model"));
    return load_user_model(root);
}

ComputeProfile workload_profile(const ProfileSet& profiles, const Workload& workload, const GpuSpec& gpu) {
    if (!workload.user_defined)
        for (const auto& [key, profile] : profiles.all())
            if (key.first == workload.name) return profiles.find(workload, gpu);
    ComputeProfile p = user_model_profile(profiles, workload, gpu);
    p.convergence_factor = 1.0;
    return p;
}

}  // namespace ttsim
