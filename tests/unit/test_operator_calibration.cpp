// The operator-level model's calibration (models/calibration/operator_fit.hpp): its regression guards, the MLPerf
// timing logs it fits against (step-logs) and the terms the logs fix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_loss.hpp"
#include "models/calibration/like_system.hpp"
#include "models/calibration/operator_fit.hpp"
#include "models/calibration/parameter_table.hpp"
#include "models/data_dir.hpp"
#include "models/mlperf/results.hpp"
#include "models/planning/holdout_error.hpp"
#include "calibration_helpers.hpp"
#include "prediction_helpers.hpp"
#include "sim/errors.hpp"
#include "sim/statistics.hpp"
#include "models/compute/profile_files.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/layers/kernel_time.hpp"

using namespace ttsim;

namespace {

ProfileSet operator_profiles() { return load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level); }

const std::vector<CalibrationPoint>& points() { return test::calibration_points(); }

// A workload's H100 results on at most 8 GPUs: a small fit for the options' tests.
std::vector<CalibrationPoint> h100_up_to_8(const std::string& workload) { return test::h100_points({workload}, 8); }

}  // namespace

TEST_CASE("operator model: in-sample MAPE stays at or below 5.5%", "[operator][calibration]") {
    const ProfileSet profiles = operator_profiles();
    std::vector<PointError> errors;
    for (const CalibrationPoint& p : points()) errors.push_back(evaluate_point(p, profiles));
    INFO(format_point_table(errors));
    // 5.46 % with the shipped profiles (every round fitted together: GB200's and the AMD parts' results, which no
    // v4.1 result offsets, share the physics; a fit of v4.1 alone gave 5.10 %) and the default switches. convergence-lag raises it: it prices every result at
    // the RCP mean times its workload's lag, and the fit's residuals at the published convergence are mostly
    // positive already. The evaluation terms make the model fit the minutes less closely and the logs' parts far
    // better.
    // The target is 3.5 %.
    CHECK(mean_absolute_percentage_error(errors) <= 5.5);
}

// Extrapolation inside the <= 64-GPU results (`ttsim validate --cross-validate`, its forward chaining): each <= 64-GPU count
// predicted by a fit on the smaller ones. At most 4.4 % with the operator model. The target is 5.0 %. A full refit per fold
// (about 3 minutes on 2 cores), so the sanitizer stage leaves it out as it does the hold-out (tools/ci-sanitize.sh).
TEST_CASE("operator model: forward-chaining CV MAPE stays at or below 4.4%", "[operator][calibration]") {
    const CrossValidationReport forward =
        cross_validate(points(), CrossValidationScheme::ForwardChaining, 64, SharedFit::operator_defaults());
    INFO(format_point_table(forward.predicted) << "forward-chaining MAPE " << forward.mape_percent << "%");
    for (const PointError& e : forward.predicted) CHECK(e.gpus <= 64);
    CHECK(forward.predicted.size() == 43);
    CHECK(forward.mape_percent <= 4.4);
}

