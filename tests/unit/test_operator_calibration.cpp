// The operator-level model's calibration (models/calibration/operator_fit.hpp): its regression guards, the MLPerf
// timing logs it fits against (step-logs, warmup-logs) and the release offsets.
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

TEST_CASE("operator model: in-sample MAPE stays at or below 5.3%", "[operator][calibration]") {
    const ProfileSet profiles = operator_profiles();
    std::vector<PointError> errors;
    for (const CalibrationPoint& p : points()) errors.push_back(evaluate_point(p, profiles));
    INFO(format_point_table(errors));
    // 5.23 % with the operator defaults (shared_fit.cpp; logged-overhead and system-speed among them: the per-run
    // overheads from the logs and a speed per software stack). convergence-lag raises it: it prices every result at
    // the RCP mean times its workload's lag, and the fit's residuals at the published convergence are mostly
    // positive already. The evaluation terms make the model fit the minutes less closely and the logs' parts far
    // better; the rule picks by forward CV, not by this figure.
    // The target is 3.5 %.
    CHECK(mean_absolute_percentage_error(errors) <= 5.3);
}

// The model-selection figure itself (`ttsim validate --cross-validate`, its forward chaining): each <= 64-GPU count
// predicted by a fit on the smaller ones. 4.39 % with the operator defaults (5.17 % without their logged-overhead
// and system-speed). The target is 5.0 %. A full refit per fold
// (about 3 minutes on 2 cores), so the sanitizer stage leaves it out as it does the hold-out (tools/ci-sanitize.sh).
TEST_CASE("operator model: forward-chaining CV MAPE stays at or below 4.4%", "[operator][calibration]") {
    const CrossValidationReport forward =
        cross_validate(points(), CrossValidationScheme::ForwardChaining, 64, SharedFit::operator_defaults());
    INFO(format_point_table(forward.predicted) << "forward-chaining MAPE " << forward.mape_percent << "%");
    for (const PointError& e : forward.predicted) CHECK(e.gpus <= 64);
    CHECK(forward.predicted.size() == 43);
    CHECK(forward.mape_percent <= 4.4);
}

TEST_CASE("operator model: hold-out MAPE stays at or below 7.4%", "[operator][calibration]") {
    const HoldoutReport report = holdout_validation(points(), 64, 128, SharedFit::operator_defaults());
    for (const auto& fitted : report.fit.fitted) CHECK(fitted.gpus <= 64);
    REQUIRE(report.predicted.size() == 8);
    INFO(format_point_table(report.predicted) << "hold-out MAPE " << report.mape_percent << "%");
    // 7.35 % with the operator defaults: logged-overhead takes LoRA's per-run overhead from the fit results' logs,
    // 9.4 s, where a searched one comes to 24 s. The figure is sensitive to that overhead, which the <= 64-GPU runs
    // fix only weakly (how the gradients are reduced over DP x CP moves it, and the figure, by points).
    // The target is 10 %.
    CHECK(report.mape_percent <= 7.4);
    // The shipped hold-out file plans quote (`ttsim validate --holdout-yaml`, default model) is this fit's.
    std::ifstream shipped(data_file("validation/holdout.yaml"), std::ios::binary);
    std::ostringstream text;
    text << shipped.rdbuf();
    CHECK(text.str() == planning::format_holdout_yaml(planning::holdout_errors(report, 64, 128)));
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
    CHECK(SharedFit::parse("operator,step-logs,eval-cost").eval_cost);
    // eval-cost needs the operator model: --model adds it or refuses the term (fit_for_model), as for every such term.
    CHECK(SharedFit::parse("step-logs,eval-cost").operator_only_term() == "eval-cost");
}

