#include "models/compute/compute_profile.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "sim/file_reading.hpp"
#include "sim/units.hpp"

namespace ttsim {

// Why the unfitted defaults in ComputeProfile are what they are (estimates, not fitted; the v4.1 data cannot
// separate them from the fitted terms):
//  - step_jitter_cv 1%: typical run-to-run per-step spread of a synchronous data-parallel step on a quiet DGX
//    (clock/thermal variation, OS noise); it matters only through the expected maximum over many GPUs or nodes.
//    The shipped calibration FITS it as a shared parameter, drawn per node, and finds ~7%: far above real host
//    noise, so the fitted
//    value is best read as the size of every step cost that grows like the expected maximum of N normals
//    (~sqrt(2 ln N), N = nodes), stragglers included, not as a measured noise level. 1% per GPU stays the default
//    of a profile that does not set it.
//  - eval_fixed_seconds 50 ms: one evaluation launches a forward pass, all-reduces a metric and logs; at 3472
//    GPUs BERT's eval compute is a few sequences per GPU, so this fixed part dominates there.
//  - tp_comm_exposed_fraction 0.3: NeMo's TP communication overlap (NVIDIA LoRA configs) hides most of the
//    tensor-parallel all-gather/reduce-scatter behind GEMMs; 30% exposed is our estimate.

double peak_flops(const GpuSpec& gpu, bool fp8) {
    if (fp8 && gpu.fp8_dense_flops) return *gpu.fp8_dense_flops;
    return gpu.bf16_dense_flops;
}

double micro_step_compute_seconds(const ComputeProfile& profile, const Workload& workload, const GpuSpec& gpu,
                                  bool fp8, double samples_per_gpu) {
    TTSIM_ASSERT(samples_per_gpu > 0, "micro step needs a positive per-GPU batch");
    const double per_sample = workload.train_flops_per_sample / (peak_flops(gpu, fp8) * profile.max_flops_fraction);
    return per_sample * (samples_per_gpu + profile.half_saturation_samples);
}

double forward_seconds(const ComputeProfile& profile, const Workload& workload, const GpuSpec& gpu, bool fp8,
                       double samples_per_gpu) {
    if (samples_per_gpu <= 0) return 0.0;
    const double per_sample = workload.forward_flops_per_sample / (peak_flops(gpu, fp8) * profile.max_flops_fraction);
    // Forward is a third of the train FLOPs; the launch-bound part scales the same way.
    return per_sample * (samples_per_gpu + profile.half_saturation_samples);
}

double optimizer_seconds(const Workload& workload, const GpuSpec& gpu, int optimizer_shards) {
    TTSIM_ASSERT(optimizer_shards >= 1, "optimizer shards must be >= 1");
    const double bytes = static_cast<double>(workload.trainable_params) * kOptimizerBytesPerParam / optimizer_shards;
    return bytes / gpu.hbm_bandwidth;
}

std::vector<std::string> extrapolation_warnings(const ComputeProfile& profile, double samples_per_gpu, int gpus) {
    std::vector<std::string> out;
    if (!profile.calibrated_range) return out;
    const CalibratedRange& r = *profile.calibrated_range;
    auto number = [](double v) { return units::format_number(v, 3); };
    // The operator model prices kernels by their roofs wherever it goes; what it extrapolates are the terms fitted
    // at the results' batches and scales (per-kernel and per-step costs, stragglers), which the hold-out measures.
    // Its range is the workload's results on every GPU (operator_fit.cpp), so the text names no GPU.
    const bool operator_model = profile.operator_efficiency.has_value();
    const std::string whose = operator_model ? profile.workload + " (on any GPU)"
                                             : profile.workload + " on " +
                                                   (profile.transferred_from ? *profile.transferred_from : profile.gpu);
    const std::string what = operator_model ? " operator profiles were" : " profile was";
    // A relative margin, so a batch printed and read back with rounding does not warn.
    if (samples_per_gpu < r.min_samples_per_gpu * (1 - 1e-9))
        out.push_back(number(samples_per_gpu) + " samples per GPU per micro step is below the smallest the " + whose + what +
                      " fitted on (" + number(r.min_samples_per_gpu) + "): " +
                      (operator_model ? "small per-GPU batches are where the operator model's hold-out misses most "
                                        "('ttsim validate', tables (b) and (b''))"
                                      : "the step time extrapolates the fitted curve ('ttsim validate' shows how far "
                                        "such extrapolations have missed)"));
    else if (samples_per_gpu > r.max_samples_per_gpu * (1 + 1e-9))
        out.push_back(number(samples_per_gpu) + " samples per GPU per micro step is above the largest the " + whose + what +
                      " fitted on (" + number(r.max_samples_per_gpu) + "): " +
                      (operator_model ? "its kernels are priced by their roofs, its per-step costs as fitted at smaller batches"
                                      : "the step time extrapolates the fitted curve"));
    if (gpus > r.max_gpus)
        out.push_back(std::to_string(gpus) + " GPUs is beyond the largest " + whose + " result the" + what +
                      " fitted on (" + std::to_string(r.max_gpus) + " GPUs): " +
                      (operator_model ? "its collectives are simulated at this scale, its per-step and per-run costs "
                                        "and straggler spread extrapolated ('ttsim validate' shows the hold-out)"
                                      : "scale-dependent costs are extrapolated"));
    return out;
}

ComputeProfile transfer_profile(const ComputeProfile& source, const GpuSpec& target) {
    ComputeProfile p = source;
    p.gpu = target.name;
    // Achieved fraction, saturation batch and host costs carry over; peak FLOP/s and HBM bandwidth are the
    // target's through peak_flops()/optimizer_seconds(), which is the scaling.
    p.transferred_from = source.transferred_from ? *source.transferred_from : source.gpu;
    return p;
}

void ProfileSet::add(ComputeProfile profile) {
    auto key = std::make_pair(profile.workload, profile.gpu);
    profiles_[key] = std::move(profile);
}

bool ProfileSet::contains(const std::string& workload, const std::string& gpu) const {
    return profiles_.count({workload, gpu}) > 0;
}

ComputeProfile ProfileSet::find(const Workload& workload, const GpuSpec& gpu, std::string* transfer_note) const {
    auto it = profiles_.find({workload.name, gpu.name});
    if (it != profiles_.end() && !it->second.transferred_from) return it->second;
    if (it != profiles_.end()) {
        if (transfer_note)
            *transfer_note = "no v4.1 calibration for " + gpu.name + "; " + workload.name + " profile transferred from " +
                             *it->second.transferred_from + " by scaling with peak FLOP/s and HBM bandwidth";
        return it->second;
    }
    const ComputeProfile* best = nullptr;
    double best_distance = 0;
    for (const auto& [key, profile] : profiles_) {
        if (key.first != workload.name || profile.transferred_from) continue;
        const GpuSpec& source = find_gpu(profile.gpu);
        const double distance = std::abs(std::log(source.bf16_dense_flops / gpu.bf16_dense_flops)) +
                                (profile.gpu == reference_gpu().name ? -1e-9 : 0.0);   // ties go to the reference
        if (!best || distance < best_distance) {
            best = &profile;
            best_distance = distance;
        }
    }
    if (!best)
        throw InputError("no calibrated compute profile for workload '" + workload.name +
                         "' in the profile set; run 'ttsim calibrate' or pass --profiles DIR");
    if (transfer_note)
        *transfer_note = "no v4.1 calibration for " + gpu.name + "; " + workload.name + " profile transferred from " +
                         best->gpu + " by scaling with peak FLOP/s and HBM bandwidth";
    return transfer_profile(*best, gpu);
}

std::filesystem::path ProfileSet::default_dir() {
    if (const char* env = std::getenv("TTSIM_PROFILES_DIR"); env && *env) return env;
    return std::filesystem::path(TTSIM_SOURCE_DIR) / "models" / "profiles";
}

ProfileSet ProfileSet::load_dir(const std::filesystem::path& dir) {
    const auto file = dir / "profiles.yaml";
    if (!regular_file_exists(file))
        throw InputError("profile file " + file.string() + " not found (write one with 'ttsim calibrate --out " +
                             dir.string() + "')",
                         Field::profiles);
    return load_file(file);
}

ProfileSet ProfileSet::load_file(const std::filesystem::path& file) {
    ConfigNode root = ConfigNode::load_file(file.string());
    root.check_keys({"format", "profiles", "stacks"});
    if (root.required("format").as_string() != "ttsim-compute-profiles-1")
        root.required("format").fail("expected 'ttsim-compute-profiles-1'");
    ProfileSet set;
    for (const ConfigNode& item : root.required("profiles").items()) {
        item.check_keys({"workload", "gpu", "max_flops_fraction", "half_saturation_samples", "fixed_step_seconds",
                         "multi_node_step_seconds", "run_overhead_seconds", "convergence_factor", "step_jitter_seconds", "step_jitter_cv", "step_jitter_unit", "eval_fixed_seconds", "eval_forward_factor", "eval_step_seconds", "eval_host_kernels_per_sample", "tp_comm_exposed_fraction", "parameter_sd", "fit_residual", "fit_results", "transferred_from",
                         "fitted_samples_per_gpu", "fitted_gpus", "operator"});
        ComputeProfile p;
        p.workload = find_workload(item.required("workload").as_string()).name;
        p.gpu = find_gpu(item.required("gpu").as_string()).name;
        p.max_flops_fraction = item.required("max_flops_fraction").as_double(1e-4, 1.0);
        p.half_saturation_samples = item.required("half_saturation_samples").as_double(0.0, 1e6);
        p.fixed_step_seconds = item.required("fixed_step_seconds").as_double(0.0, 100.0);
        if (auto n = item.optional("multi_node_step_seconds")) p.multi_node_step_seconds = n->as_double(0.0, 100.0);
        if (auto n = item.optional("run_overhead_seconds")) p.run_overhead_seconds = n->as_double(0.0, 1e5);
        if (auto n = item.optional("convergence_factor")) p.convergence_factor = n->as_double(0.5, 2.0);
        if (auto n = item.optional("step_jitter_seconds")) p.step_jitter_seconds = n->as_double(0.0, 100.0);
        if (auto n = item.optional("step_jitter_cv")) p.step_jitter_cv = n->as_double(0.0, 1.0);
        if (auto n = item.optional("step_jitter_unit")) {
            const std::string unit = n->as_string();
            if (unit != "gpu" && unit != "node") n->fail("expected 'gpu' or 'node'");
            p.step_jitter_per_node = unit == "node";
        }
        if (auto n = item.optional("eval_fixed_seconds")) p.eval_fixed_seconds = n->as_double(0.0, 1e4);
        if (auto n = item.optional("eval_forward_factor")) p.eval_forward_factor = n->as_double(0.1, 100.0);
        if (auto n = item.optional("eval_step_seconds")) p.eval_step_seconds = n->as_double(0.0, 100.0);
        if (auto n = item.optional("eval_host_kernels_per_sample")) p.eval_host_kernels_per_sample = n->as_double(0.0, 1e7);
        if (auto n = item.optional("tp_comm_exposed_fraction")) p.tp_comm_exposed_fraction = n->as_double(0.0, 1.0);
        // A relative standard deviation: no upper physical bound, but a step-time sd of 100x is no calibration.
        if (auto n = item.optional("parameter_sd")) p.parameter_sd = n->as_double(0.0, 100.0);
        // An RMS log error: 10 is a factor e^10 off, no calibration.
        if (auto n = item.optional("fit_residual")) p.fit_residual = n->as_double(0.0, 10.0);
        if (auto n = item.optional("fit_results")) p.fit_results = static_cast<int>(n->as_int(0, 1000000));
        if (auto n = item.optional("transferred_from")) p.transferred_from = find_gpu(n->as_string()).name;
        if (auto op = item.optional("operator")) {
            op->check_keys({"gemm", "conv", "attention", "memory", "launch_seconds", "graph_launch_seconds",
                            "kernel_overhead_seconds", "eval_launch_seconds", "roof_exponent", "tensor_memory", "streaming_overhead_seconds", "speed", "host_overlap", "graph_host_overlap", "eval_passes"});
            layers::Efficiency e;
            e.gemm = op->required("gemm").as_double(1e-3, 1.0);
            e.conv = op->required("conv").as_double(1e-3, 1.0);
            e.attention = op->required("attention").as_double(1e-3, 1.0);
            e.memory = op->required("memory").as_double(1e-3, 1.0);
            e.launch_seconds = op->required("launch_seconds").as_double(0.0, 1.0);
            e.graph_launch_seconds = op->required("graph_launch_seconds").as_double(0.0, 1.0);
            if (auto k = op->optional("kernel_overhead_seconds")) e.kernel_overhead_seconds = k->as_double(0.0, 1e-3);
            if (auto k = op->optional("eval_launch_seconds")) e.eval_launch_seconds = k->as_double(0.0, 1.0);
            if (auto k = op->optional("roof_exponent")) {
                // 0: off (the larger roof); below 1 the p-norm would exceed the sum of the roofs.
                e.roof_exponent = k->as_double(0.0, 64.0);
                if (e.roof_exponent > 0 && e.roof_exponent < 1) k->fail("roof_exponent is 0 (off) or from 1 to 64");
            }
            if (auto k = op->optional("tensor_memory")) e.tensor_memory = k->as_double(0.0, 1.0);
            if (auto k = op->optional("streaming_overhead_seconds")) e.streaming_overhead_seconds = k->as_double(0.0, 1e-3);
            p.operator_efficiency = e;
            if (auto speed = op->optional("speed")) p.operator_speed = speed->as_double(1e-3, 1e3);
            if (auto overlap = op->optional("host_overlap")) p.operator_host_overlap = overlap->as_bool();
            if (auto overlap = op->optional("graph_host_overlap")) p.operator_graph_host_overlap = overlap->as_bool();
            if (p.operator_host_overlap && p.operator_graph_host_overlap)
                op->fail("host_overlap (every launch mode) and graph_host_overlap (whole-iteration graphs only) exclude each other");
            if (auto passes = op->optional("eval_passes")) p.operator_eval_passes = passes->as_bool();
        }
        const auto batches = item.optional("fitted_samples_per_gpu");
        const auto counts = item.optional("fitted_gpus");
        if (batches.has_value() != counts.has_value())
            item.fail("fitted_samples_per_gpu and fitted_gpus go together (the range a calibration was fitted on)");
        if (batches) {
            auto pair = [](const ConfigNode& node) {
                const auto values = node.items();
                if (values.size() != 2) node.fail("expected [min, max]");
                return std::make_pair(values[0], values[1]);
            };
            CalibratedRange r;
            const auto [b_lo, b_hi] = pair(*batches);
            r.min_samples_per_gpu = b_lo.as_double(1e-6, 1e6);
            r.max_samples_per_gpu = b_hi.as_double(r.min_samples_per_gpu, 1e6);
            const auto [g_lo, g_hi] = pair(*counts);
            r.min_gpus = static_cast<int>(g_lo.as_int(1, 1 << 24));
            r.max_gpus = static_cast<int>(g_hi.as_int(r.min_gpus, 1 << 24));
            p.calibrated_range = r;
        }
        if (set.contains(p.workload, p.gpu)) item.fail("duplicate profile for " + p.workload + " on " + p.gpu);
        set.add(std::move(p));
    }
    if (const auto stacks = root.optional("stacks"))
        for (const ConfigNode& item : stacks->items()) {
            item.check_keys({"stack", "speed"});
            const std::string stack = item.required("stack").as_string();
            if (set.stack_speeds.count(stack)) item.fail("duplicate stack " + stack);
            set.stack_speeds[stack] = item.required("speed").as_double(1e-3, 1e3);
        }
    return set;
}

void ProfileSet::save_file(const std::filesystem::path& file) const {
    std::ostringstream out;
    std::istringstream header(header_comment);
    for (std::string line; std::getline(header, line);) out << "# " << line << "\n";
    out << "format: ttsim-compute-profiles-1\nprofiles:\n";
    out << std::setprecision(10);
    for (const auto& [key, p] : profiles_) {
        out << "  - workload: " << p.workload << "\n"
            << "    gpu: " << p.gpu << "\n"
            << "    max_flops_fraction: " << p.max_flops_fraction << "\n"
            << "    half_saturation_samples: " << p.half_saturation_samples << "\n"
            << "    fixed_step_seconds: " << p.fixed_step_seconds << "\n"
            << "    multi_node_step_seconds: " << p.multi_node_step_seconds << "\n"
            << "    run_overhead_seconds: " << p.run_overhead_seconds << "\n"
            << "    step_jitter_seconds: " << p.step_jitter_seconds << "\n"
            << "    step_jitter_cv: " << p.step_jitter_cv << "\n"
            << "    step_jitter_unit: " << (p.step_jitter_per_node ? "node" : "gpu") << "\n"
            << "    eval_fixed_seconds: " << p.eval_fixed_seconds << "\n"
            << "    tp_comm_exposed_fraction: " << p.tp_comm_exposed_fraction << "\n";
        if (p.convergence_factor != 1.0) out << "    convergence_factor: " << p.convergence_factor << "\n";
        if (p.eval_forward_factor != 1.0) out << "    eval_forward_factor: " << p.eval_forward_factor << "\n";
        if (p.eval_step_seconds != 0.0) out << "    eval_step_seconds: " << p.eval_step_seconds << "\n";
        if (p.eval_host_kernels_per_sample != 0.0)
            out << "    eval_host_kernels_per_sample: " << p.eval_host_kernels_per_sample << "\n";
        if (p.parameter_sd != 0.0) out << "    parameter_sd: " << p.parameter_sd << "\n";
        if (p.fit_results > 0)
            out << "    fit_residual: " << p.fit_residual << "\n    fit_results: " << p.fit_results << "\n";
        if (p.transferred_from) out << "    transferred_from: " << *p.transferred_from << "\n";
        if (const auto& e = p.operator_efficiency) {
            out << "    operator: {gemm: " << e->gemm << ", conv: " << e->conv << ", attention: " << e->attention
                << ", memory: " << e->memory << ", launch_seconds: " << e->launch_seconds
                << ", graph_launch_seconds: " << e->graph_launch_seconds
                << ", kernel_overhead_seconds: " << e->kernel_overhead_seconds;
            if (e->eval_launch_seconds > 0) out << ", eval_launch_seconds: " << e->eval_launch_seconds;
            if (e->roof_exponent > 0) out << ", roof_exponent: " << e->roof_exponent;
            if (e->tensor_memory > 0) out << ", tensor_memory: " << e->tensor_memory;
            if (e->streaming_overhead_seconds > 0) out << ", streaming_overhead_seconds: " << e->streaming_overhead_seconds;
            out << ", speed: " << p.operator_speed
                << ", host_overlap: " << (p.operator_host_overlap ? "true" : "false")
                << (p.operator_graph_host_overlap ? ", graph_host_overlap: true" : "")
                << (p.operator_eval_passes ? ", eval_passes: true" : "") << "}\n";
        }
        if (const auto& r = p.calibrated_range)
            out << "    fitted_samples_per_gpu: [" << r->min_samples_per_gpu << ", " << r->max_samples_per_gpu << "]\n"
                << "    fitted_gpus: [" << r->min_gpus << ", " << r->max_gpus << "]\n";
    }
    if (!stack_speeds.empty()) out << "stacks:\n";
    for (const auto& [stack, speed] : stack_speeds) out << "  - {stack: \"" << stack << "\", speed: " << speed << "}\n";
    std::error_code ec;
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
    std::ofstream f(file);
    if (!f) throw InputError("cannot write " + file.string(), Field::output_dir);
    f << out.str();
    if (!f) throw InputError("error writing " + file.string(), Field::output_dir);
}

}  // namespace ttsim
