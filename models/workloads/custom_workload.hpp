// A user's own model, described in a scenario: a transformer decoder given by its layer
// description (the transformer_decoder family of models/workloads/layers, as the shipped Llama2 file uses it),
// a fixed amount of training and a global batch. The scenario's `model:` mapping:
//
//   model:
//     name: decoder-7b                     # labels the output
//     graph:                               # a layer description (layer_workload.hpp), plain values allowed
//       family: transformer_decoder        # the only family a user model may use so far
//       training: {precision: bf16, cuda_graphs: none, recompute: none}   # optional; these are the defaults
//       architecture: {layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn: 11008, sequence: 4096,
//                      vocab: 32000}        # and the family's other keys (gated_ffn, norm, bias, ...)
//     train: {tokens: 2.0e12}              # or {samples: N}: what the run trains, fixed (no RCP table)
//     global_batch: {tokens: 4194304}      # or {samples: N}; tokens must be whole sequences
//     optimizer: adam                      # adam | lamb (optional, adam): mixed-precision state, 12 bytes per
//                                          # parameter, as the memory and optimizer models assume
//     gradients: fp32                      # fp32 | bf16 (optional, fp32): the gradients held per trainable
//                                          # parameter and reduced over data parallelism; fp32 is Megatron-LM's
//                                          # bf16 default, bf16 its --grad-reduce-in-bf16
//
// No evaluation is timed (none can be described yet). Every key is checked: unknown keys, wrong types and
// impossible values are InputErrors at file:line:key.
//
// The workload a user model becomes has no calibrated profile of its own: predictions price it with the
// operator efficiencies of the GPU (user_model_profile), never with the lumped curve.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "models/compute/compute_profile.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config.hpp"

namespace ttsim {

struct UserModel {
    std::shared_ptr<const Workload> workload;
    int global_batch = 0;                  // samples (sequences)
    std::string train_note;                // "2e12 tokens = 488,281,250 sequences of 4,096 tokens"
    std::string batch_note;
};

// Reads and checks `model:` (above); the layer graph is built once here so its errors point into the file.
UserModel load_user_model(const ConfigNode& model);

// A user model named by file where a workload name goes (`predict --workload my-70b.yaml`, a plan's
// `workload: my-70b.yaml`): a name ending in .yaml or .yml is a file, never a catalog workload.
bool names_model_file(const std::string& workload);
// Why only the operator model prices a user model: every refusal of the lumped model for one says it.
inline constexpr std::string_view kUserModelOperatorOnly =
    "a user model is priced by the operator model (its layer graph); the lumped model is a curve fitted per catalog "
    "workload";
// The model of such a file: a user-model scenario's `model:` mapping (so a shipped scenario such as
// scenarios/llama3.1-70b.yaml can be planned as it is), or, without one, the file's top level as the mapping
// above. Errors point into the file; a missing file is an InputError naming it.
UserModel load_user_model_file(const std::string& path);

// The profile a user model is priced with on `gpu`: the GPU's operator efficiencies and launch costs (one set
// per GPU, shared by all its workloads in an operator profile set) and its shared per-step terms (multi-node
// cost, stragglers, run overhead), with the median per-step fixed cost of the GPU's calibrated workloads (a
// framework's own per-step cost is a workload fact a user model does not state; the median keeps a fit's
// boundary values, e.g. 1e-5 s, and its largest stack from deciding it), the GPU family's speed offset, and no
// software stack's (the population's, 1). A GPU without profiles of its own gets the workloads' profiles transferred
// to it (ProfileSet::find). InputError (Field::profiles) when the set has no operator profile to price it with: a
// user model has no lumped curve to fall back on.
ComputeProfile user_model_profile(const ProfileSet& profiles, const Workload& workload, const GpuSpec& gpu);

// The profile any workload is priced with on `gpu`: a catalog workload's own (ProfileSet::find, transferred to a
// GPU without one), else, for a user model or a catalog workload the set has no fit of (GPT-3 in a profile set
// fitted to the other workloads), the GPU's shared physics (user_model_profile) with no convergence lag (nothing
// measured its convergence against the RCPs).
ComputeProfile workload_profile(const ProfileSet& profiles, const Workload& workload, const GpuSpec& gpu);

}  // namespace ttsim
