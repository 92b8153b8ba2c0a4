// The workload catalog, read from models/data/workload_catalog.yaml through the strict loader (every value with
// its source; see models/reference_data.hpp), once per process. The rules that use it (eval_schedule,
// default_parallelism, ...) are in workload.cpp.
#include <algorithm>

#include "models/data_dir.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/reference_data.hpp"
#include "models/workloads/layers/kernel.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace ttsim {
namespace {

constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;   // bounds any parameter, sample or batch count
constexpr int kMaxGpus = 1 << 24;

std::uint64_t sourced_count(const ConfigNode& entry, std::string_view key, std::int64_t min) {
    return static_cast<std::uint64_t>(sourced(entry, key).as_int(min, kMaxCount));
}

double sourced_flops(const ConfigNode& entry, std::string_view key) {
    const ConfigNode value = sourced(entry, key);
    const double flops = value.as_number_in_unit("FLOP");
    if (!(flops > 0)) value.fail("FLOPs per sample must be positive");
    return flops;
}

EvalRule read_eval_rule(const ConfigNode& entry) {
    const ConfigNode written = entry.required("eval_rule");
    if (!written.is_map()) written.fail("expected {interval: ..., source: ...}");
    const std::string interval = written.required("interval").as_choice({"fixed", "epoch", "batch_linear"});
    EvalRule rule;
    auto number = [&](const ConfigNode& table, std::string_view key, double min) {
        return table.required(key).as_double(min, 1e15);
    };
    if (interval == "epoch") {
        sourced_table(entry, "eval_rule", {"interval"});
        rule.interval = EvalRule::Interval::epoch;
        return rule;
    }
    if (interval == "fixed") {
        const ConfigNode t =
            sourced_table(entry, "eval_rule", {"interval", "samples", "skip_per_batch", "skip_base", "whole_steps"});
        rule.interval = EvalRule::Interval::fixed;
        rule.samples = number(t, "samples", 1);
        rule.whole_steps = t.required("whole_steps").as_bool();
        rule.skip_per_batch = number(t, "skip_per_batch", 0);
        rule.skip_base = number(t, "skip_base", 0);
        return rule;
    }
    const ConfigNode t = sourced_table(entry, "eval_rule", {"interval", "scale", "per_batch", "base", "round_to",
                                                            "skip_per_batch", "skip_base"});
    rule.interval = EvalRule::Interval::batch_linear;
    rule.scale = number(t, "scale", 0);
    rule.per_batch = number(t, "per_batch", 0);
    rule.base = number(t, "base", 0);
    rule.round_to = number(t, "round_to", 1);
    rule.skip_per_batch = number(t, "skip_per_batch", 0);
    rule.skip_base = number(t, "skip_base", 0);
    return rule;
}

// `model_parallel`: a table of the per-layer exchange, or {value: none, source} for data parallel only.
std::optional<ModelParallelComm> read_model_parallel(const ConfigNode& entry) {
    const ConfigNode written = entry.required("model_parallel");
    if (written.is_map() && written.has("value")) {
        const ConfigNode none = sourced(entry, "model_parallel");
        if (!(none.is_scalar() && none.as_string() == "none"))
            none.fail("expected 'none' or a table {layers, hidden, tokens_per_sample, ...}");
        return std::nullopt;
    }
    const ConfigNode t = sourced_table(entry, "model_parallel", {"layers", "hidden", "tokens_per_sample", "tensor_style",
                                                                 "context_kv_width", "activation_bytes"});
    ModelParallelComm m;
    m.layers = static_cast<int>(t.required("layers").as_int(1, 1 << 20));
    m.hidden = t.required("hidden").as_double(1, 1e9);
    m.tokens_per_sample = t.required("tokens_per_sample").as_double(1, 1e12);
    m.tensor_style = t.required("tensor_style").as_choice({"allreduce", "sequence_parallel"}) == "allreduce"
                         ? ModelParallelComm::TensorStyle::allreduce
                         : ModelParallelComm::TensorStyle::sequence_parallel;
    m.context_kv_width = t.required("context_kv_width").as_double(0, 1e9);
    m.activation_bytes = t.required("activation_bytes").as_double(1, 16);
    return m;
}

// An evaluation batch: a sample count, or `shard` (the rank's whole share in one pass).
int read_eval_batch(const ConfigNode& node) {
    if (node.is_scalar() && node.as_string() == "shard") return EvalPasses::kWholeShard;
    try {
        return static_cast<int>(node.as_int(1, kMaxGpus));
    } catch (const InputError&) {
        node.fail("expected a whole number of samples >= 1, or 'shard' (the rank's whole share in one pass)");
    }
}

// `evaluation`: how an evaluation runs (EvalPasses), one sourced table.
EvalPasses read_evaluation(const ConfigNode& entry) {
    const ConfigNode t = sourced_table(entry, "evaluation",
                                       {"batch", "packing", "cuda_graphs", "host_kernels_per_sample", "pad_last_batch", "step"});
    EvalPasses e;
    e.batch = read_eval_batch(t.required("batch"));
    e.samples_per_graph_sample = t.required("packing").as_double(1e-6, 1e6);
    e.cuda_graphs = t.required("cuda_graphs").as_choice({"none", "per_layer", "segmented", "full_iteration"});
    e.host_kernels_per_sample = t.required("host_kernels_per_sample").as_double(0, 1e6);
    e.pad_last_batch = t.required("pad_last_batch").as_bool();
    e.step = t.required("step").as_choice({"pass", "global_batch"}) == "pass" ? EvalPasses::Step::pass
                                                                             : EvalPasses::Step::global_batch;
    e.source = t.required("source").as_string();
    return e;
}

}  // namespace