TEST_CASE("warmup-logs: a result's logged first-segment excess enters its loss against the per-run overhead", "[operator][calibration]") {
    // NVIDIA eos 128x8 H100 LoRA (v4.1_timing.csv): the first segment ends 39.7 s after run_start with 7,296
    // samples at GBS 128 and a steady 549.0 ms a step, so 57 steps take 31.3 s and 8.4 s came before them.
    const CalibrationPoint* point = nullptr;
    for (const CalibrationPoint& p : points())
        if (p.result.key() == "NVIDIA/eos_n128_ngc24.09_nemo/llama2_70b_lora") point = &p;
    REQUIRE(point);
    REQUIRE(point->measured_excess_seconds);
    CHECK(*point->measured_excess_seconds == Approx(8.4).margin(0.2));
    ComputeProfile profile = operator_profiles().find(*point->scenario.workload, *point->scenario.gpu);
    LossTerms terms{.run_logs = true, .robust = true, .step_logs = true, .eval_logs = true};
    const double without = point_loss(*point, profile, terms);
    terms.warmup_logs = true;
    // With the overhead at the logged warm-up the term is zero; at 40 s it is the soft-L1 of log(41 / 9.4).
    profile.run_overhead_seconds = *point->measured_excess_seconds;
    const double matched = point_loss(*point, profile, terms);
    terms.warmup_logs = false;
    CHECK(matched == Approx(point_loss(*point, profile, terms)).epsilon(1e-12));
    terms.warmup_logs = true;
    profile.run_overhead_seconds = 40.0;
    const double far = point_loss(*point, profile, terms);
    terms.warmup_logs = false;
    const double far_without = point_loss(*point, profile, terms);
    const double r = std::log((40.0 + kExcessResolutionSeconds) / (*point->measured_excess_seconds + kExcessResolutionSeconds));
    CHECK(far - far_without == Approx(log_error_loss(r, true)).epsilon(1e-9));
    CHECK(without > 0);
    // A negative estimate (SD's short first block) counts as no excess: the overhead is compared with 0 + r.
    CalibrationPoint negative = *point;
    negative.measured_excess_seconds = -2.0;
    terms.warmup_logs = true;
    const double clamped = point_loss(negative, profile, terms);
    CHECK(clamped - far_without ==
          Approx(log_error_loss(std::log((40.0 + kExcessResolutionSeconds) / kExcessResolutionSeconds), true)).epsilon(1e-9));
    CHECK(SharedFit::parse("operator,workload-run-overhead,warmup-logs").loss_terms().warmup_logs);
    // Without a fitted per-run overhead the term could only be a constant: refused.
    CHECK_THROWS_AS(SharedFit::parse("operator,warmup-logs"), InputError);
}

// logged-overhead: a workload's per-run overhead is the median of its fit results' logged excesses, not searched
// (here LoRA on H100 at <= 16 GPUs, whose excesses are about 8-10 s: v4.1_timing.csv).
TEST_CASE("logged-overhead: the per-run overhead is the median logged excess of the fit's results", "[operator][calibration]") {
    std::vector<CalibrationPoint> lora;
    std::vector<double> excesses;
    for (const CalibrationPoint& p : points())
        if (p.scenario.workload->name == "llama2_70b_lora" && p.scenario.gpu->name == "H100-SXM" && p.scenario.gpus <= 16 &&
            p.measured_excess_seconds) {
            lora.push_back(p);
            excesses.push_back(*p.measured_excess_seconds);
        }
    REQUIRE(lora.size() >= 2);
    std::sort(excesses.begin(), excesses.end());
    const std::size_t n = excesses.size();
    const double median = n % 2 ? excesses[n / 2] : 0.5 * (excesses[n / 2 - 1] + excesses[n / 2]);
    const CalibrationReport report =
        calibrate_operator_points(lora, "test", SharedFit::parse("operator,workload-run-overhead,logged-overhead"));
    const ComputeProfile& fitted = report.profiles.find(*lora.front().scenario.workload, *lora.front().scenario.gpu);
    CHECK(fitted.run_overhead_seconds == Approx(std::clamp(median, 0.01, 300.0)).epsilon(1e-12));
    CHECK_THAT(report.data_description, Catch::Contains("llama2_70b_lora run overhead seconds (logged)"));
    // Without the option the overhead is searched (a dimension of its own).
    const CalibrationReport searched =
        calibrate_operator_points(lora, "test", SharedFit::parse("operator,workload-run-overhead"));
    CHECK_THAT(searched.data_description, !Catch::Contains("(logged)"));
    CHECK_THAT(searched.data_description, Catch::Contains("llama2_70b_lora run overhead seconds"));
    // It replaces the per-workload overhead, so it needs it.
    CHECK_THROWS_AS(SharedFit::parse("operator,logged-overhead"), InputError);
    CHECK(SharedFit::parse("operator,workload-run-overhead,logged-overhead").describe() ==
          "workload-run-overhead,operator,logged-overhead");
}

