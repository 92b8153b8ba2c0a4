// User-runs calibration data (models/calibration/user_runs.hpp) and --like (like_system.hpp): a fit on step times
// that a known profile produced gives those step times back; without a time to train the run terms are the
// fallback's; the step-time loss is what moves the fit.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "models/calibration/fit_loss.hpp"
#include "models/calibration/like_system.hpp"
#include "models/calibration/user_runs.hpp"
#include "models/compute/profile_files.hpp"
#include "models/workloads/layers/layer_graph.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("ttsim_user_runs_" + name);
    std::ofstream(path) << text;
    return path;
}

// What the shipped lumped BERT / H100 profile predicts at the published layouts of 8..64 GPUs, as a user-runs
// file measuring `column`: step_time (ms) or time_to_train (min).
std::string synthetic_runs(const ProfileSet& truth, const std::string& column) {
    std::string csv = "# synthetic: the shipped profile's own predictions\nworkload,system,gpus,global_batch," + column + "\n";
    for (const auto& [gpus, batch] : std::vector<std::pair<int, int>>{{8, 768}, {16, 1536}, {32, 2048}, {64, 4608}}) {
        PredictionRequest r;
        r.workload = "bert";
        r.system = "dgx-h100";
        r.gpus = gpus;
        r.global_batch = batch;
        const Prediction p = predict(r, truth);
        csv += column == "step_time" ? fmt::format("bert,dgx-h100,{},{},{:.6f}ms\n", gpus, batch, p.step_ms)
                                     : fmt::format("bert,dgx-h100,{},{},{:.6f}min\n", gpus, batch, p.ttt_minutes);
    }
    return csv;
}

}  // namespace

TEST_CASE("user runs: the format is told apart by its header") {
    CHECK(is_user_runs_csv(write_file("a.csv", "# comment\nworkload,system,gpus,global_batch,step_time\n")));
    CHECK_FALSE(is_user_runs_csv(write_file("b.csv", "round,benchmark,submitter\n")));
    CHECK_THROWS_AS(is_user_runs_csv(write_file("c.csv", "model,gpus\n")), InputError);
    CHECK_THROWS_AS(is_user_runs_csv(write_file("d.csv", "# only a comment\n")), InputError);
}

TEST_CASE("user runs: rows become points at the published layout, comment lines keep line numbers") {
    const auto file = write_file("rows.csv", "# a\n# b\nworkload,system,gpus,global_batch,step_time,time_to_train,label\n"
                                             "bert,dgx-h100,8,768,98ms,,Lab/one\nbert,dgx-h100,64,4608,,1.5min,\n");
    const auto points = load_user_runs(file);
    REQUIRE(points.size() == 2);
    CHECK(points[0].result.csv_line == 4);
    CHECK(points[0].result.submitter == "Lab");
    CHECK(points[0].result.system == "one");
    CHECK(*points[0].measured_step_seconds == Approx(0.098));
    CHECK(points[0].published_minutes == 0);
    CHECK(points[1].result.submitter == "user");
    CHECK_FALSE(points[1].measured_step_seconds);
    CHECK(points[1].published_minutes == Approx(1.5));
    CHECK(points[1].scenario.layout.global_batch == 4608);
    CHECK(points[1].scenario.gpus == 64);
}

TEST_CASE("user runs: a step-time fit reproduces the step times that made them, run terms from the fallback") {
    const ProfileSet shipped = load_profiles(ProfileSet::default_dir(), ComputeModel::lumped);
    const auto points = load_user_runs(write_file("synthetic.csv", synthetic_runs(shipped, "step_time")));
    const UserCalibration fit = calibrate_user_runs(points, "test", SharedFit{}, shipped);
    CHECK_FALSE(fit.note.empty());
    for (const CalibrationPoint& p : points) {
        const PointError e = evaluate_point(p, fit.report.profiles);
        CHECK(e.step_time_only);
        CHECK(std::abs(e.error) < 0.01);
    }
    const ComputeProfile fitted = fit.report.profiles.find(find_workload("bert"), find_gpu("H100-SXM"));
    const ComputeProfile truth = shipped.find(find_workload("bert"), find_gpu("H100-SXM"));
    CHECK(fitted.run_overhead_seconds == truth.run_overhead_seconds);
    CHECK(fitted.eval_fixed_seconds == truth.eval_fixed_seconds);
}