TEST_CASE("operator model: hold-out MAPE stays at or below 7.6%", "[operator][calibration]") {
    const HoldoutReport report = holdout_validation(points(), 64, 128, SharedFit::operator_defaults());
    for (const auto& fitted : report.fit.fitted) CHECK(fitted.gpus <= 64);
    REQUIRE(report.predicted.size() == 8);
    INFO(format_point_table(report.predicted) << "hold-out MAPE " << report.mape_percent << "%");
    // 7.51 % with the operator model (7.38 % before kernels were held at their roofs: operator_step.cpp
    // roof_over_speed), which takes LoRA's per-run overhead from the fit results' logs,
    // 9.4 s, where a searched one comes to 24 s. The figure is sensitive to that overhead, which the <= 64-GPU runs
    // fix only weakly (how the gradients are reduced over DP x CP moves it, and the figure, by points).
    // The target is 10 %.
    CHECK(report.mape_percent <= 7.6);
    // The shipped hold-out file plans quote (`ttsim validate --holdout-yaml`, default model) is this fit's.
    std::ifstream shipped(data_file("validation/holdout.yaml"), std::ios::binary);
    std::ostringstream text;
    text << shipped.rdbuf();
    CHECK(text.str() == planning::format_holdout_yaml(planning::holdout_errors(report, 64, 128)));
    // The fit on the four workloads' <= 64-GPU results never makes 64 GPUs less than 3x as fast as 8 at a fixed
    // per-GPU batch (throughput: 8 x step at 8 GPUs / step at 64; each workload's smallest published 8-GPU H100
    // per-GPU batch, its published layout). A fit pulled by an outlier could leave a workload with no speedup at all.
    for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"}) {
        int per_gpu = 0;
        for (const CalibrationPoint& p : points())
            if (p.scenario.workload->name == workload && p.scenario.gpu->name == "H100-SXM" && p.scenario.gpus == 8 &&
                p.result.global_batch_size && (per_gpu == 0 || *p.result.global_batch_size / 8 < per_gpu))
                per_gpu = *p.result.global_batch_size / 8;
        REQUIRE(per_gpu > 0);
        PredictionRequest eight = test::prediction_request(workload, "dgx-h100", 8), sixty_four = eight;
        eight.global_batch = 8 * per_gpu;
        sixty_four.gpus = 64;
        sixty_four.global_batch = 64 * per_gpu;
        const double speedup = 8 * predict(eight, report.fit.profiles).step_ms / predict(sixty_four, report.fit.profiles).step_ms;
        INFO(workload << ": 8 -> 64 GPUs at " << per_gpu << " samples per GPU, " << speedup << "x");
        CHECK(speedup >= 3.0);
        CHECK(speedup <= 8.0 * 1.001);   // never above ideal
    }
    // Every fitted efficiency is a fraction of its roof: nothing runs faster than its bandwidth or peak.
    for (const auto& [key, profile] : report.fit.profiles.all()) {
        REQUIRE(profile.operator_efficiency);
        const layers::Efficiency& e = *profile.operator_efficiency;
        for (double f : {e.gemm, e.conv, e.attention, e.memory}) {
            CHECK(f > 0);
            CHECK(f <= 1.0);
        }
    }
}

// An evaluation's forward passes can be no faster than the eval set's forward FLOPs spread over every GPU at peak
// (the roofline of the whole job). Before the operator model priced an evaluation per data-parallel rank, the
// 70B LoRA (TP4 x CP2) was priced 8x too fast, below this bound.
TEST_CASE("MLPerf timing logs: loaded, and joined to the calibration points", "[operator][calibration]") {
    const std::vector<MlperfTiming> logs = load_mlperf_timing();
    CHECK(logs.size() == 970);   // one row per v4.1 log of the four benchmarks (models/data/README.md)
    // Dell XE9680 8xH100 BERT: median step 94.4 ms inside its segments (v4.1_timing.csv step_ms_from_segments) and
    // 1.44 s per evaluation (0.409 min over 17). NVIDIA eos 8xH100 RetinaNet (result_0): an evaluation is 30.8 s on
    // the clock (2.056 min over 4) but scores asynchronously: the blocking 1.755 min hold 4 inferences and the final
    // scoring, and each earlier scoring is (2.056 - 1.755) x 60 / 3 = 6.0 s, so one evaluation blocks for
    // (105.3 - 6.0) / 4 = 24.8 s.
    bool bert_seen = false, retinanet_seen = false;
    for (const CalibrationPoint& p : points()) {
        if (p.result.key() == "Dell/XE9680x8H100-SXM-80GB/bert") {
            bert_seen = true;
            REQUIRE(p.measured_step_seconds);
            CHECK(*p.measured_step_seconds == Approx(0.0944).epsilon(0.01));
            REQUIRE(p.measured_eval_seconds);
            CHECK(*p.measured_eval_seconds == Approx(1.44).epsilon(0.03));
        }
        if (p.result.key() == "NVIDIA/eos_ngc24.09_pytorch/ssd") {
            retinanet_seen = true;
            REQUIRE(p.measured_eval_seconds);
            CHECK(*p.measured_eval_seconds > 24.0);
            CHECK(*p.measured_eval_seconds < 25.5);
        }
        // Stable Diffusion evaluates offline: no evaluation time to fit.
        if (p.scenario.workload->name == "stable_diffusion") CHECK(!p.measured_eval_seconds);
        // BERT logs from 2023 carry no eval intervals, so their segments include evaluations: no step time.
        if (p.result.key() == "NVIDIA/eos_ngc23.04_pytorch/bert") CHECK(!p.measured_step_seconds);
    }
    CHECK(bert_seen);
    CHECK(retinanet_seen);
    MlperfTiming t;
    t.eval_blocking_minutes = 1.7548;
    t.eval_on_clock_minutes = 2.0558;
    t.evaluations = 4;
    t.eval_async = true;
    CHECK(*t.final_scoring_seconds() == Approx(6.02).epsilon(0.01));
    CHECK(*t.eval_blocking_seconds() == Approx(24.82).epsilon(0.01));
    t.eval_async = false;   // synchronous: every evaluation blocks for all of its time
    CHECK(!t.final_scoring_seconds());
    CHECK(*t.eval_blocking_seconds() == Approx(1.7548 * 60 / 4));
}

