#include "models/workloads/layers/layer_workload.hpp"

#include <algorithm>
#include <map>

#include "models/data_dir.hpp"
#include "models/workloads/layers/families.hpp"
#include "models/workloads/layers/graph_builder.hpp"

namespace ttsim::layers {

ConfigNode param(const ConfigNode& parent, std::string_view key) {
    const ConfigNode node = parent.required(key);
    if (node.is_map() && node.has("value")) {
        node.check_keys({"value", "source"});
        return node.required("value");
    }
    return node;
}

std::optional<ConfigNode> optional_param(const ConfigNode& parent, std::string_view key) {
    if (!parent.has(key)) return std::nullopt;
    return param(parent, key);
}

std::int64_t count_param(const ConfigNode& parent, std::string_view key, std::int64_t min, std::int64_t max) {
    return param(parent, key).as_int(min, max);
}

std::int64_t count_param_or(const ConfigNode& parent, std::string_view key, std::int64_t fallback, std::int64_t min) {
    const auto node = optional_param(parent, key);
    return node ? node->as_int(min, kMaxModelDimension) : fallback;
}

double number_param_or(const ConfigNode& parent, std::string_view key, double fallback, double min, double max) {
    const auto node = optional_param(parent, key);
    return node ? node->as_double(min, max) : fallback;
}

bool bool_param_or(const ConfigNode& parent, std::string_view key, bool fallback) {
    const auto node = optional_param(parent, key);
    return node ? node->as_bool() : fallback;
}

std::vector<std::int64_t> count_list_param(const ConfigNode& parent, std::string_view key) {
    std::vector<std::int64_t> out;
    for (const ConfigNode& item : param(parent, key).items()) out.push_back(item.as_int(0, kMaxModelDimension));
    return out;
}

std::int64_t split_evenly(std::int64_t value, std::int64_t parts, const ConfigNode& where, const std::string& what) {
    if (parts < 1 || value % parts != 0)
        where.fail(what + ": " + std::to_string(value) + " does not split evenly into " + std::to_string(parts) + " parts");
    return value / parts;
}

void require_data_parallel_only(const LayerGraph& graph, const ConfigNode& where) {
    if (graph.options.tensor_parallel != 1 || graph.options.context_parallel != 1)
        where.fail("family '" + graph.family + "' has no tensor or context parallel model; use TP = CP = 1");
}

void require_sourced_leaves(const ConfigNode& node) {
    for (const std::string& key : node.keys()) {
        const ConfigNode child = node.required(key);
        if (child.is_map() && !child.has("value")) {
            require_sourced_leaves(child);   // a group of parameters (e.g. lora:)
            continue;
        }
        if (!child.is_map()) child.fail("expected {value: ..., source: ...} (shipped data cites a source)");
        child.check_keys({"value", "source"});
        const std::string source = child.required("source").as_string();
        if (source.find_first_not_of(" \t") == std::string::npos) child.required("source").fail("source must not be blank");
    }
}

namespace {

using Builder = void (*)(const ConfigNode&, LayerGraph&);

const std::map<std::string, Builder>& families() {
    static const std::map<std::string, Builder> table = {
        {"transformer_encoder", build_transformer_encoder},
        {"transformer_decoder", build_transformer_decoder},
        {"unet", build_unet},
        {"conv_detector", build_conv_detector},
    };
    return table;
}

TrainingFacts read_facts(const std::optional<ConfigNode>& training) {
    TrainingFacts f;
    if (!training) return f;
    training->check_keys({"precision", "activation_bytes", "weight_bytes", "frozen_weight_bytes", "cuda_graphs",
                          "recompute", "dropout_mask_bytes"});
    if (auto p = optional_param(*training, "precision"))
        f.precision = math_precision_named(p->as_choice(kPrecisionNames));
    f.activation_bytes = number_param_or(*training, "activation_bytes", f.activation_bytes, 1, 4);
    f.weight_bytes = number_param_or(*training, "weight_bytes", f.weight_bytes, 1, 4);
    f.frozen_weight_bytes = number_param_or(*training, "frozen_weight_bytes", f.frozen_weight_bytes, 1, 4);
    f.dropout_mask_bytes = number_param_or(*training, "dropout_mask_bytes", f.dropout_mask_bytes, 0, 4);
    if (auto g = optional_param(*training, "cuda_graphs")) {
        const std::string mode = g->as_choice({"none", "per_layer", "segmented", "full_iteration"});
        f.cuda_graphs = mode == "per_layer"        ? CudaGraphs::per_layer
                        : mode == "segmented"      ? CudaGraphs::segmented
                        : mode == "full_iteration" ? CudaGraphs::full_iteration
                                                   : CudaGraphs::none;
        if (training->required("cuda_graphs").is_map() && training->required("cuda_graphs").has("source"))
            f.cuda_graphs_source = training->required("cuda_graphs").required("source").as_string();
    }
    if (auto r = optional_param(*training, "recompute")) {
        f.recompute = r->as_choice({"none", "full"}) == "full" ? Recompute::full : Recompute::none;
        if (training->required("recompute").is_map() && training->required("recompute").has("source"))
            f.recompute_source = training->required("recompute").required("source").as_string();
    }
    return f;
}

}  // namespace

LayerGraph build_layer_graph(const ConfigNode& description, const std::string& name, const BuildOptions& options) {
    description.check_keys({"about", "sources", "family", "sample_unit", "training", "architecture"});
    if (options.micro_batch < 1 || options.tensor_parallel < 1 || options.context_parallel < 1)
        throw InputError("micro batch, TP and CP must be >= 1");
    LayerGraph graph;
    graph.name = name;
    graph.options = options;
    const ConfigNode family = param(description, "family");
    graph.family = family.as_string();
    if (auto unit = optional_param(description, "sample_unit")) graph.sample_unit = unit->as_string();
    graph.facts = read_facts(description.optional("training"));
    if (options.precision) graph.facts.precision = *options.precision;
    if (options.attention_precision) graph.facts.attention_precision = *options.attention_precision;
    if (options.head_on_all_tokens && graph.family != "transformer_encoder")
        throw InputError("a masked-LM head on every token (head_tokens: all) applies to a transformer_encoder, not to '" +
                         name + "' (" + graph.family + ")");
    const auto it = families().find(graph.family);
    if (it == families().end()) {
        std::string valid;
        for (const auto& [known, builder] : families()) valid += (valid.empty() ? "" : ", ") + known;
        family.fail("unknown family '" + graph.family + "'; known families: " + valid);
    }
    it->second(description.required("architecture"), graph);
    finish_graph(graph);
    return graph;
}

LayerGraph load_layer_workload(const std::filesystem::path& path, const BuildOptions& options, bool require_sources) {
    return build_layer_graph(load_layer_description(path, require_sources), path.stem().string(), options);
}

ConfigNode load_layer_description(const std::filesystem::path& path, bool require_sources) {
    const ConfigNode root = ConfigNode::load_file(path.string());
    if (require_sources) {
        root.required("about").as_string();
        if (!root.required("sources").is_map()) root.required("sources").fail("expected a map of source keys");
        for (const char* key : {"family", "sample_unit", "training", "architecture"}) {
            const ConfigNode group = root.required(key);
            if (group.has("value")) {   // a single sourced leaf (family, sample_unit)
                group.check_keys({"value", "source"});
                if (group.required("source").as_string().find_first_not_of(" \t") == std::string::npos)
                    group.required("source").fail("source must not be blank");
            } else {
                require_sourced_leaves(group);
            }
        }
    }
    return root;
}

std::vector<std::string> shipped_layer_workloads() {
    std::vector<std::string> stems;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "workloads"))
        if (entry.path().extension() == ".yaml") stems.push_back(entry.path().stem().string());
    std::sort(stems.begin(), stems.end());
    return stems;
}

LayerGraph load_shipped_layer_workload(std::string_view stem, const BuildOptions& options) {
    return build_layer_graph(load_shipped_layer_description(stem), std::string(stem), options);
}

ConfigNode load_shipped_layer_description(std::string_view stem) {
    return load_layer_description(data_file("workloads/" + std::string(stem) + ".yaml"), true);
}

}  // namespace ttsim::layers