TEST_CASE("user runs: the step-time loss is the log error of the model's step") {
    const ProfileSet shipped = load_profiles(ProfileSet::default_dir(), ComputeModel::lumped);
    auto points = load_user_runs(write_file("one.csv", "workload,system,gpus,global_batch,step_time\nbert,dgx-h100,8,768,100ms\n"));
    const ComputeProfile profile = shipped.find(find_workload("bert"), find_gpu("H100-SXM"));
    const double step = run_clock(points[0].fit_scenario, profile).step_seconds;
    CHECK(point_loss(points[0], profile, LossTerms{.step_logs = true}) == Approx(std::pow(std::log(step / 0.1), 2)));
    points[0].measured_step_seconds = step;
    CHECK(point_loss(points[0], profile, LossTerms{.step_logs = true}) == Approx(0.0).margin(1e-15));
    CHECK(point_loss(points[0], profile, LossTerms{}) == 0.0);   // step-logs off: the step time is not fitted
}

TEST_CASE("like SUBMITTER/SYSTEM: no offsets, malformed and unknown names are refused, a stack divides the kernel times") {
    ProfileSet set = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    CHECK(set.stack_speeds.count("NVIDIA/H100-SXM"));   // the shipped set's (one per stack)
    set.stack_speeds.clear();                            // as a set without offsets
    CHECK_THROWS_WITH(resolve_like(set, "NVIDIA/eos_n8_ngc23.04_pytorch", "H100-SXM"),
                      Catch::Contains("no per-system speed offsets"));
    set.stack_speeds["NVIDIA/H100-SXM"] = 1.25;
    set.stack_speeds["Lab/H100-SXM"] = 0.8;
    CHECK_THROWS_WITH(resolve_like(set, "NVIDIA", "H100-SXM"), Catch::Contains("SUBMITTER/SYSTEM"));
    CHECK_THROWS_WITH(resolve_like(set, "Foo/bar", "H100-SXM"), Catch::Contains("NVIDIA/eos_n8_ngc23.04_pytorch"));
    const LikeChoice v41 = resolve_like(set, "NVIDIA/eos_n8_ngc23.04_pytorch", "H100-SXM");
    CHECK(v41.stack == "NVIDIA/H100-SXM");
    CHECK(v41.speed == 1.25);
    CHECK(v41.warnings.empty());
    CHECK(resolve_like(set, "Lab/cluster-a", "H100-SXM").stack == "Lab/H100-SXM");   // a user-runs label
    // A system of any round names its stack: Dell's v5.0 H200 system, a stack the v4.1 results also have.
    set.stack_speeds["Dell/H200-SXM"] = 0.9;
    CHECK(resolve_like(set, "Dell/2xXE9680Lx8H200-SXM-141GB", "H200-SXM").stack == "Dell/H200-SXM");
    // A misspelt published system of a known submitter is not a label: its stack is named only by itself or a
    // published name.
    CHECK_THROWS_WITH(resolve_like(set, "NVIDIA/eos_n8_ngc23.04_pytorh", "H100-SXM"), Catch::Contains("matches no software stack"));
    CHECK_THROWS_WITH(resolve_like(set, "NVIDIA/H100-SXM ", "H100-SXM"), Catch::Contains("matches no software stack"));
    CHECK(resolve_like(set, "NVIDIA/H100-SXM", "H100-SXM").speed == 1.25);
    // The lumped model's profiles have no kernels to divide.
    CHECK_THROWS_WITH(resolve_like(load_profiles(ProfileSet::default_dir(), ComputeModel::lumped), "NVIDIA/H100-SXM", "H100-SXM"),
                      Catch::Contains("use the operator model"));
    CHECK_FALSE(resolve_like(set, "NVIDIA/H100-SXM", "H200-SXM").warnings.empty());  // another family
    const ProfileSet faster = with_stack_speed(set, "H100-SXM", v41);
    const auto& bert = find_workload("bert");
    CHECK(faster.find(bert, find_gpu("H100-SXM")).operator_stack_speed ==
          Approx(1.25 * set.find(bert, find_gpu("H100-SXM")).operator_stack_speed));
}