TEST_CASE("MLPerf timing logs: a malformed file names its line and column", "[operator][calibration]") {
    const auto file = std::filesystem::temp_directory_path() / "ttsim_bad_timing.csv";
    {
        std::ofstream out(file);
        out << "submitter,system,benchmark,log_status,step_ms_from_segments,eval_minutes_blocking,eval_minutes_on_clock,"
               "eval_async,n_evals_on_clock,global_batch_size,first_segment_s,first_segment_samples\n"
            << "A,B,bert,ok,12.5,0.3,0.3,False,4,768,20.1,150000\n"
            << "A,B,bert,ok,fast,0.3,0.3,False,4,768,20.1,150000\n";
    }
    try {
        load_mlperf_timing(file);
        FAIL("malformed timing file accepted");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK(what.find("ttsim_bad_timing.csv") != std::string::npos);
        CHECK(what.find(":3") != std::string::npos);
        CHECK(what.find("step_ms_from_segments") != std::string::npos);
    }
    std::filesystem::remove(file);
    // The first-segment columns: a bad cell names its column.
    const std::string header = "submitter,system,benchmark,log_status,step_ms_from_segments,eval_minutes_blocking,"
                               "eval_minutes_on_clock,eval_async,n_evals_on_clock,global_batch_size,first_segment_s,"
                               "first_segment_samples\n";
    for (const auto& [row, column] : {std::pair{"A,B,bert,ok,12.5,0.3,0.3,False,4,0,20.1,150000", "global_batch_size"},
                                      std::pair{"A,B,bert,ok,12.5,0.3,0.3,False,4,768,-1,150000", "first_segment_s"},
                                      std::pair{"A,B,bert,ok,12.5,0.3,0.3,False,4,768,inf,150000", "first_segment_s"},
                                      std::pair{"A,B,bert,ok,12.5,0.3,0.3,False,4,768,20.1,1.5", "first_segment_samples"},
                                      std::pair{"A,B,bert,ok,12.5,0.3,-0.3,False,4,768,20.1,150000", "eval_minutes_on_clock"},
                                      std::pair{"A,B,bert,ok,12.5,0.3,0.3,yes,4,768,20.1,150000", "eval_async"}}) {
        {
            std::ofstream out(file);
            out << header << row << "\n";
        }
        INFO(row);
        try {
            load_mlperf_timing(file);
            FAIL("malformed timing file accepted");
        } catch (const InputError& e) {
            CHECK(std::string(e.what()).find(column) != std::string::npos);
            CHECK(std::string(e.what()).find(":2") != std::string::npos);
        }
    }
    std::filesystem::remove(file);
}

