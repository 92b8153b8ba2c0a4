// Compute profile of one (workload, GPU) pair: how long forward+backward of one micro step takes on one GPU,
// and the fixed per-step costs around it. Physics first, few parameters, all calibrated (models/calibration).
//
//   micro-step compute [s] = FLOPs(x) / (peak FLOP/s * f(x)),   f(x) = f_max * x / (x + x_half)
//     x = samples per GPU per micro step = per-rank micro batch / (TP * CP) (a TP/CP group shares each sample)
//     => time = FLOP_per_sample / (peak * f_max) * (x + x_half): linear in x, with a fixed part that stands for
//        kernels too small to fill the GPU (launch-bound, latency-bound work) at small per-GPU batches.
//   per optimizer step  [s] = fixed_step_seconds (host overhead, launches, data loader, loss-scale checks)
//                            + optimizer bytes per GPU / HBM bandwidth (the optimizer is memory bound: it reads
//                              and writes master weights, two Adam/LAMB moments and the gradient).
//
// Peak FLOP/s: the catalog's FP8 figure when the layout runs FP8 (LoRA on NVIDIA), else dense BF16.
// GPUs without v4.1 results (GB200, MI300X, A100) get a profile transferred from a calibrated one: the achieved
// fraction is kept (same software stack assumed), peak FLOP/s and HBM bandwidth come from the target GPU's
// catalog entry, fixed host costs are kept; the profile is marked `transferred_from` and predictions warn.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/layers/kernel_time.hpp"
#include "models/workloads/workload.hpp"

namespace ttsim {

// What a calibrated profile was fitted on: the span of per-GPU batches (x, samples per GPU per micro step) and of
// GPU counts of its results. Outside it a prediction extrapolates the fitted curve, and says so.
struct CalibratedRange {
    double min_samples_per_gpu = 0, max_samples_per_gpu = 0;
    int min_gpus = 0, max_gpus = 0;
};

struct ComputeProfile {
    std::string workload;                  // canonical workload name, e.g. "bert"
    std::string gpu;                       // canonical GPU catalog name, e.g. "H100-SXM"

    // Fitted parameters.
    double max_flops_fraction = 0.4;       // f_max: achieved fraction of peak at large per-GPU batch (0..1]
    double half_saturation_samples = 1.0;  // x_half: samples per GPU per micro step at which f = f_max / 2
    double fixed_step_seconds = 0.005;     // per optimizer step, seconds
    // Extra per optimizer step when the job spans more than one scale-up domain (node): inter-node barrier and
    // NCCL proxy/network latency of the step's synchronisations, host-side network progress. ONE value shared by
    // every workload and GPU, fitted jointly over all multi-node results (calibration.cpp); 0 = not calibrated.
    double multi_node_step_seconds = 0.0;
    // Per run, once: what the clock counts besides steps and evaluations (input-pipeline warm-up after run_start,
    // the final metric computation, checkpoint writes). Shared by all workloads and GPUs when fitted; 0 = off.
    double run_overhead_seconds = 0.0;
    // Samples to converge where they come from the RCPs (PreparedScenario::samples_from_rcps) are multiplied by
    // this: how much later than the RCP mean the results this profile was fitted on converged (their published
    // samples_to_converge_mean against rcp_mean; fit options convergence-lag and pooled-convergence-lag,
    // calibration.cpp). 1 = the RCP mean as it is. A given convergence (a user's samples_to_train, a result's
    // published one) is never scaled.
    double convergence_factor = 1.0;
    // Absolute per-GPU step-time noise (standard deviation, seconds: OS/host jitter, independent of the step's
    // length). The slowest of N GPUs sets the pace: + step_jitter_seconds x E[max of N standard normals] per
    // step. Shared by all workloads and GPUs when fitted; 0 = off.
    double step_jitter_seconds = 0.0;