// stream-memory: the memory efficiency is searched within STREAM's share of the vendor bandwidth (>= 0.75), where
// the default fit may go down to 0.30 (BERT on H100 at <= 8 GPUs goes below 0.75 without it).
TEST_CASE("stream-memory: the fitted memory efficiency stays within what STREAM measures", "[operator][calibration]") {
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 2);
    auto memory_of = [&](const char* shared) {
        const CalibrationReport report = calibrate_operator_points(bert, "test", SharedFit::parse(shared));
        return report.profiles.find(*bert.front().scenario.workload, *bert.front().scenario.gpu).operator_efficiency->memory;
    };
    CHECK(memory_of("operator,stream-memory") >= 0.75);
    CHECK(memory_of("operator") < 0.75);
    CHECK(SharedFit::parse("operator,stream-memory").describe() == "operator,stream-memory");
}

// release-speed keys a result by the NGC container its system name states as a token (NVIDIA's and Lambda's names
// do; other submitters' do not), and a set's stack and release offsets both apply to it.
TEST_CASE("release-speed: the release a system name states, and both offsets applied", "[operator][calibration]") {
    CHECK(software_release("eos_n8_ngc24.09_nemo", "H100-SXM") == "ngc24.09/H100-SXM");
    CHECK(software_release("ngc23.04_pytorch", "H100-SXM") == "ngc23.04/H100-SXM");
    CHECK(software_release("ngcx_cluster_ngc24.04", "H100-SXM") == "ngc24.04/H100-SXM");   // a decoy 'ngc' first
    CHECK(software_release("lab_ngc24.091_x", "H100-SXM").empty());                       // not a YY.MM token
    CHECK(software_release("mylab-ngc24.09", "H100-SXM").empty());                        // not '_'-separated
    CHECK(software_release("XE9680x8H100-SXM-80GB", "H100-SXM").empty());
    bool lambda_seen = false, dell_seen = false;
    for (const CalibrationPoint& p : points()) {
        if (p.result.system == "lambda_1cc_n2_H100-SXM-80GB_ngc24.04_nemo") {
            lambda_seen = true;
            CHECK(speed_keys(p) == std::vector<std::string>{"Lambda/H100-SXM", "ngc24.04/H100-SXM"});
            std::map<std::string, double> speeds{{"ngc24.04/H100-SXM", 0.9}, {"Lambda/H100-SXM", 0.8}};
            CHECK(speed_of(speed_keys(p), speeds) == Approx(0.72));
            speeds.erase("Lambda/H100-SXM");
            CHECK(speed_of(speed_keys(p), speeds) == Approx(0.9));
        }
        if (p.result.system == "XE9680x8H100-SXM-80GB") {
            dell_seen = true;
            CHECK(speed_keys(p) == std::vector<std::string>{"Dell/H100-SXM"});
            CHECK(speed_of(speed_keys(p), {{"ngc24.04/H100-SXM", 0.9}}) == 1.0);
        }
    }
    CHECK(lambda_seen);
    CHECK(dell_seen);
    CHECK(SharedFit::parse("operator,release-speed").release_speed);
    CHECK(SharedFit::parse("release-speed").operator_only_term() == "release-speed");   // refused for the lumped fit
    CHECK(SharedFit::parse("eval-step-cost").operator_only_term() == "eval-step-cost");   // the same
    CHECK(SharedFit::parse("operator,eval-step-cost").eval_step_cost);
}