TEST_CASE("step-logs: a result's logged step time enters its loss", "[operator][calibration]") {
    const CalibrationPoint* point = nullptr;
    for (const CalibrationPoint& p : points())
        if (p.result.key() == "Dell/XE9680x8H100-SXM-80GB/bert") point = &p;
    REQUIRE(point);
    const ProfileSet profiles = operator_profiles();
    const ComputeProfile profile = profiles.find(*point->scenario.workload, *point->scenario.gpu);
    const double without = point_loss(*point, profile, LossTerms{.run_logs = true, .robust = true});
    const double with = point_loss(*point, profile, LossTerms{.run_logs = true, .robust = true, .step_logs = true, .eval_logs = true});
    CHECK(with > without);
}

// The per-run overhead: a workload's is the median of its fit results' logged excesses, not searched (here LoRA on
// H100 at 8 GPUs, whose excesses are about 8-10 s: v4.1_timing.csv); searched where no log gives it.
TEST_CASE("operator model: the per-run overhead is the median logged excess of the fit's results", "[operator][calibration]") {
    std::vector<CalibrationPoint> lora;
    std::vector<double> excesses;
    for (const CalibrationPoint& p : points())
        if (p.scenario.workload->name == "llama2_70b_lora" && p.scenario.gpu->name == "H100-SXM" && p.scenario.gpus <= 8 &&
            p.measured_excess_seconds) {
            lora.push_back(p);
            excesses.push_back(*p.measured_excess_seconds);
        }
    REQUIRE(lora.size() >= 2);
    std::sort(excesses.begin(), excesses.end());
    const std::size_t n = excesses.size();
    const double median = n % 2 ? excesses[n / 2] : 0.5 * (excesses[n / 2 - 1] + excesses[n / 2]);
    const CalibrationReport report = calibrate_operator_points(lora, "test", SharedFit::parse("robust,run-logs"));
    const ComputeProfile& fitted = report.profiles.find(*lora.front().scenario.workload, *lora.front().scenario.gpu);
    CHECK(fitted.run_overhead_seconds == Approx(std::clamp(median, 0.01, 300.0)).epsilon(1e-12));
    CHECK_THAT(report.data_description, Catch::Contains("llama2_70b_lora run overhead seconds (logged)"));
    // Without the logs' excess the overhead is searched (a dimension of its own).
    std::vector<CalibrationPoint> unlogged = lora;
    for (CalibrationPoint& p : unlogged) p.measured_excess_seconds.reset();
    const CalibrationReport searched = calibrate_operator_points(unlogged, "test", SharedFit::parse("robust,run-logs"));
    CHECK_THAT(searched.data_description, !Catch::Contains("(logged)"));
    CHECK_THAT(searched.data_description, Catch::Contains("llama2_70b_lora run overhead seconds"));
}

// Physical sanity of the shipped profiles: an H200 is an H100 die with more and faster HBM, so no step of the same
// layout, at any scale, may come out slower on it. (A GPU family's fitted speed divides the roofs only: one
// that also stretched the per-kernel overheads, as 0.83 did for H200, made Stable Diffusion and RetinaNet come out
// 2-5 % slower on H200 from 512 GPUs up.) The data-parallel workloads, at the H100's batch; LoRA's published layouts differ by GPU.