    // Per-GPU step-time coefficient of variation: the slowest of N GPUs stretches compute by 1 + cv x E[max of N
    // standard normals]. Shared by all profiles and fitted in the shipped calibration (see compute_profile.cpp).
    double step_jitter_cv = 0.01;
    // Who draws the step-time noise of step_jitter_seconds and step_jitter_cv: each GPU (false; N = GPUs) or each
    // node / scale-up domain as a whole (true; N = domains, so a single node has no straggler term). Host-side
    // noise (OS, Python, data loading, a slow or throttled server) hits a node's GPUs together, while kernels on
    // the GPUs of one node run in lock step. YAML: step_jitter_unit: gpu | node.
    bool step_jitter_per_node = false;
    // Not fitted (documented estimates; see compute_profile.cpp for the reasoning).
    double eval_fixed_seconds = 0.05;      // per evaluation: launch, metric all-reduce, host-side bookkeeping
    // One evaluation's forward passes cost this many times their training-forward price: post-processing per
    // sample (RetinaNet's box decoding and NMS), the eval batch, the gather of the predictions (eval-cost fit).
    double eval_forward_factor = 1.0;
    // Per iteration of the framework's evaluation loop (PreparedScenario::eval_steps): the loop's host work and
    // synchronisation besides the forward kernels (NeMo's validation_step over a global batch, BERT's sync per
    // batch); not fitted by the shipped calibration (0); a profile file may set it.
    double eval_step_seconds = 0.0;
    // With operator_eval_passes: eager host operations per evaluation sample beyond the catalog's count (the
    // framework's Python per layer and per sample that the layer graph does not hold), fitted per workload by the
    // operator calibration; inside the pass's max(GPU, host), so a GPU-bound pass does not pay it.
    double eval_host_kernels_per_sample = 0.0;
    double tp_comm_exposed_fraction = 0.3; // share of TP/CP collective time not hidden by TP comm overlap

    // The operator-level model (models/training/operator_step.hpp): kernel-class efficiencies and launch costs of
    // this GPU, shared by every workload on it, and a speed factor of this profile's software stack (kernel
    // times divided by it; 1 = the GPU's population). Set: predictions price the step from the workload's layer
    // graph and max_flops_fraction / half_saturation_samples are unused. YAML: `operator: {gemm, conv,
    // attention, memory, launch_seconds, graph_launch_seconds, speed}`.
    std::optional<layers::Efficiency> operator_efficiency;
    double operator_speed = 1.0;
    // A software stack's offset on top (ProfileSet::stack_speeds, applied per result
    // or by `--like`, never stored in a profile): divides every kernel time, per-kernel overheads included, where
    // operator_speed (the GPU family's) divides only the roofs (operator_step.cpp pass_seconds).
    double operator_stack_speed = 1.0;
    // Operator model: the fixed per-step host cost (fixed_step_seconds) runs on the host while the GPU works
    // through what was already queued, so a pass takes max(GPU kernels, host launches + its share of the fixed
    // cost) instead of adding it (not fitted by the shipped calibration; a profile file may set it). YAML:
    // `operator: {..., host_overlap: true}`.
    bool operator_host_overlap = false;
    // Operator model: the same, only for a step that replays one CUDA graph for the whole iteration (forward,
    // backward and optimizer captured, so nothing in it waits on the host): the host's per-step work (data
    // loader, loop, logging) runs while the graph replays and the step takes max(GPU step, that work).
    // Elsewhere the cost is added: an eager or segmented step synchronises with the host (loss-scale checks,
    // the optimizer's host logic). The operator calibration sets it; YAML `operator: {..., graph_host_overlap: true}`.
    bool operator_graph_host_overlap = false;
    // Operator model: an evaluation runs the framework's own passes (Workload::evaluation: its batch, rows and
    // launch mode, operator_step.hpp EvalTable) instead of the training micro step's forward (the operator
    // calibration sets it). YAML: `operator: {..., eval_passes: true}`.
    bool operator_eval_passes = false;

    // Relative standard deviation of this profile's predicted step time from the uncertainty of the fitted
    // parameters (a fraction: 0.03 = 3 %), propagated from the fit's covariance (Laplace approximation at the
    // posterior mode). One of the independent log-space terms of a prediction's p10/p90 band. 0 = unknown (the
    // band then carries no parameter term). YAML: `parameter_sd: 0.03` (optional, >= 0).
    double parameter_sd = 0.0;
    // The RMS log error of the fitted results of this profile's workload and GPU under the fit that wrote it, and
    // their count: the cell's own misfit, which a prediction's model-error term never falls below
    // (prediction_band.hpp). 0 results: none fitted. YAML: `fit_residual: 0.05`, `fit_results: 12` (optional).
    double fit_residual = 0.0;
    int fit_results = 0;