// --like a v4.1 system applies its stack's and its release's offsets, as the fit priced its results.
TEST_CASE("release-speed: --like a named system applies its stack and its release offsets", "[operator]") {
    ProfileSet set = operator_profiles();
    set.stack_speeds = {{"NVIDIA/H100-SXM", 0.9}, {"ngc24.09/H100-SXM", 0.8}};
    const LikeChoice named = resolve_like(set, "NVIDIA/eos_n8_ngc24.09_nemo", "H100-SXM");
    CHECK(named.speed == Approx(0.72));
    CHECK(named.stack == "NVIDIA/H100-SXM x ngc24.09/H100-SXM");
    CHECK(resolve_like(set, "NVIDIA/eos_n8_ngc23.04_pytorch", "H100-SXM").speed == Approx(0.9));   // release not fitted
    CHECK(resolve_like(set, "ngc24.09/H100-SXM", "H100-SXM").speed == Approx(0.8));                // a key itself
}

// Physical sanity of the shipped profiles: an H200 is an H100 die with more and faster HBM, so no step of the same
// layout, at any scale, may come out slower on it. (A GPU family's fitted speed divides the roofs only: one
// that also stretched the per-kernel overheads, as 0.83 did for H200, made Stable Diffusion and RetinaNet come out
// 2-5 % slower on H200 from 512 GPUs up.) The data-parallel workloads, at the H100's batch; LoRA's published layouts differ by GPU.

// roof-blend and tensor-memory (options): the fit searches the roofs' exponent within 1-32 and the
// tensor-core kernels' memory efficiency within 0.30-1, leaves both at 0 (off) without them, and a profile file
// keeps what it fitted.
TEST_CASE("roof-blend, tensor-memory: fitted within their bounds, off without them, kept by a profile file",
          "[operator][calibration]") {
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 2);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& gpu = *bert.front().scenario.gpu;
    const CalibrationReport with = calibrate_operator_points(bert, "test", SharedFit::parse("operator,roof-blend,tensor-memory"));
    const layers::Efficiency fitted = *with.profiles.find(workload, gpu).operator_efficiency;
    CHECK(fitted.roof_exponent >= 1.0);
    CHECK(fitted.roof_exponent <= 32.0);
    CHECK(fitted.tensor_memory >= 0.3);
    CHECK(fitted.tensor_memory <= 1.0);
    const CalibrationReport without = calibrate_operator_points(bert, "test", SharedFit::parse("operator"));
    CHECK(without.profiles.find(workload, gpu).operator_efficiency->roof_exponent == 0);
    CHECK(without.profiles.find(workload, gpu).operator_efficiency->tensor_memory == 0);
    CHECK(SharedFit::parse("operator,roof-blend,tensor-memory").describe() == "operator,roof-blend,tensor-memory");
    const auto file = std::filesystem::temp_directory_path() / "ttsim_roof_blend_profiles.yaml";
    with.profiles.save_file(file);
    const layers::Efficiency back = *ProfileSet::load_file(file).find(workload, gpu).operator_efficiency;
    // An exponent below 1 would price a kernel above the sum of its roofs: refused at the key.
    {
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        std::string edited = text.str();
        const auto at = edited.find("roof_exponent: ");
        REQUIRE(at != std::string::npos);
        edited.replace(at, edited.find(',', at) - at, "roof_exponent: 0.5");
        std::ofstream(file) << edited;
        CHECK_THROWS_WITH(ProfileSet::load_file(file), Catch::Contains("roof_exponent is 0 (off) or from 1 to 64"));
    }
    std::filesystem::remove(file);
    CHECK(back.roof_exponent == Approx(fitted.roof_exponent).epsilon(1e-5));
    CHECK(back.tensor_memory == Approx(fitted.tensor_memory).epsilon(1e-5));
}