// The evaluation stage: after the step's parameters, the second stage searches the evaluation's host operations
// and launch cost within their bounds, off their starts (100 a sample, 50 us). A small fit: BERT on H100 at <= 8
// GPUs (eager evaluations of batches of 16).
TEST_CASE("operator model: the evaluation terms are fitted in a second stage, within their bounds", "[operator][calibration]") {
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 4);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& gpu = *bert.front().scenario.gpu;
    const CalibrationReport report = calibrate_operator_points(bert, "test", SharedFit::parse("robust,run-logs"));
    const ComputeProfile staged = report.profiles.find(workload, gpu);
    const layers::Efficiency& b = *staged.operator_efficiency;
    CHECK(staged.operator_eval_passes);
    CHECK(staged.eval_host_kernels_per_sample >= 1.0);
    CHECK(staged.eval_host_kernels_per_sample <= 1e5);
    CHECK(staged.eval_host_kernels_per_sample != Approx(100.0));
    CHECK(b.eval_launch_seconds >= 2e-6);
    CHECK(b.eval_launch_seconds <= 2e-3);
    CHECK(b.eval_launch_seconds != Approx(5e-5));
    CHECK(report.data_description.find("second stage") != std::string::npos);
}

// RetinaNet scores its evaluations asynchronously, and the clock counts the final scoring once per run; the model
// adds the median the fit results' logs measure to the fitted per-run overhead.
TEST_CASE("operator model: the final asynchronous scoring from the logs joins the per-run overhead", "[operator][calibration]") {
    const std::vector<CalibrationPoint> retinanet = h100_up_to_8("retinanet");
    REQUIRE(retinanet.size() >= 4);
    std::vector<double> scorings;
    for (const CalibrationPoint& p : retinanet)
        if (p.measured_final_scoring_seconds) scorings.push_back(*p.measured_final_scoring_seconds);
    REQUIRE(scorings.size() >= 4);
    std::sort(scorings.begin(), scorings.end());
    const double scoring = median(scorings);
    CHECK(scoring > 1.0);    // COCO scoring of 24,781 images on the CPU: seconds (about 6 s at 8 GPUs)
    CHECK(scoring < 30.0);
    // No other workload scores asynchronously.
    for (const CalibrationPoint& p : points())
        if (p.scenario.workload->name != "retinanet") CHECK_FALSE(p.measured_final_scoring_seconds.has_value());
    const Workload& workload = *retinanet.front().scenario.workload;
    const GpuSpec& gpu = *retinanet.front().scenario.gpu;
    const CalibrationReport with = calibrate_operator_points(retinanet, "test", SharedFit::parse("robust,run-logs"));
    CHECK(with.profiles.find(workload, gpu).run_overhead_seconds >= scoring + 0.01);   // the fitted part's floor
    CHECK(with.data_description.find("retinanet final scoring seconds (logged") != std::string::npos);
    std::vector<CalibrationPoint> unlogged = retinanet;
    for (CalibrationPoint& p : unlogged) p.measured_final_scoring_seconds.reset();
    const CalibrationReport without = calibrate_operator_points(unlogged, "test", SharedFit::parse("robust,run-logs"));
    CHECK(without.data_description.find("final scoring") == std::string::npos);
}

// A fixed host cost overlapping a graphed step leaves the data loss flat where it hides behind every fitted step:
// the data cannot see it, so the posterior mode leaves it at its prior's centre (parameter_table.cpp), neither
// at the floor nor wherever the search started. RetinaNet's H100 results on at most 8 GPUs replay a
// whole-iteration graph of tens of milliseconds, behind which a 5 ms host cost hides.
TEST_CASE("operator model: a host cost hidden behind every fitted step stays at its prior", "[operator][calibration]") {
    const std::vector<CalibrationPoint> retinanet = h100_up_to_8("retinanet");
    REQUIRE(retinanet.size() >= 2);
    const CalibrationReport hidden = calibrate_operator_points(retinanet, "test", SharedFit::parse("step-logs"));
    const Workload& workload = *retinanet.front().scenario.workload;
    const GpuSpec& gpu = *retinanet.front().scenario.gpu;
    const ParamSpec& prior = operator_parameter_spec("fixed step seconds", ParamScope::workload);
    CHECK(hidden.profiles.find(workload, gpu).fixed_step_seconds == Approx(prior.centre).epsilon(1e-3));
    CHECK(hidden.profiles.find(workload, gpu).operator_graph_host_overlap);
}