PublishedParallelism read_published_layout(const ConfigNode& entry) {
    entry.check_keys({"system", "gpus", "tp", "cp", "pp", "vp", "dp", "micro", "accumulation", "packing",
                      "distributed_optimizer", "sharp", "sequence_parallel", "fp8", "cuda_graphs", "eval_batch",
                      "eval_packing", "eval_cuda_graphs", "precision", "head_tokens", "gradient_reduction",
                      "gradient_buckets", "attention_precision", "source"});
    PublishedParallelism p;
    const ConfigNode system = entry.required("system");
    p.system_family = system.as_string();
    // Default layouts match layouts to GPUs by canonical name: an alias would never be found.
    if (system.feeding([&] { return find_gpu(p.system_family).name; }) != p.system_family)
        system.fail("'" + p.system_family + "' is an alias; write the GPU catalog name '" +
                    find_gpu(p.system_family).name + "'");
    p.gpus = static_cast<int>(entry.required("gpus").as_int(1, kMaxGpus));
    auto count = [&](std::string_view key) {
        return entry.has(key) ? static_cast<int>(entry.required(key).as_int(1, kMaxGpus)) : 1;
    };
    auto flag = [&](std::string_view key) { return entry.has(key) && entry.required(key).as_bool(); };
    ParallelismConfig& c = p.config;
    c.tensor_parallel = count("tp");
    c.context_parallel = count("cp");
    c.pipeline_parallel = count("pp");
    c.virtual_pipeline = count("vp");
    c.data_parallel = static_cast<int>(entry.required("dp").as_int(1, kMaxGpus));
    c.samples_per_micro_batch = count("micro");
    c.gradient_accumulation = count("accumulation");
    c.packing_factor = count("packing");
    c.global_batch = c.data_parallel * c.samples_per_micro_batch * c.gradient_accumulation;
    c.distributed_optimizer = flag("distributed_optimizer");
    c.sharp = flag("sharp");
    c.sequence_parallel = flag("sequence_parallel");
    c.fp8 = flag("fp8");
    if (const auto graphs = entry.optional("cuda_graphs"))
        c.cuda_graphs = graphs->as_choice({"none", "per_layer", "segmented", "full_iteration"});
    if (const auto batch = entry.optional("eval_batch")) c.eval_batch = read_eval_batch(*batch);
    if (const auto packing = entry.optional("eval_packing")) c.eval_samples_per_graph_sample = packing->as_double(1e-6, 1e6);
    if (const auto graphs = entry.optional("eval_cuda_graphs"))
        c.eval_cuda_graphs = graphs->as_choice({"none", "per_layer", "segmented", "full_iteration"});
    if (const auto precision = entry.optional("precision")) c.precision = precision->as_choice(layers::kPrecisionNames);
    if (const auto head = entry.optional("head_tokens")) c.head_on_all_tokens = head->as_choice({"masked", "all"}) == "all";
    if (const auto blocks = entry.optional("gradient_buckets")) c.gradient_buckets = static_cast<int>(blocks->as_int(1, 1024));
    if (const auto attention = entry.optional("attention_precision"))
        c.attention_precision = attention->as_choice(layers::kPrecisionNames);
    if (const auto reduction = entry.optional("gradient_reduction"))
        c.gradient_reduction_after_backward = reduction->as_choice(kGradientReductionNames) == gradient_reduction_name(true);
    if (static_cast<long long>(c.tensor_parallel) * c.context_parallel * c.pipeline_parallel * c.data_parallel != p.gpus)
        entry.required("gpus").fail("the layout does not multiply out to its GPU count: TP " +
                                    std::to_string(c.tensor_parallel) + " x CP " + std::to_string(c.context_parallel) +
                                    " x PP " + std::to_string(c.pipeline_parallel) + " x DP " +
                                    std::to_string(c.data_parallel) + " is not " + std::to_string(p.gpus));
    const ConfigNode source = entry.required("source");
    p.source = source.as_string();
    if (p.source.find_first_not_of(" \t") == std::string::npos) source.fail("source must not be blank");
    return p;
}

