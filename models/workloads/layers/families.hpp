// Internal to models/workloads/layers: the family builders and the helpers they read parameters with.
// Each builder reads its `architecture:` mapping (rejecting unknown keys) and fills graph.layers for
// graph.options; layer_workload.cpp picks the builder by the description's `family`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workloads/layers/layer_graph.hpp"
#include "sim/config.hpp"

namespace ttsim::layers {

// The value of `key`: the `value` of a {value, source} mapping, or the node itself.
ConfigNode param(const ConfigNode& parent, std::string_view key);
std::optional<ConfigNode> optional_param(const ConfigNode& parent, std::string_view key);
// The largest value any architecture count may take (a width, a vocabulary, a sequence, a channel count): 2^20 =
// 1,048,576, about 57x the widest published dense model's hidden size and 14x its FFN (PaLM 540B: 18,432 and
// 73,728), 4x the largest vocabulary (Gemma: 256,000), and a 1M-token training sequence. It keeps a decoder's
// products in 64-bit integers (a block's 12 x hidden^2 weights over 1,024 layers is under 2^54), so a typo such as
// hidden: 2147483648 is refused at its key instead of overflowing a parameter count.
inline constexpr std::int64_t kMaxModelDimension = std::int64_t{1} << 20;
// The largest image or latent side, pixels: 2^16 (an image of 65,536 x 65,536; SD v2 trains 512 x 512 images as
// 64 x 64 latents, RetinaNet 800 x 800). The convolution families are read from the shipped catalog only (a user's
// model is a decoder), so their side^2 x channels x batch products are not bounded for arbitrary input here.
inline constexpr std::int64_t kMaxImageSide = std::int64_t{1} << 16;

std::int64_t count_param(const ConfigNode& parent, std::string_view key, std::int64_t min = 1,
                         std::int64_t max = kMaxModelDimension);
std::int64_t count_param_or(const ConfigNode& parent, std::string_view key, std::int64_t fallback,
                            std::int64_t min = 0);
double number_param_or(const ConfigNode& parent, std::string_view key, double fallback, double min, double max);
bool bool_param_or(const ConfigNode& parent, std::string_view key, bool fallback);
std::vector<std::int64_t> count_list_param(const ConfigNode& parent, std::string_view key);

// The most transformer layers a model may have: 8x the deepest published dense models (GPT-3 175B 96, Megatron-
// Turing NLG 530B 105, PaLM 540B 118, Llama 3.1 405B 126 layers; their papers and configs). Beyond it a value is a
// typo, and a graph of millions of layers would take minutes and gigabytes to build before it is refused.
inline constexpr std::int64_t kMaxTransformerLayers = 1024;

// `value` divided by `parts`, which must divide it (InputError at `where` naming `what` otherwise).
std::int64_t split_evenly(std::int64_t value, std::int64_t parts, const ConfigNode& where, const std::string& what);

// Families without tensor/context parallelism refuse TP or CP > 1.
void require_data_parallel_only(const LayerGraph& graph, const ConfigNode& where);

void build_transformer_encoder(const ConfigNode& architecture, LayerGraph& graph);
void build_transformer_decoder(const ConfigNode& architecture, LayerGraph& graph);
void build_unet(const ConfigNode& architecture, LayerGraph& graph);
void build_conv_detector(const ConfigNode& architecture, LayerGraph& graph);

}  // namespace ttsim::layers
