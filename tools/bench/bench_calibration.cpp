// Speed of the operator calibration (acceptance: one full multi-round fit <= 2 min, the three-round method check
// <= 10 min, on 2 cores). A fit is tens of thousands of objective evaluations, each pricing every result once
// (operator_fit.cpp Problem), so the figure that matters is the price of one evaluation:
//   build/ttsim_bench --benchmark_filter=operator_objective
// The whole one-round fit (about a minute) is registered under the `slow_` prefix, which the default run skips
// (bench_main.cpp); run it by name:
//   build/ttsim_bench --benchmark_filter=slow_operator_fit
#include <benchmark/benchmark.h>

#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_loss.hpp"
#include "models/compute/profile_files.hpp"
#include "models/training/predict.hpp"

namespace {

// The default round's results as `ttsim calibrate` fits them (the operator model's default switches).
ttsim::CalibrationOptions default_round() {
    ttsim::CalibrationOptions options;
    options.shared = ttsim::SharedFit::operator_defaults();
    return options;
}

// One objective evaluation's pricing: every v4.1 result's loss under the shipped operator profiles (with its
// stack's offset), one after another on this thread; the fit spreads the same work over TBB threads. Arg 1: as the
// fit prices them, the kernel sums of results whose tables price alike shared (predict.hpp kernel_sums); arg 0:
// each result priced on its own, as a prediction is.
void operator_objective_v41(benchmark::State& state) {
    const ttsim::CalibrationOptions options = default_round();
    const std::vector<ttsim::CalibrationPoint> points = ttsim::load_calibration_points(options);
    const ttsim::ProfileSet profiles =
        ttsim::load_profiles(ttsim::ProfileSet::default_dir(), ttsim::ComputeModel::operator_level);
    std::vector<ttsim::ComputeProfile> point_profiles;
    std::vector<std::size_t> group, firsts;   // per result the first result priced alike on its GPU
    for (std::size_t i = 0; i < points.size(); ++i) {
        point_profiles.push_back(ttsim::point_profile(points[i], profiles));
        const ttsim::PreparedScenario& s = points[i].fit_scenario;
        std::size_t g = 0;
        while (g < firsts.size() && !(points[firsts[g]].fit_scenario.gpu->name == s.gpu->name &&
                                      ttsim::same_kernel_prices(points[firsts[g]].fit_scenario, s)))
            ++g;
        if (g == firsts.size()) firsts.push_back(i);
        group.push_back(g);
    }
    const bool shared = state.range(0) == 1;
    const ttsim::LossTerms terms = options.shared.loss_terms();
    std::vector<ttsim::ScenarioKernelSums> sums(firsts.size());
    for (auto _ : state) {
        if (shared)
            for (std::size_t g = 0; g < firsts.size(); ++g)
                sums[g] = ttsim::kernel_sums(points[firsts[g]].fit_scenario, point_profiles[firsts[g]]);
        double sum = 0;
        for (std::size_t i = 0; i < points.size(); ++i)
            sum += ttsim::point_loss(points[i], point_profiles[i], terms, shared ? &sums[group[i]] : nullptr);
        benchmark::DoNotOptimize(sum);
    }
    state.counters["results"] = static_cast<double>(points.size());
    state.counters["tables"] = static_cast<double>(shared ? firsts.size() : points.size());
}

// The whole one-round fit as `ttsim calibrate` runs it (with the identifiability report), loading included.
void slow_operator_fit_v41(benchmark::State& state) {
    ttsim::CalibrationOptions options = default_round();
    options.shared.parameter_uncertainty = true;
    int evaluations = 0;
    for (auto _ : state) evaluations = ttsim::calibrate(options).objective_evaluations;
    state.counters["evaluations"] = evaluations;
}

}  // namespace

BENCHMARK(operator_objective_v41)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(slow_operator_fit_v41)->Iterations(1)->Unit(benchmark::kSecond)->MeasureProcessCPUTime()->UseRealTime();
