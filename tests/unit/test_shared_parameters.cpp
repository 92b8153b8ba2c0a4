// The fit switches (models/calibration SharedFit), the robust loss, and the per-run / per-step terms of a profile
// (ComputeProfile::run_overhead_seconds, step_jitter_seconds).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "models/calibration/calibration.hpp"
#include "sim/errors.hpp"
#include "tests/unit/calibration_helpers.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {
using test::prediction_request;
const ProfileSet& shipped() { return test::shipped_profile_set(); }
}  // namespace

TEST_CASE("fit switches parse strictly and round-trip", "[calibration]") {
    // The lumped model's defaults and the operator model's (every switch on).
    CHECK(SharedFit{}.describe() == "robust,run-logs");
    CHECK(SharedFit::operator_defaults().describe() == "robust,run-logs,step-logs,eval-logs,convergence-lag");
    CHECK(SharedFit::operator_defaults().operator_model);
    CHECK(SharedFit::parse("step-logs").describe() == "step-logs");   // a list names all that is on
    CHECK(SharedFit::parse("none").describe() == "none");
    CHECK_THROWS_WITH(SharedFit::parse("none,robust"), Catch::Contains("stands alone"));
    CHECK_THROWS_WITH(SharedFit::parse("robust,none"), Catch::Contains("stands alone"));
    const SharedFit all = SharedFit::parse("convergence-lag,eval-logs,step-logs,run-logs,robust");
    CHECK(all.robust);
    CHECK(all.run_logs);
    CHECK(all.step_logs);
    CHECK(all.eval_logs);
    CHECK(all.convergence_lag);
    CHECK_FALSE(all.operator_model);   // --model's, not a switch
    CHECK(all.describe() == SharedFit::operator_defaults().describe());
    CHECK(SharedFit::parse(all.describe()).describe() == all.describe());
    const LossTerms terms = SharedFit::parse("robust,eval-logs").loss_terms();
    CHECK(terms.robust);
    CHECK(terms.eval_logs);
    CHECK_FALSE(terms.run_logs);
    CHECK_FALSE(terms.step_logs);
    // The model is not a switch: the candidate terms a list once named are unknown names, and so is the model.
    for (const char* gone : {"operator", "jitter-cv", "multi-node", "staged-refit", "identified-host-cost"})
        CHECK_THROWS_WITH(SharedFit::parse(gone), Catch::Contains("unknown fit switch"));
    CHECK_THROWS_AS(SharedFit::parse("robust,"), InputError);
    CHECK_THROWS_AS(SharedFit::parse(""), InputError);
}

TEST_CASE("the per-run overhead adds once per run, independent of steps", "[training]") {
    for (const char* workload : {"bert", "stable_diffusion"}) {
        const PreparedScenario s = prepare(prediction_request(workload, "dgx-h100", 64));
        ComputeProfile profile = shipped().find(*s.workload, *s.gpu);
        profile.run_overhead_seconds = 0;
        const Prediction base = evaluate(s, profile);
        profile.run_overhead_seconds = 12.0;
        const Prediction with = evaluate(s, profile);
        INFO(workload);
        CHECK(with.ttt_minutes - base.ttt_minutes == Approx(0.2).margin(1e-12));
        CHECK(with.step_ms == base.step_ms);
        CHECK(with.ttt_p90_minutes - base.ttt_p90_minutes == Approx(0.2).margin(1e-12));
    }
}

TEST_CASE("absolute step jitter costs sigma x E[max of N] per step and grows with N", "[training]") {
    double previous = 0;
    for (int gpus : {8, 64, 1024}) {
        const PreparedScenario s = prepare(prediction_request("retinanet", "dgx-h100", gpus));
        ComputeProfile profile = shipped().find(*s.workload, *s.gpu);
        profile.step_jitter_per_node = false;   // N = GPUs
        profile.step_jitter_seconds = 0;
        const double base = evaluate(s, profile).step_ms;
        profile.step_jitter_seconds = 0.001;
        const double extra = evaluate(s, profile).step_ms - base;
        INFO(gpus << " GPUs");
        CHECK(extra == Approx(expected_max_standard_normal(gpus)).epsilon(1e-9));   // 1 ms x E[max]
        CHECK(extra > previous);
        previous = extra;
    }
}

TEST_CASE("profiles round-trip the shared terms through YAML", "[calibration]") {
    ProfileSet set;
    ComputeProfile p = shipped().find(find_workload("bert"), find_gpu("H100-SXM"));
    p.run_overhead_seconds = 7.5;
    p.step_jitter_seconds = 2.5e-4;
    p.eval_host_kernels_per_sample = 4759.5;
    if (!p.operator_efficiency) p.operator_efficiency = layers::Efficiency{};
    p.operator_efficiency->eval_launch_seconds = 7.25e-5;
    set.add(p);
    const auto file = std::filesystem::temp_directory_path() / "ttsim-test-shared-profiles.yaml";
    set.save_file(file);
    const ProfileSet back = ProfileSet::load_file(file);
    std::filesystem::remove(file);
    const ComputeProfile q = back.find(find_workload("bert"), find_gpu("H100-SXM"));
    CHECK(q.run_overhead_seconds == 7.5);
    CHECK(q.step_jitter_seconds == 2.5e-4);
    CHECK(q.eval_host_kernels_per_sample == 4759.5);
    REQUIRE(q.operator_efficiency);
    CHECK(q.operator_efficiency->eval_launch_seconds == 7.25e-5);
    CHECK(q.multi_node_step_seconds == p.multi_node_step_seconds);
}