namespace {

Workload read_workload(const ConfigNode& entry) {
    entry.check_keys({"name", "mlperf_benchmark", "aliases", "description", "total_params", "trainable_params",
                      "gradient_dtype", "gradient_dtype_confirmed", "gradient_bytes", "gradient_bucket",
                      "train_flops_per_sample", "forward_flops_per_sample", "flops_note", "train_samples", "eval_samples", "convergence_unit",
                      "runs_per_result", "quality_target", "eval_on_the_clock", "eval_rule", "model_parallel",
                      "layer_model", "evaluation", "published_parallelism"});
    Workload w;
    w.name = entry.required("name").as_string();
    w.mlperf_benchmark = entry.required("mlperf_benchmark").as_string();
    w.description = entry.required("description").as_string();
    w.total_params = sourced_count(entry, "total_params", 1);
    w.trainable_params = sourced_count(entry, "trainable_params", 1);
    if (w.trainable_params > w.total_params) entry.required("trainable_params").fail("more than total_params");
    w.gradient_dtype = sourced(entry, "gradient_dtype").as_choice({"fp16", "bf16", "fp32"});
    w.gradient_dtype_confirmed = sourced(entry, "gradient_dtype_confirmed").as_bool();
    const ConfigNode gradient_bytes = sourced(entry, "gradient_bytes");
    w.gradient_bytes = gradient_bytes.as_bytes();
    const auto element = static_cast<std::uint64_t>(w.gradient_element_bytes());
    if (w.gradient_bytes != element * w.trainable_params)
        gradient_bytes.fail("expected trainable_params x " + std::to_string(element) + " bytes (" + w.gradient_dtype +
                            ") = " + std::to_string(element * w.trainable_params) + "B");
    if (entry.has("gradient_bucket")) {
        const ConfigNode bucket = sourced(entry, "gradient_bucket");
        w.gradient_bucket_bytes = bucket.as_bytes();
        if (*w.gradient_bucket_bytes == 0) bucket.fail("a gradient bucket holds at least one byte");
    }
    w.train_flops_per_sample = sourced_flops(entry, "train_flops_per_sample");
    w.forward_flops_per_sample = sourced_flops(entry, "forward_flops_per_sample");
    w.flops_note = entry.required("flops_note").as_string();
    const ConfigNode train_samples = sourced(entry, "train_samples");
    if (!(train_samples.is_scalar() && train_samples.as_string() == "none"))
        w.train_samples = static_cast<std::uint64_t>(train_samples.as_int(1, kMaxCount));
    w.eval_samples = sourced_count(entry, "eval_samples", 1);
    const ConfigNode unit = sourced(entry, "convergence_unit");
    const std::string unit_name = unit.as_choice({"samples", "epochs", "tokens"});
    w.convergence_unit = unit_name == "samples" ? ConvergenceUnit::samples
                         : unit_name == "epochs" ? ConvergenceUnit::epochs
                                                 : ConvergenceUnit::tokens;
    w.runs_per_result = static_cast<int>(sourced(entry, "runs_per_result").as_int(1, 1000));
    w.quality_target = sourced(entry, "quality_target").as_string();
    w.eval_on_the_clock = sourced(entry, "eval_on_the_clock").as_bool();
    w.eval_rule = read_eval_rule(entry);
    if (w.eval_rule.interval == EvalRule::Interval::epoch && !w.train_samples)
        train_samples.fail("a workload that evaluates every epoch needs its dataset size");
    w.model_parallel = read_model_parallel(entry);
    // Tokens convert to samples at the model's tokens per sample.
    if (w.convergence_unit == ConvergenceUnit::tokens && !w.model_parallel)
        unit.fail("a workload that converges in tokens needs model_parallel's tokens_per_sample");
    if (const auto layer_model = entry.optional("layer_model")) {
        layer_model->check_keys({"file", "samples_per_graph_sample", "source"});
        LayerModelRef ref;
        ref.file = layer_model->required("file").as_string();
        if (ref.file.find_first_of("/\\.") != std::string::npos || ref.file.empty())
            layer_model->required("file").fail("expected the stem of a file in models/data/workloads/");
        ref.samples_per_graph_sample = layer_model->required("samples_per_graph_sample").as_double(1e-6, 1e6);
        ref.source = layer_model->required("source").as_string();
        w.layer_model = ref;
    }
    if (entry.has("evaluation")) {
        if (!w.layer_model) entry.required("evaluation").fail("an evaluation description needs a layer_model");
        if (!w.eval_on_the_clock) entry.required("evaluation").fail("the evaluation is off the clock: nothing prices it");
        w.evaluation = read_evaluation(entry);
    }
    bool has_reference = false;
    for (const ConfigNode& layout : entry.required("published_parallelism").items()) {
        w.published_parallelism.push_back(read_published_layout(layout));
        for (const char* key : {"eval_batch", "eval_packing", "eval_cuda_graphs"})
            if (layout.has(key) && (!w.layer_model || !w.eval_on_the_clock))
                layout.required(key).fail("only a workload with a layer_model and an on-the-clock evaluation prices it");
        has_reference = has_reference || w.published_parallelism.back().system_family == reference_gpu().name;
    }
    // default_parallelism falls back to the reference GPU's layouts, so every workload needs at least one.
    if (!has_reference)
        entry.required("published_parallelism").fail("no layout for the reference GPU " + reference_gpu().name);
    return w;
}

const WorkloadCatalogData& catalog_data() {
    // Function-local static: loaded once, thread-safe, immutable afterwards, so the references find_workload()
    // hands out stay valid for the whole process.
    static const WorkloadCatalogData data = load_workload_catalog(data_file("workload_catalog.yaml"));
    return data;
}

}  // namespace

