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

namespace {

// The default round's results as `ttsim calibrate` fits them (the operator model's default switches).
ttsim::CalibrationOptions default_round() {
    ttsim::CalibrationOptions options;
    options.shared = ttsim::SharedFit::operator_defaults();
    return options;
}

// One objective evaluation's pricing: every v4.1 result's loss under the shipped operator profiles (with its
// stack's offset), one after another on this thread; the fit spreads the same work over TBB threads.
void operator_objective_v41(benchmark::State& state) {
    const ttsim::CalibrationOptions options = default_round();
    const std::vector<ttsim::CalibrationPoint> points = ttsim::load_calibration_points(options);
    const ttsim::ProfileSet profiles =
        ttsim::load_profiles(ttsim::ProfileSet::default_dir(), ttsim::ComputeModel::operator_level);
    std::vector<ttsim::ComputeProfile> point_profiles;
    for (const ttsim::CalibrationPoint& p : points) point_profiles.push_back(ttsim::point_profile(p, profiles));
    const ttsim::LossTerms terms = options.shared.loss_terms();
    for (auto _ : state) {
        double sum = 0;
        for (std::size_t i = 0; i < points.size(); ++i) sum += ttsim::point_loss(points[i], point_profiles[i], terms);
        benchmark::DoNotOptimize(sum);
    }
    state.counters["results"] = static_cast<double>(points.size());
    state.counters["per_result_us"] = benchmark::Counter(static_cast<double>(points.size()),
                                                         benchmark::Counter::kIsIterationInvariantRate |
                                                             benchmark::Counter::kInvert);
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

BENCHMARK(operator_objective_v41)->Unit(benchmark::kMillisecond);
BENCHMARK(slow_operator_fit_v41)->Iterations(1)->Unit(benchmark::kSecond)->MeasureProcessCPUTime()->UseRealTime();