// class-overhead (option): the streaming kernels' GPU overhead per kernel fitted apart from the
// tensor-core kernels'; it needs kernel-overhead, is 0 (the shared value) without it, and a profile file keeps it.
TEST_CASE("class-overhead: a streaming kernel's own overhead, fitted within bounds and kept by a profile file",
          "[operator][calibration]") {
    CHECK_THROWS_AS(SharedFit::parse("operator,class-overhead"), InputError);
    layers::Efficiency e;
    e.kernel_overhead_seconds = 10e-6;
    CHECK(layers::kernel_overhead(true, e) == 10e-6);
    CHECK(layers::kernel_overhead(false, e) == 10e-6);
    e.streaming_overhead_seconds = 3e-6;
    CHECK(layers::kernel_overhead(true, e) == 10e-6);
    CHECK(layers::kernel_overhead(false, e) == 3e-6);
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 2);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& gpu = *bert.front().scenario.gpu;
    const CalibrationReport with =
        calibrate_operator_points(bert, "test", SharedFit::parse("operator,kernel-overhead,class-overhead"));
    const layers::Efficiency fitted = *with.profiles.find(workload, gpu).operator_efficiency;
    CHECK(fitted.streaming_overhead_seconds >= 1e-7);
    CHECK(fitted.streaming_overhead_seconds <= 2e-5);
    const CalibrationReport without = calibrate_operator_points(bert, "test", SharedFit::parse("operator,kernel-overhead"));
    CHECK(without.profiles.find(workload, gpu).operator_efficiency->streaming_overhead_seconds == 0);
    const auto file = std::filesystem::temp_directory_path() / "ttsim_class_overhead_profiles.yaml";
    with.profiles.save_file(file);
    const layers::Efficiency back = *ProfileSet::load_file(file).find(workload, gpu).operator_efficiency;
    std::filesystem::remove(file);
    CHECK(back.streaming_overhead_seconds == Approx(fitted.streaming_overhead_seconds).epsilon(1e-5));
}

// same-die (option): a GPU on the reference GPU's die (gpus.yaml die: H200 is H100's GH100) keeps speed 1
// instead of a fitted one; another die (B200) is still fitted. A small fit: BERT on H100 and H200 at 8 GPUs.
TEST_CASE("same-die: an H200 keeps the H100's speed, not a fitted one", "[operator][calibration]") {
    CHECK(find_gpu("H200-SXM").die == "GH100");
    CHECK(find_gpu("H200-SXM").die == reference_gpu().die);
    CHECK(find_gpu("B200").die != reference_gpu().die);
    std::vector<CalibrationPoint> bert;
    for (const CalibrationPoint& p : points())
        if (p.scenario.workload->name == "bert" && p.scenario.gpus == 8 &&
            (p.scenario.gpu->name == "H100-SXM" || p.scenario.gpu->name == "H200-SXM"))
            bert.push_back(p);
    REQUIRE(bert.size() >= 4);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& h200 = find_gpu("H200-SXM");
    const CalibrationReport pinned = calibrate_operator_points(bert, "test", SharedFit::parse("operator,same-die"));
    CHECK(pinned.profiles.find(workload, h200).operator_speed == 1.0);
    const CalibrationReport free = calibrate_operator_points(bert, "test", SharedFit::parse("operator"));
    CHECK(free.profiles.find(workload, h200).operator_speed != 1.0);
    CHECK(SharedFit::parse("operator,same-die").describe() == "operator,same-die");
}