WorkloadCatalogData load_workload_catalog(const std::filesystem::path& path) {
    const ConfigNode root = load_reference_file(path, {"workloads"});
    WorkloadCatalogData out;
    std::vector<std::string> taken;   // normalized names and aliases, to refuse one meaning two workloads
    auto claim = [&](const ConfigNode& where, const std::string& canonical) {
        const std::string key = name_key(where.as_string());
        if (std::find(taken.begin(), taken.end(), key) != taken.end())
            where.fail("name or alias '" + where.as_string() + "' is already used by another workload");
        taken.push_back(key);
        out.aliases.emplace_back(key, canonical);
    };
    for (const ConfigNode& entry : root.required("workloads").items()) {
        Workload w = read_workload(entry);
        claim(entry.required("name"), w.name);
        if (entry.has("aliases"))
            for (const ConfigNode& alias : entry.required("aliases").items()) claim(alias, w.name);
        out.workloads.push_back(std::move(w));
    }
    if (out.workloads.empty()) root.required("workloads").fail("the catalog has no workloads");
    return out;
}

const std::vector<Workload>& workload_catalog() { return catalog_data().workloads; }

std::vector<std::string> workload_names() {
    std::vector<std::string> names;
    for (const Workload& w : workload_catalog()) names.push_back(w.name);
    return names;
}

const Workload& find_workload(std::string_view name) {
    const std::string key = name_key(name);
    for (const auto& [alias, canonical] : catalog_data().aliases)
        if (alias == key)
            for (const Workload& w : workload_catalog())
                if (w.name == canonical) return w;
    std::string valid;
    for (const std::string& n : workload_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("unknown workload '" + std::string(name) + "'; valid workloads: " + valid +
                     " (aliases: ssd = retinanet, sd = stable_diffusion, lora = llama2_70b_lora, gpt3_175b = gpt3)",
                     Field::workload);
}

}  // namespace ttsim