TEST_CASE("per-node step noise: no straggler term on one node, E[max of nodes] beyond", "[training]") {
    // Same relative spread, drawn per node instead of per GPU: a single node runs at its undisturbed pace, and
    // at every scale the node population is smaller than the GPU population, so the stretch is smaller.
    for (int gpus : {8, 64, 1024}) {
        const PreparedScenario s = prepare(prediction_request("bert", "dgx-h100", gpus));
        ComputeProfile profile = shipped().find(*s.workload, *s.gpu);
        profile.step_jitter_seconds = 0;
        profile.step_jitter_cv = 0;
        const Prediction quiet = evaluate(s, profile);
        profile.step_jitter_cv = 0.05;
        profile.step_jitter_per_node = true;
        const Prediction per_node = evaluate(s, profile);
        profile.step_jitter_per_node = false;
        const Prediction per_gpu = evaluate(s, profile);
        INFO(gpus << " GPUs");
        const int nodes = gpus / 8;
        CHECK(s.node_straggler_sigmas == expected_max_standard_normal(nodes));
        if (nodes == 1) {
            CHECK(per_node.step_ms == quiet.step_ms);
        } else {
            CHECK(per_node.step_ms > quiet.step_ms);
        }
        CHECK(per_gpu.step_ms > per_node.step_ms);
        // The stretch multiplies compute only: the per-GPU and per-node stretches of the same compute are in the
        // ratio of their E[max] (the optimizer part is not stretched and cancels in the difference).
        if (nodes > 1)
            CHECK((per_gpu.compute_ms - quiet.compute_ms) / (per_node.compute_ms - quiet.compute_ms) ==
                  Approx(expected_max_standard_normal(gpus) / expected_max_standard_normal(nodes)).epsilon(1e-9));
    }
}

TEST_CASE("the jitter unit round-trips through YAML and is parsed strictly", "[calibration]") {
    ProfileSet set;
    ComputeProfile p = shipped().find(find_workload("retinanet"), find_gpu("H100-SXM"));
    p.step_jitter_per_node = true;
    set.add(p);
    const auto dir = std::filesystem::temp_directory_path() / "ttsim-test-jitter-unit";
    std::filesystem::create_directories(dir);
    const auto file = dir / "profiles.yaml";
    set.save_file(file);
    CHECK(ProfileSet::load_file(file).find(find_workload("retinanet"), find_gpu("H100-SXM")).step_jitter_per_node);
    p.step_jitter_per_node = false;
    set.add(p);
    set.save_file(file);
    CHECK_FALSE(ProfileSet::load_file(file).find(find_workload("retinanet"), find_gpu("H100-SXM")).step_jitter_per_node);

    // A wrong value names the file, its line and the key.
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    in.close();
    std::string yaml = text.str();
    const auto at = yaml.find("step_jitter_unit: gpu");
    REQUIRE(at != std::string::npos);
    yaml.replace(at, std::string("step_jitter_unit: gpu").size(), "step_jitter_unit: rack");
    std::ofstream(file) << yaml;
    try {
        ProfileSet::load_file(file);
        FAIL("a bad step_jitter_unit was accepted");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK(what.find("profiles.yaml") != std::string::npos);
        CHECK(what.find("step_jitter_unit") != std::string::npos);
        CHECK(what.find("'gpu' or 'node'") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("the robust loss bounds the pull of a result no term explains", "[calibration]") {
    // RetinaNet on <= 16 H100s, one result made 60 % slower than published: the squared loss drags the fit towards
    // it, the soft-L1 loss much less, so the other results stay closer and the outlier keeps its large error.
    std::vector<CalibrationPoint> used = test::h100_points({"retinanet"}, 16);
    REQUIRE(used.size() >= 5);
    used.front().published_minutes *= 1.6;
    used.front().runs.clear();
    auto errors = [&](const char* shared) {
        const CalibrationReport report = calibrate_points(used, "test", SharedFit::parse(shared));
        double others = 0;
        for (std::size_t i = 1; i < report.fitted.size(); ++i) others += std::abs(report.fitted[i].error);
        return std::make_pair(std::abs(report.fitted.front().error), others / (report.fitted.size() - 1));
    };
    const auto [outlier_plain, others_plain] = errors("none");
    const auto [outlier_robust, others_robust] = errors("robust");
    CHECK(others_robust < 0.5 * others_plain);
    CHECK(outlier_robust > outlier_plain);
}