// gpu-efficiencies (option): a GPU family besides the reference gets its own kernel-class efficiencies,
// within the reference's bounds, and no speed; the reference keeps the shared ones. A small fit: SD and BERT on H100
// and H200 at 8 GPUs (GEMM, convolution, attention and streaming kernels).
TEST_CASE("gpu-efficiencies: each GPU family fits its own class efficiencies in place of a speed", "[operator][calibration]") {
    std::vector<CalibrationPoint> eight;
    for (const CalibrationPoint& p : points())
        if ((p.scenario.workload->name == "bert" || p.scenario.workload->name == "stable_diffusion") &&
            p.scenario.gpus == 8 && (p.scenario.gpu->name == "H100-SXM" || p.scenario.gpu->name == "H200-SXM"))
            eight.push_back(p);
    REQUIRE(eight.size() >= 8);
    const GpuSpec& h100 = find_gpu("H100-SXM");
    const GpuSpec& h200 = find_gpu("H200-SXM");
    const Workload& sd = find_workload("stable_diffusion");
    const CalibrationReport own = calibrate_operator_points(eight, "test", SharedFit::parse("operator,gpu-efficiencies"));
    const ComputeProfile& h200_profile = own.profiles.find(sd, h200);
    const ComputeProfile& h100_profile = own.profiles.find(sd, h100);
    CHECK(h200_profile.operator_speed == 1.0);
    const layers::Efficiency& a = *h100_profile.operator_efficiency;
    const layers::Efficiency& b = *h200_profile.operator_efficiency;
    for (double e : {a.gemm, a.conv, a.attention, a.memory, b.gemm, b.conv, b.attention, b.memory}) {
        CHECK(e >= 0.05);
        CHECK(e <= 1.0);   // no kernel beats its roof on either family
    }
    CHECK((a.gemm != b.gemm || a.conv != b.conv || a.attention != b.attention || a.memory != b.memory));
    // Both families' profiles of one workload share everything but the efficiencies.
    CHECK(a.launch_seconds == b.launch_seconds);
    CHECK(a.kernel_overhead_seconds == b.kernel_overhead_seconds);
    // The fit explains the H200 results at least as well as one speed does (its search space holds that fit's
    // up to the memory floor; here within a margin for the local search).
    const CalibrationReport speed = calibrate_operator_points(eight, "test", SharedFit::parse("operator"));
    CHECK(speed.profiles.find(sd, h200).operator_speed != 1.0);
    CHECK(own.rms_log_error <= speed.rms_log_error * 1.05);
    CHECK(SharedFit::parse("operator,gpu-efficiencies").describe() == "operator,gpu-efficiencies");
    CHECK_THROWS_AS(SharedFit::parse("operator,gpu-efficiencies,same-die"), InputError);
}

// eval-stage (option): the first stage is the fit without the evaluation's terms, so every parameter that
// prices a training step comes out exactly as that fit's; the second moves only the evaluation terms and the per-run
// overheads. A small fit: BERT on H100 at <= 8 GPUs (eager evaluations of batches of 16).
TEST_CASE("eval-stage: the step's parameters are the fit without evaluation terms, only those and the run overhead move",
          "[operator][calibration]") {
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 4);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& gpu = *bert.front().scenario.gpu;
    const std::string base = "operator,kernel-overhead,workload-run-overhead";
    // eval-launch puts a dimension between two of the first stage's (launch, kernel overhead): values are matched by
    // name, not by position.
    const SharedFit staged_options = SharedFit::parse(base + ",eval-passes,eval-host-ops,eval-launch,eval-stage");
    CHECK(staged_options.without_evaluation_terms().describe() == SharedFit::parse(base).describe());
    const ComputeProfile plain = calibrate_operator_points(bert, "test", SharedFit::parse(base)).profiles.find(workload, gpu);
    const CalibrationReport staged_report = calibrate_operator_points(bert, "test", staged_options);
    const ComputeProfile staged = staged_report.profiles.find(workload, gpu);
    const layers::Efficiency& a = *plain.operator_efficiency;
    const layers::Efficiency& b = *staged.operator_efficiency;
    CHECK(b.gemm == a.gemm);
    CHECK(b.conv == a.conv);
    CHECK(b.attention == a.attention);
    CHECK(b.memory == a.memory);
    CHECK(b.launch_seconds == a.launch_seconds);
    CHECK(b.kernel_overhead_seconds == a.kernel_overhead_seconds);
    CHECK(staged.fixed_step_seconds == plain.fixed_step_seconds);
    // The second stage searched the evaluation's host operations and launch cost within their bounds, off their
    // starts (100 a sample, 50 us), and refitted the per-run overhead.
    CHECK(staged.operator_eval_passes);
    CHECK(staged.eval_host_kernels_per_sample >= 1.0);
    CHECK(staged.eval_host_kernels_per_sample <= 1e5);
    CHECK(staged.eval_host_kernels_per_sample != Approx(100.0));
    CHECK(b.eval_launch_seconds >= 2e-6);
    CHECK(b.eval_launch_seconds <= 2e-3);
    CHECK(b.eval_launch_seconds != Approx(5e-5));
    CHECK(staged.run_overhead_seconds != plain.run_overhead_seconds);
    CHECK(staged_report.data_description.find("eval-stage") != std::string::npos);
    // A joint fit with the same terms moves the step's parameters too (what the option is for).
    const ComputeProfile joint =
        calibrate_operator_points(bert, "test", SharedFit::parse(base + ",eval-passes,eval-host-ops")).profiles.find(workload, gpu);
    CHECK((joint.operator_efficiency->gemm != a.gemm || joint.operator_efficiency->launch_seconds != a.launch_seconds ||
           joint.operator_efficiency->kernel_overhead_seconds != a.kernel_overhead_seconds));
}