TEST_CASE("user runs: layout columns reach the prepared scenario") {
    const auto points = load_user_runs(write_file(
        "layout.csv", "workload,system,gpus,global_batch,micro,distributed_optimizer,cuda_graphs,time_to_train,samples_to_converge\n"
                      "bert,dgx-h100,16,768,24,on,none,3min,2500000\n"
                      "bert,dgx-h100,16,768,48,off,full_iteration,3min,\n"));
    REQUIRE(points.size() == 2);
    CHECK(points[0].scenario.layout.samples_per_micro_batch == 24);
    CHECK(points[0].scenario.layout.gradient_accumulation == 2);
    CHECK(points[0].scenario.layout.distributed_optimizer);
    CHECK_FALSE(points[1].scenario.layout.distributed_optimizer);
    REQUIRE(points[0].scenario.operator_table);
    CHECK(points[0].scenario.operator_table->cuda_graphs == layers::CudaGraphs::none);
    CHECK(points[1].scenario.operator_table->cuda_graphs == layers::CudaGraphs::full_iteration);
    CHECK(points[0].published_convergence);
    CHECK(points[0].fit_scenario.samples_mean == 2500000);
    CHECK(points[0].scenario.samples_mean != 2500000);   // reports keep the RCPs' convergence
    CHECK_FALSE(points[1].published_convergence);
}

TEST_CASE("user runs: with times to train the run terms are fitted, not taken from the fallback") {
    const ProfileSet shipped = load_profiles(ProfileSet::default_dir(), ComputeModel::lumped);
    const auto points = load_user_runs(write_file("ttt.csv", synthetic_runs(shipped, "time_to_train")));
    const UserCalibration fit = calibrate_user_runs(points, "test", SharedFit{}, shipped);
    CHECK(fit.note.empty());
    for (const CalibrationPoint& p : points) {
        const PointError e = evaluate_point(p, fit.report.profiles);
        CHECK_FALSE(e.step_time_only);
        CHECK(std::abs(e.error) < 0.02);
    }
}

// A few step times cannot tell a GEMM efficiency from their own stack's speed: the operator fit of a user's runs
// holds the shipped physics and moves the stacks' offsets and the workload's own terms. The shipped example's
// eight BERT rows on 8-64 H100s (examples/my-runs-bert-h100.csv, --max-gpus 64): every kernel-class efficiency,
// the launch and per-kernel costs and the GPU speeds stay the shipped ones; the identifiability report names
// only stack speeds and BERT's terms, and says which of them the rows determined.
TEST_CASE("user runs: the operator fit moves the stacks' offsets, not the shipped physics", "[operator][calibration]") {
    const ProfileSet shipped = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    std::vector<CalibrationPoint> rows;
    for (CalibrationPoint& p : load_user_runs(std::string(TTSIM_SOURCE_DIR) + "/examples/my-runs-bert-h100.csv"))
        if (p.scenario.gpus <= 64) rows.push_back(std::move(p));
    REQUIRE(rows.size() == 8);
    SharedFit fit_options = SharedFit::operator_defaults();
    fit_options.parameter_uncertainty = true;
    const UserCalibration fit = calibrate_user_runs(rows, "test", fit_options, shipped);
    const ComputeProfile fitted = fit.report.profiles.find(find_workload("bert"), find_gpu("H100-SXM"));
    const ComputeProfile before = shipped.find(find_workload("bert"), find_gpu("H100-SXM"));
    REQUIRE(fitted.operator_efficiency);
    const layers::Efficiency& a = *fitted.operator_efficiency;
    const layers::Efficiency& b = *before.operator_efficiency;
    CHECK(a.gemm == Approx(b.gemm).epsilon(1e-12));
    CHECK(a.conv == Approx(b.conv).epsilon(1e-12));
    CHECK(a.attention == Approx(b.attention).epsilon(1e-12));
    CHECK(a.memory == Approx(b.memory).epsilon(1e-12));
    CHECK(a.launch_seconds == Approx(b.launch_seconds).epsilon(1e-12));
    CHECK(a.kernel_overhead_seconds == Approx(b.kernel_overhead_seconds).epsilon(1e-12));
    CHECK(fitted.operator_speed == Approx(before.operator_speed).epsilon(1e-12));
    // What moved: a speed per label's stack, and the report lists nothing else but BERT's own terms.
    REQUIRE(fit.report.profiles.stack_speeds.count("NVIDIA/H100-SXM"));
    CHECK(fit.report.profiles.stack_speeds.at("NVIDIA/H100-SXM") != 1.0);
    REQUIRE_FALSE(fit.report.parameters.empty());
    for (const ParameterEstimate& e : fit.report.parameters) {
        INFO(e.name);
        CHECK((e.spec->scope == ParamScope::software_stack || e.spec->scope == ParamScope::workload));
    }
    INFO(format_identifiability(fit.report.parameters));
    // The stacks with the most rows (NVIDIA's and Lambda's two each) are the ones the data placed best.
    for (const ParameterEstimate& e : fit.report.parameters)
        if (e.name == "NVIDIA/H100-SXM speed") CHECK(e.posterior_log_sd < e.prior_log_sd);
}
