// Workloads as layer graphs, described in data. A description is a YAML mapping:
//
//   about: one line                       # shipped files: required, with `sources:`
//   sources: {KEY: "repository @commit path / paper / page", ...}
//   family: {value: transformer_decoder, source: KEY}
//   sample_unit: {value: "one 8192-token sequence", source: KEY}
//   training:                             # optional; defaults: bf16, 2-byte activations/weights, no graphs
//     precision: {value: fp8, source: ...}              # bf16 | fp8: the tensor-core rate of GEMMs and convs
//     activation_bytes / weight_bytes / frozen_weight_bytes: {value: 2, source: ...}
//     cuda_graphs: {value: per_layer, source: ...}      # none | per_layer | segmented | full_iteration
//     recompute: {value: none, source: ...}             # none | full
//   architecture: {...}                   # the family's parameters (see families.hpp)
//
// Every leaf may be {value, source} or, in a user's own mapping, a plain value; the shipped files in
// models/data/workloads/ must cite a source for every leaf (load_shipped_layer_workload checks it).
// Families: transformer_encoder (BERT), transformer_decoder (Llama, GPT; LoRA optional), unet (SD v2),
// conv_detector (RetinaNet: ResNeXt backbone + FPN + heads). Code never looks at a workload's name.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "models/workloads/layers/layer_graph.hpp"
#include "sim/config.hpp"

namespace ttsim::layers {

// Builds the graph a description gives, for `options`. `name` labels the graph (the file stem for files).
// Malformed descriptions (unknown family or key, a missing parameter, TP asked of a family without tensor
// parallelism) are InputErrors naming the key.
LayerGraph build_layer_graph(const ConfigNode& description, const std::string& name, const BuildOptions& options = {});

// A description file; `require_sources` refuses any leaf without a non-blank source.
LayerGraph load_layer_workload(const std::filesystem::path& path, const BuildOptions& options = {},
                               bool require_sources = false);

// models/data/workloads/<stem>.yaml (stems: shipped_layer_workloads()), sources required.
LayerGraph load_shipped_layer_workload(std::string_view stem, const BuildOptions& options = {});

// The description alone (parsed and, with `require_sources`, checked), for callers that build many graphs of one
// workload (a layout search): build_layer_graph(description, stem, options) for each.
ConfigNode load_layer_description(const std::filesystem::path& path, bool require_sources = false);
ConfigNode load_shipped_layer_description(std::string_view stem);
std::vector<std::string> shipped_layer_workloads();

// Throws InputError at the first leaf under `node` that is not {value, source} with a non-blank source.
void require_sourced_leaves(const ConfigNode& node);

}  // namespace ttsim::layers