// staged-refit (option): after eval-stage's two stages, the step's parameters are searched again with the
// evaluations priced as the second stage fitted them, then the evaluation's terms again, each locally from where the
// stages left off: the fit's whole loss (every term as the second stage prices it) can only fall, and the step's
// parameters move. A small fit: BERT on H100 at <= 8 GPUs (eager evaluations of 16 unpacked sequences).
TEST_CASE("staged-refit: the step's parameters are refitted with the evaluations priced, lowering the loss",
          "[operator][calibration]") {
    const std::vector<CalibrationPoint> bert = h100_up_to_8("bert");
    REQUIRE(bert.size() >= 4);
    const Workload& workload = *bert.front().scenario.workload;
    const GpuSpec& gpu = *bert.front().scenario.gpu;
    const std::string staged = "operator,kernel-overhead,workload-run-overhead,eval-passes,eval-host-ops,eval-launch,eval-stage";
    const SharedFit two_options = SharedFit::parse(staged);
    const CalibrationReport two = calibrate_operator_points(bert, "test", two_options);
    const CalibrationReport refit = calibrate_operator_points(bert, "test", SharedFit::parse(staged + ",staged-refit"));
    auto loss = [&](const CalibrationReport& r) {
        double sum = 0;
        for (const CalibrationPoint& p : bert) sum += point_loss(p, point_profile(p, r.profiles), two_options.loss_terms());
        return sum;
    };
    INFO("loss: two stages " << loss(two) << ", refitted " << loss(refit));
    CHECK(loss(refit) <= loss(two) * (1 + 1e-9));
    CHECK(loss(refit) < loss(two));   // here the refit finds a better point, not only the same
    // Copies: find() returns the profile by value.
    const layers::Efficiency a = *two.profiles.find(workload, gpu).operator_efficiency;
    const layers::Efficiency b = *refit.profiles.find(workload, gpu).operator_efficiency;
    CHECK((a.gemm != b.gemm || a.attention != b.attention || a.memory != b.memory ||
           a.kernel_overhead_seconds != b.kernel_overhead_seconds || a.launch_seconds != b.launch_seconds));
    for (double e : {b.gemm, b.conv, b.attention, b.memory}) CHECK(e <= 1.0);
    const std::string described = SharedFit::parse(staged + ",staged-refit").describe();
    CHECK(described.find("staged-refit") != std::string::npos);
    CHECK(SharedFit::parse(described).describe() == described);
    CHECK_THROWS_WITH(SharedFit::parse("operator,eval-passes,eval-host-ops,staged-refit"), Catch::Contains("add eval-stage"));
}

// Whether the model fits an operator-only term is --model's question (tools/cli fit_for_model, like every operator
// term; tests/cli/malformed/commands.txt), so a list may leave 'operator' out.
TEST_CASE("eval-stage: refused without an evaluation term", "[operator][calibration]") {
    CHECK_THROWS_WITH(SharedFit::parse("operator,eval-stage"), Catch::Contains("add eval-passes"));
    CHECK_THROWS_WITH(SharedFit::parse("operator,eval-passes,eval-stage"), Catch::Contains("add eval-passes"));
    CHECK(SharedFit::parse("eval-fixed,eval-stage").operator_only_term() == "eval-stage");
    CHECK(SharedFit::parse("operator,eval-cost,eval-stage").describe() == "operator,eval-cost,eval-stage");
}