    std::optional<std::string> transferred_from;   // set when derived from another GPU's calibration
    // Set by calibration (YAML: fitted_samples_per_gpu: [min, max], fitted_gpus: [min, max]); a transferred
    // profile keeps its source's. Unset: no range warnings.
    std::optional<CalibratedRange> calibrated_range;
};

// Warnings for a prediction at `samples_per_gpu` and `gpus` outside the profile's calibrated range (empty when
// inside, or when the profile has no range).
std::vector<std::string> extrapolation_warnings(const ComputeProfile& profile, double samples_per_gpu, int gpus);

// Optimizer memory traffic per trainable parameter per step, bytes: fp32 master weight (read+write 8), two fp32
// moments (read+write 16), fp16/bf16 gradient read (2) and fp16/bf16 weight copy write (2) = 28 bytes (Adam,
// LAMB; LAMB's extra norm pass is small). Source: mixed-precision Adam/LAMB state layout (apex FusedAdam/LAMB).
inline constexpr double kOptimizerBytesPerParam = 28.0;

// Peak FLOP/s the profile scales against for this layout (FP8 when fp8 is set and the GPU has it).
double peak_flops(const GpuSpec& gpu, bool fp8);

// Forward+backward seconds of one micro step on one GPU at `samples_per_gpu` (= x above, > 0).
double micro_step_compute_seconds(const ComputeProfile& profile, const Workload& workload, const GpuSpec& gpu,
                                  bool fp8, double samples_per_gpu);

// Forward-only seconds for `samples_per_gpu` evaluation samples on one GPU (same efficiency curve).
double forward_seconds(const ComputeProfile& profile, const Workload& workload, const GpuSpec& gpu, bool fp8,
                       double samples_per_gpu);

// Optimizer step seconds on one GPU: optimizer bytes (sharded over `optimizer_shards` ranks with the distributed
// optimizer, else 1) / HBM bandwidth.
double optimizer_seconds(const Workload& workload, const GpuSpec& gpu, int optimizer_shards);

// Calibrated (or transferred) profiles keyed by (workload, GPU), plus where they came from.
class ProfileSet {
public:
    void add(ComputeProfile profile);
    // The profile for (workload, gpu). When missing, transfers from the calibrated profile of the same workload
    // on the nearest GPU (by peak BF16 FLOP/s, preferring H100-SXM at ties) and records a warning text in
    // `transfer_note`; none calibrated for the workload at all -> InputError.
    ComputeProfile find(const Workload& workload, const GpuSpec& gpu, std::string* transfer_note = nullptr) const;
    bool contains(const std::string& workload, const std::string& gpu) const;
    const std::map<std::pair<std::string, std::string>, ComputeProfile>& all() const { return profiles_; }

    std::string header_comment;            // provenance (data, filter, date, residual), written into YAML
    // Operator model with per-stack speeds (operator calibration): "<submitter>/<GPU family>" ->
    // factor on the GPU's operator_speed for results (and `--like` predictions) of that software stack.
    // YAML: `stacks: [{stack: NVIDIA/H100-SXM, speed: 1.03}, ...]`.
    std::map<std::string, double> stack_speeds;

    // YAML: one file `profiles.yaml` under a directory; strict (unknown keys -> InputError with file:line).
    static ProfileSet load_file(const std::filesystem::path& file);
    static ProfileSet load_dir(const std::filesystem::path& dir);
    void save_file(const std::filesystem::path& file) const;
    // The shipped full-data calibration: <source root>/models/profiles/profiles.yaml (env TTSIM_PROFILES_DIR
    // overrides the directory).
    static std::filesystem::path default_dir();

private:
    std::map<std::pair<std::string, std::string>, ComputeProfile> profiles_;
};

// A profile for `target` derived from `source` calibrated on another GPU (rule in the header comment).
ComputeProfile transfer_profile(const ComputeProfile& source, const GpuSpec& target);

}  // namespace ttsim
