#include "models/calibration/fit_sanity.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace ttsim {

namespace {

constexpr int kCounts[] = {8, 16, 32, 64};
// Relative slack for rounding in the comparisons (step counts are whole, times are sums of doubles).
constexpr double kRounding = 1e-9;

struct Bound {
    const char* name;
    double value, low, high;
    bool low_open = false;   // value must exceed low
};

void check_bounds(const ComputeProfile& p, const std::vector<Bound>& bounds, std::vector<SanityViolation>& out) {
    for (const Bound& b : bounds) {
        const bool below = b.low_open ? !(b.value > b.low) : !(b.value >= b.low);
        if (below || !(b.value <= b.high))
            out.push_back({"range", p.workload, p.gpu,
                           fmt::format("{} = {:.6g}, outside its physical range {}{:g}, {:g}]", b.name, b.value,
                                       b.low_open ? "(" : "[", b.low, b.high),
                           {}});
    }
}

PredictionRequest series_request(const ComputeProfile& profile, int gpus) {
    PredictionRequest r;
    r.workload = profile.workload;
    r.system = profile.gpu;   // the GPU's preset system
    r.gpus = gpus;
    r.layout.mode = LayoutMode::published;
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

// The series of `base` (a published layout) with only its data parallelism changed: the same TP, CP, PP, micro
// batch, micro steps and recipe on every GPU, so the same kernels per sample.
ScalingSeries series_of(const ComputeProfile& profile, const PreparedScenario& base) {
    ScalingSeries series;
    for (const int gpus : kCounts) {
        ParallelismConfig layout = base.layout;
        const int replica = layout.tensor_parallel * layout.context_parallel * layout.pipeline_parallel;
        if (gpus % replica != 0)
            throw InputError(fmt::format("{} GPUs do not hold whole replicas of {} GPUs", gpus, replica));
        layout.data_parallel = gpus / replica;
        layout.global_batch = layout.data_parallel * layout.samples_per_micro_batch * layout.gradient_accumulation;
        const PreparedScenario s = prepare_with_layout(*base.workload, base.system, gpus, layout);
        series.predictions.push_back(evaluate(s, profile));
        series.straggler_sigmas.push_back(profile.step_jitter_per_node ? s.node_straggler_sigmas : s.straggler_sigmas);
    }
    return series;
}

double log_error(const PointError& e) { return std::abs(std::log1p(e.error)); }

}  // namespace

std::vector<SanityViolation> range_violations(const ComputeProfile& p) {
    std::vector<SanityViolation> out;
    check_bounds(p,
                 {{"fixed_step_seconds", p.fixed_step_seconds, 0, 100},
                  {"multi_node_step_seconds", p.multi_node_step_seconds, 0, 100},
                  {"run_overhead_seconds", p.run_overhead_seconds, 0, 1e5},
                  {"step_jitter_seconds", p.step_jitter_seconds, 0, 100},
                  {"step_jitter_cv", p.step_jitter_cv, 0, 1},
                  {"convergence_factor", p.convergence_factor, 0, 1e3, true},
                  {"eval_fixed_seconds", p.eval_fixed_seconds, 0, 1e4},
                  {"eval_forward_factor", p.eval_forward_factor, 0, 1e3, true},
                  {"eval_step_seconds", p.eval_step_seconds, 0, 100},
                  {"eval_host_kernels_per_sample", p.eval_host_kernels_per_sample, 0, 1e7},
                  {"tp_comm_exposed_fraction", p.tp_comm_exposed_fraction, 0, 1},
                  {"parameter_sd", p.parameter_sd, 0, 100}},
                 out);
    if (const auto& e = p.operator_efficiency) {
        // Each class's efficiency is a fraction of its roof on the reference GPU. The family's speed scales it and
        // the pricing holds the product at the roof (operator_step.cpp roof_over_speed), so a family fitted faster
        // than the reference never prices a kernel past its roof.
        check_bounds(p,
                     {{"operator speed", p.operator_speed, 0, 1e3, true},
                      {"gemm efficiency", e->gemm, 0, 1, true},
                      {"conv efficiency", e->conv, 0, 1, true},
                      {"attention efficiency", e->attention, 0, 1, true},
                      {"memory efficiency", e->memory, 0, 1, true},
                      {"tensor_memory efficiency", e->tensor_memory, 0, 1},
                      {"launch_seconds", e->launch_seconds, 0, 1, true},
                      {"graph_launch_seconds", e->graph_launch_seconds, 0, 1, true},
                      {"eval_launch_seconds", e->eval_launch_seconds, 0, 1},
                      {"kernel_overhead_seconds", e->kernel_overhead_seconds, 0, 1e-3},
                      {"streaming_overhead_seconds", e->streaming_overhead_seconds, 0, 1e-3}},
                     out);
    } else {
        check_bounds(p,
                     {{"max_flops_fraction", p.max_flops_fraction, 0, 1, true},
                      {"half_saturation_samples", p.half_saturation_samples, 0, 1e6}},
                     out);
    }
    return out;
}

ScalingSeries scaling_series(const ComputeProfile& profile) {
    // The published layout at 8 GPUs, its data parallelism scaled; where the convergence data do not reach 8x its
    // global batch, the 64-GPU published layout's instead.
    try {
        return series_of(profile, prepare(series_request(profile, 8)));
    } catch (const InputError&) {
        return series_of(profile, prepare(series_request(profile, 64)));
    }
}

std::vector<SanityViolation> scaling_violations(const ComputeProfile& profile, const ScalingSeries& series) {
    std::vector<SanityViolation> out;
    const std::vector<Prediction>& p = series.predictions;
    TTSIM_ASSERT(p.size() == std::size(kCounts) && series.straggler_sigmas.size() == p.size(), "a series of 8-64 GPUs");
    // Compute per sample per GPU: the step's compute over the samples each GPU trains in it. The exposed share of
    // the TP/CP collectives, which Prediction::compute_ms includes, is communication (rule 3 counts it).
    auto compute_per_sample = [](const Prediction& q) {
        return (q.compute_ms - q.tp_cp_exposed_ms) * q.gpus / q.global_batch;
    };
    const double base = compute_per_sample(p[0]);
    for (std::size_t i = 1; i < p.size(); ++i) {
        const double allowed =
            base * (1 + kMaxStepCv * std::max(0.0, series.straggler_sigmas[i] - series.straggler_sigmas[0]));
        const double at = compute_per_sample(p[i]);
        if (at > allowed * (1 + kRounding))
            out.push_back({"compute at scale", profile.workload, profile.gpu,
                           fmt::format("compute per sample at {} GPUs is {:.4g} ms, {:+.1f}% over 8 GPUs' {:.4g} ms "
                                       "(at most {:+.1f}% allowed: a step-time spread of {:g}%)",
                                       p[i].gpus, at, 100 * (at / base - 1), base, 100 * (allowed / base - 1),
                                       100 * kMaxStepCv),
                           {}});
    }
    const Prediction& small = p.front();
    const Prediction& large = p.back();
    const double gpu_ratio = static_cast<double>(large.gpus) / small.gpus;
    // Ideal: the 64-GPU run's steps each as long as the 8-GPU run's, less what a distributed optimizer saves (its
    // update runs on a 1/DP shard: the one part of the step that more GPUs shorten at a fixed batch per GPU).
    const double optimizer_saving = std::max(0.0, small.optimizer_ms - large.optimizer_ms);
    const double step_gain = optimizer_saving > 0 ? small.step_ms / (small.step_ms - optimizer_saving) : 1.0;
    const double steps_ratio = static_cast<double>(small.steps) / large.steps * step_gain;
    const double eval_ratio =
        small.evaluations > 0 && large.evaluations > 0 ? gpu_ratio * small.evaluations / large.evaluations : 0.0;
    const double ideal = std::max(steps_ratio, eval_ratio);
    // Minutes: the 8-GPU run's compute and evaluations, against the 64-GPU run's steps paying their compute (its
    // straggler stretch held by rule 2) and all their communication, and its evaluations each as long as at 8.
    const double eval_each = small.evaluations > 0 ? small.eval_minutes / small.evaluations : 0.0;
    const double bound_small = small.steps * small.compute_ms / 6e4 + small.eval_minutes;
    const double bound_large = large.steps * (large.compute_ms + large.comm_total_ms + large.tp_cp_comm_ms) / 6e4 +
                               large.evaluations * eval_each;
    const double comm_bound = bound_small / bound_large;
    const double speedup = small.ttt_minutes / large.ttt_minutes;
    const std::string numbers = fmt::format(
        "{:.2f}x ({:.3g} -> {:.3g} min; run overhead {:.3g} min, evaluations {:.3g} -> {:.3g} min{}); bounds: "
        "communication-bound {:.2f}x, ideal {:.2f}x",
        speedup, small.ttt_minutes, large.ttt_minutes, large.run_overhead_minutes, small.eval_minutes,
        large.eval_minutes,
        optimizer_saving > 0
            ? fmt::format("; optimizer update {:.3g} -> {:.3g} ms a step", small.optimizer_ms, large.optimizer_ms)
            : "",
        comm_bound, ideal);
    if (speedup > ideal * (1 + kRounding))
        out.push_back({"speedup", profile.workload, profile.gpu, "8 -> 64 GPU speedup above the ideal: " + numbers, {}});
    if (speedup < comm_bound * (1 - kRounding))
        out.push_back(
            {"speedup", profile.workload, profile.gpu, "8 -> 64 GPU speedup below the communication bound: " + numbers, {}});
    return out;
}

FitSanity check_fit_sanity(const ProfileSet& profiles, const std::vector<PointError>& fitted) {
    FitSanity sanity;
    for (const auto& [key, profile] : profiles.all()) {
        if (profile.transferred_from) continue;   // its source's cell is checked
        std::vector<SanityViolation> found = range_violations(profile);
        try {
            const std::vector<SanityViolation> scaling = scaling_violations(profile, scaling_series(profile));
            found.insert(found.end(), scaling.begin(), scaling.end());
        } catch (const InputError& e) {
            sanity.unchecked.push_back(profile.workload + " on " + profile.gpu + ": " + e.what());
        }
        for (SanityViolation& v : found) {
            std::vector<PointError> cell;
            for (const PointError& e : fitted)
                if (e.gpu == v.gpu && (v.workload.empty() || e.workload == v.workload)) cell.push_back(e);
            std::sort(cell.begin(), cell.end(),
                      [](const PointError& a, const PointError& b) { return log_error(a) > log_error(b); });
            if (cell.size() > 3) cell.resize(3);
            v.likely_outliers = std::move(cell);
            sanity.violations.push_back(std::move(v));
        }
    }
    return sanity;
}

std::string format_fit_sanity(const FitSanity& sanity) {
    std::string out;
    for (const SanityViolation& v : sanity.violations) {
        fmt::format_to(std::back_inserter(out), "  {} ({}{}): {}\n", v.rule, v.workload.empty() ? "" : v.workload + " on ",
                       v.gpu, v.detail);
        if (v.likely_outliers.empty()) out += "    no fit result in this cell\n";
        for (const PointError& e : v.likely_outliers)
            fmt::format_to(std::back_inserter(out), "    likely outlier: {}/{} {} on {} GPUs, {:+.1f}% off\n", e.submitter,
                           e.system, e.workload, e.gpus, 100 * e.error);
    }
    for (const std::string& u : sanity.unchecked) out += "  not checked at scale: " + u + "\n";
    return out;
}

}  // namespace ttsim