// logged-scoring (option): RetinaNet scores its evaluations asynchronously, and the clock counts the final
// scoring once per run; the option adds the median the fit results' logs measure to the fitted per-run overhead.
TEST_CASE("logged-scoring: the final asynchronous scoring from the logs joins the per-run overhead", "[operator][calibration]") {
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
    const CalibrationReport with =
        calibrate_operator_points(retinanet, "test", SharedFit::parse("operator,workload-run-overhead,logged-scoring"));
    CHECK(with.profiles.find(workload, gpu).run_overhead_seconds >= scoring + 0.01);   // the fitted part's floor
    CHECK(with.data_description.find("retinanet final scoring seconds (logged") != std::string::npos);
    const CalibrationReport without =
        calibrate_operator_points(retinanet, "test", SharedFit::parse("operator,workload-run-overhead"));
    CHECK(without.data_description.find("final scoring") == std::string::npos);
    // warmup-logs compares the per-run overhead with the first segment's excess, which holds no final scoring.
    CHECK_THROWS_WITH(SharedFit::parse("operator,workload-run-overhead,warmup-logs,logged-scoring"),
                      Catch::Contains("exclude each other"));
}

// graph-host-overlap (option): parsed, exclusive with host-overlap, and kept by a profile file.
TEST_CASE("graph-host-overlap: an option of the operator model, exclusive with host-overlap, kept by a profile file",
          "[operator][calibration]") {
    CHECK(SharedFit::parse("operator,graph-host-overlap").graph_host_overlap);
    CHECK(SharedFit::parse("operator,graph-host-overlap").operator_only_term() == "graph-host-overlap");
    CHECK_THROWS_WITH(SharedFit::parse("operator,host-overlap,graph-host-overlap"), Catch::Contains("choose one"));
    ProfileSet set;
    ComputeProfile profile = operator_profiles().find(find_workload("retinanet"), find_gpu("h100"));
    profile.operator_graph_host_overlap = true;
    set.add(profile);
    const auto file = std::filesystem::temp_directory_path() / "ttsim_graph_host_overlap_profiles.yaml";
    set.save_file(file);
    CHECK(ProfileSet::load_file(file).find(find_workload("retinanet"), find_gpu("h100")).operator_graph_host_overlap);
    profile.operator_host_overlap = true;
    ProfileSet both;
    both.add(profile);
    both.save_file(file);
    CHECK_THROWS_WITH(ProfileSet::load_file(file), Catch::Contains("exclude each other"));
    std::filesystem::remove(file);
}

// graph-host-overlap leaves the loss flat in a fixed host cost hidden behind every fitted step; the fit takes the
// smallest value with the same loss (operator_fit.cpp lower_hidden_host_costs), so a shorter graphed step the fit
// never saw does not pay an arbitrary cost. RetinaNet's H100 results on at most 8 GPUs replay a whole-iteration
// graph of tens of milliseconds: its host cost goes to the floor, and the fit's residual is what it was.
TEST_CASE("graph-host-overlap: a host cost hidden behind every fitted step is fitted at its floor", "[operator][calibration]") {
    const std::vector<CalibrationPoint> retinanet = h100_up_to_8("retinanet");
    REQUIRE(retinanet.size() >= 2);
    const CalibrationReport hidden =
        calibrate_operator_points(retinanet, "test", SharedFit::parse("operator,step-logs,graph-host-overlap"));
    const CalibrationReport added = calibrate_operator_points(retinanet, "test", SharedFit::parse("operator,step-logs"));
    const Workload& workload = *retinanet.front().scenario.workload;
    const GpuSpec& gpu = *retinanet.front().scenario.gpu;
    CHECK(hidden.profiles.find(workload, gpu).fixed_step_seconds == Approx(1e-5).epsilon(1e-9));
    // Nowhere binding, the term cannot fit these steps better than the additive cost does (measured RMS log error
    // 0.0259 against 0.0249; the 0.1 % margin only absorbs the optimiser's stopping point).
    CHECK(hidden.rms_log_error >= added.rms_log_error * (1 - 1e-3));
}
