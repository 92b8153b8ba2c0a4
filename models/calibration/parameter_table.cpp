#include "models/calibration/parameter_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <Eigen/Eigenvalues>
#include <fmt/format.h>

#include "models/calibration/fit_loss.hpp"
#include "sim/errors.hpp"

namespace ttsim {

std::string_view to_string(ParamScope scope) {
    switch (scope) {
        case ParamScope::global: return "global";
        case ParamScope::gpu_family: return "GPU family";
        case ParamScope::workload: return "workload";
        case ParamScope::software_stack: return "software stack";
        case ParamScope::round: return "round x workload x GPU family";
    }
    return "";
}

std::string_view to_string(ParameterEstimate::Status status) {
    switch (status) {
        case ParameterEstimate::Status::determined: return "determined";
        case ParameterEstimate::Status::partly: return "partly";
        case ParameterEstimate::Status::prior: return "prior";
        case ParameterEstimate::Status::at_bound: return "at bound";
    }
    return "";
}

const std::vector<ParamSpec>& operator_parameter_specs() {
    // Widths are one sigma of the log: 0.26 is a factor 1.3 (GEMM's 0.8 admits 0.6-1.0), 0.69 a factor 2, 2.3 a
    // factor 10. Where no public measurement pins a cost, the width is wide and says so.
    static const std::vector<ParamSpec> specs = {
        {"gemm efficiency", ParamScope::global, "fraction of the dense tensor-core peak a large, wave-aligned GEMM reaches",
         "fraction", 0.2, 1.0, 0.8, 0.26,
         "cuBLAS BF16 GEMMs at large square shapes run ~700-800 of H100's 989 TFLOP/s; FP8 GEMMs on H200 1300-1366 of "
         "1979 (models/data/hardware/params.md, AZ_H200)"},
        {"conv efficiency", ParamScope::global, "the same for cuDNN implicit-GEMM convolutions", "fraction", 0.05, 1.0,
         0.65, 0.26, "below GEMMs: more data movement per FLOP (kernel_time.hpp)"},
        {"attention efficiency", ParamScope::global, "the same for fused (flash) attention", "fraction", 0.05, 1.0, 0.6,
         0.26, "FlashAttention-2 forward reaches 50-73 % of A100's peak (Dao, 2023)"},
        {"memory efficiency", ParamScope::global, "fraction of the vendor HBM bandwidth a streaming kernel reaches",
         "fraction", 0.3, 1.0, 0.85, 0.15, "STREAM on H200: 4.0-4.48 of 4.8 TB/s (params.md, AZ_H200)"},
        {"launch seconds", ParamScope::global, "host time of one eager kernel launch (a graph launch costs 2x)", "s",
         2e-6, 1e-4, 5e-6, 0.69,
         "the CUDA launch itself ~2-4 us of host time, plus the framework's dispatch per op (kernel_time.hpp)"},
        {"eval launch seconds", ParamScope::global, "host time per kernel of an eager evaluation loop", "s", 2e-6, 2e-3,
         5e-5, 1.6, "a Python framework op: several PyTorch dispatches, hooks and syncs (tens of us); wide"},
        {"kernel overhead seconds", ParamScope::global, "GPU time each kernel costs beyond its roofline", "s", 1e-7,
         2e-5, 2e-6, 1.0, "block scheduling, tail wave and the gap between kernels: a few us"},
        {"speed", ParamScope::gpu_family, "a GPU family's speed against its roofline (H100-SXM = 1)", "factor", 0.3,
         3.0, 1.0, 0.3, "kernel maturity and clocks under power caps move a family by tens of percent"},
        {"fixed step seconds", ParamScope::workload, "host cost per optimizer step (loader, loss scaling, syncs)", "s",
         1e-5, 1.0, 5e-3, 2.3, "no public measurement per workload: a factor 10 either way"},
        {"run overhead seconds", ParamScope::workload, "time the clock counts once per run besides the steps", "s",
         0.01, 300.0, 5.0, 2.3,
         "the rules exclude up to 30 min of initialisation before run_start; the logs show seconds"},
        {"step jitter cv", ParamScope::global, "relative step-time noise per node (stragglers wait for the slowest)",
         "fraction", 1e-4, 0.3, 0.01, 1.6, "~1 % run-to-run step spread on a quiet node (compute_profile.cpp)"},
        {"eval host kernels per sample", ParamScope::workload,
         "eager host operations per evaluation sample beyond the layer graph's", "count", 1.0, 1e5, 100.0, 2.3,
         "a framework's Python per layer and sample: from a few to a 70B decoder's ~1,000 a layer"},
        {"TP/CP exposed fraction", ParamScope::global, "share of TP/CP collective time not hidden by overlap",
         "fraction", 0.01, 1.0, 0.3, 0.8, "Megatron/TE overlap hides most but not all of it"},
        {"speed", ParamScope::software_stack, "a submitter's software on a GPU family against the family's", "factor",
         0.25, 4.0, 1.0, 0.10,
         "the same configuration's results across submitters spread by about 10 %; bounds: a working submission "
         "within a factor 4 of its family"},
        {"speed", ParamScope::round, "a round's software on a workload and GPU family against the default round's",
         "factor", 0.5, 2.0, 1.0, 0.10, "the published speedups between rounds are 0.98-1.34x per workload"},
    };
    return specs;
}

const ParamSpec& operator_parameter_spec(std::string_view kind, ParamScope scope) {
    for (const ParamSpec& s : operator_parameter_specs())
        if (s.kind == kind && s.scope == scope) return s;
    TTSIM_ASSERT(false, "no parameter spec '" + std::string(kind) + "'");
    return operator_parameter_specs().front();
}

std::string format_parameter_table() {
    std::string out = "| parameter | scope | meaning | unit | bounds | prior centre | prior width (x/) | source |\n"
                      "|---|---|---|---|---|---|---|---|\n";
    for (const ParamSpec& s : operator_parameter_specs())
        out += fmt::format("| {} | {} | {} | {} | {:g}-{:g} | {:g} | {:.2f} | {} |\n", s.kind, to_string(s.scope),
                           s.meaning, s.unit, s.lower, s.upper, s.centre, std::exp(s.log_sd), s.source);
    return out;
}

double prior_penalty(const ParamSpec& spec, double log_value) {
    const double z = (log_value - std::log(spec.centre)) / spec.log_sd;
    // The software offsets are random effects drawn from the population of submitters and releases: heavy-tailed
    // (pseudo-Huber in z, quadratic within one sigma and linear beyond), so that one outlying stack takes its own
    // offset instead of pulling the shared physics. The physics' priors are Gaussian.
    if (spec.scope == ParamScope::software_stack || spec.scope == ParamScope::round)
        return 2 * (std::sqrt(1 + z * z) - 1) * kRobustScale * kRobustScale;
    return z * z * kRobustScale * kRobustScale;
}

double stack_location_penalty(const std::vector<double>& log_values) {
    if (log_values.empty()) return 0;
    const ParamSpec& spec = operator_parameter_spec("speed", ParamScope::software_stack);
    double sum = 0;
    for (double v : log_values) {
        const double z = (v - std::log(spec.centre)) / spec.log_sd;
        sum += z / std::sqrt(1 + z * z);
    }
    const double location = sum / static_cast<double>(log_values.size()) / kStackLocationTolerance;
    return location * location * kRobustScale * kRobustScale;
}

std::vector<ParameterEstimate> laplace_estimates(const std::function<double(const std::vector<double>&)>& loss,
                                                 const std::vector<double>& x, const std::vector<std::string>& names,
                                                 const std::vector<const ParamSpec*>& specs,
                                                 std::vector<double>* covariance) {
    TTSIM_ASSERT(names.size() == x.size() && specs.size() == x.size(), "one name and spec per dimension");
    // Step of the central differences, in log units (2 %): wide enough to step over the kinks of max() of roofs
    // that a kernel at its ridge point puts in the loss, small against every prior width.
    constexpr double h = 0.02;
    std::vector<ParameterEstimate> out(x.size());
    std::vector<std::size_t> free;   // dimensions off their bounds
    for (std::size_t i = 0; i < x.size(); ++i) {
        ParameterEstimate& e = out[i];
        e.name = names[i];
        e.spec = specs[i];
        e.value = std::exp(x[i]);
        e.prior_log_sd = specs[i]->log_sd;
        const bool at_bound = x[i] - std::log(specs[i]->lower) < h || std::log(specs[i]->upper) - x[i] < h;
        if (at_bound) e.status = ParameterEstimate::Status::at_bound;
        else free.push_back(i);
    }
    const std::size_t n = free.size();
    const double f0 = loss(x);
    std::vector<double> hessian(n * n, 0.0);
    auto at = [&](std::initializer_list<std::pair<std::size_t, double>> moves) {
        std::vector<double> y = x;
        for (const auto& [i, d] : moves) y[free[i]] += d;
        return loss(y);
    };
    for (std::size_t i = 0; i < n; ++i) {
        hessian[i * n + i] = (at({{i, h}}) - 2 * f0 + at({{i, -h}})) / (h * h);
        for (std::size_t j = 0; j < i; ++j) {
            const double d = (at({{i, h}, {j, h}}) - at({{i, h}, {j, -h}}) - at({{i, -h}, {j, h}}) +
                              at({{i, -h}, {j, -h}})) / (4 * h * h);
            hessian[i * n + j] = hessian[j * n + i] = d;
        }
    }
    // Precision of the log-parameters: the objective's curvature (data and priors) in units of the Gaussian
    // likelihood (sd kRobustScale per log error).
    const double scale = 1.0 / (2 * kRobustScale * kRobustScale);
    // The covariance is its inverse, through the same eigen-decomposition. Every parameter's prior is in the
    // objective, so no direction curves less than the weakest prior; where the roofs' max() bends the difference
    // quotients below that (or negative), the weakest prior's precision stands in, so the covariance stays finite.
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> curvature(
        Eigen::Map<const Eigen::MatrixXd>(hessian.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n)));
    double widest = 0;
    for (std::size_t i : free) widest = std::max(widest, specs[i]->log_sd);
    const Eigen::VectorXd precision = (curvature.eigenvalues() * scale).cwiseMax(1 / (widest * widest));
    const Eigen::MatrixXd& vectors = curvature.eigenvectors();
    std::vector<double> cov(x.size() * x.size(), 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double c = 0;
            for (std::size_t k = 0; k < n; ++k) {
                const auto ek = static_cast<Eigen::Index>(k);
                c += vectors(static_cast<Eigen::Index>(i), ek) * vectors(static_cast<Eigen::Index>(j), ek) / precision(ek);
            }
            cov[free[i] * x.size() + free[j]] = c;
        }
    for (std::size_t i = 0; i < n; ++i) {
        ParameterEstimate& e = out[free[i]];
        e.posterior_log_sd = std::sqrt(std::max(0.0, cov[free[i] * x.size() + free[i]]));
        const double ratio = e.posterior_log_sd / e.prior_log_sd;
        e.status = ratio < 0.5   ? ParameterEstimate::Status::determined
                   : ratio < 0.9 ? ParameterEstimate::Status::partly
                                 : ParameterEstimate::Status::prior;
    }
    if (covariance) *covariance = std::move(cov);
    return out;
}

std::string format_identifiability(const std::vector<ParameterEstimate>& estimates) {
    std::string out = fmt::format("{:<48} {:>11} {:>10} {:>10}  {}\n", "parameter", "value", "prior x/", "post. x/",
                                  "status");
    std::map<ParameterEstimate::Status, int> counts;
    for (const ParameterEstimate& e : estimates) {
        ++counts[e.status];
        const bool bound = e.status == ParameterEstimate::Status::at_bound;
        out += fmt::format("{:<48} {:>11.4g} {:>10.3f} {:>10}  {}\n", e.name, e.value, std::exp(e.prior_log_sd),
                           bound ? "-" : fmt::format("{:.3f}", std::exp(e.posterior_log_sd)), to_string(e.status));
    }
    out += fmt::format(
        "{} determined by the data (posterior sd < half the prior's), {} partly, {} at their prior (> 0.9 of it), "
        "{} at a bound\n",
        counts[ParameterEstimate::Status::determined], counts[ParameterEstimate::Status::partly],
        counts[ParameterEstimate::Status::prior], counts[ParameterEstimate::Status::at_bound]);
    return out;
}

}  // namespace ttsim
