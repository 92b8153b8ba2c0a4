// staged-logged-evals (SharedFit, fit_loss.cpp): eval-stage's first stage prices each result's evaluations at its
// logged seconds and leaves out the eval-logs comparison; the second stage and predictions are unchanged.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_loss.hpp"
#include "models/compute/profile_files.hpp"
#include "models/training/predict.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

TEST_CASE("staged-logged-evals: the first stage's run minutes price evaluations at their logged seconds",
          "[calibration][operator]") {
    const std::vector<CalibrationPoint> all = load_calibration_points({});
    const ProfileSet profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    int checked = 0;
    for (const CalibrationPoint& p : all) {
        if (!p.measured_eval_seconds || p.published_minutes <= 0) continue;
        const ComputeProfile profile = point_profile(p, profiles);
        const RunClock clock = run_clock(p.fit_scenario, profile);
        if (!(clock.eval_seconds > 0)) continue;
        RunClock at_logs = clock;
        at_logs.eval_seconds = *p.measured_eval_seconds;
        LossTerms plain;
        LossTerms logged = plain;
        logged.logged_eval_price = true;
        CHECK(point_loss(p, profile, logged) == Approx(time_to_train_loss(p, at_logs, false, false)).epsilon(1e-12));
        CHECK(point_loss(p, profile, plain) == Approx(time_to_train_loss(p, clock, false, false)).epsilon(1e-12));
        if (std::abs(clock.eval_seconds / *p.measured_eval_seconds - 1) > 0.01)
            CHECK(point_loss(p, profile, logged) != Approx(point_loss(p, profile, plain)).epsilon(1e-9));
        ++checked;
    }
    // The results of BERT, LoRA and RetinaNet with logged evaluations: 72 (v4.1_timing.csv; `-s` prints the count).
    CHECK(checked > 20);
}

TEST_CASE("staged-logged-evals: only eval-stage's first stage drops eval-logs and takes the logged price",
          "[calibration][operator]") {
    const std::string staged = "operator,workload-run-overhead,step-logs,eval-logs,eval-passes,eval-host-ops,eval-stage";
    const SharedFit f = SharedFit::parse(staged + ",staged-logged-evals");
    CHECK(f.loss_terms().eval_logs);
    CHECK_FALSE(f.loss_terms().logged_eval_price);
    const SharedFit first = f.without_evaluation_terms();
    CHECK_FALSE(first.loss_terms().eval_logs);
    CHECK(first.loss_terms().logged_eval_price);
    CHECK(first.loss_terms().step_logs);
    // Without the option the first stage keeps comparing its evaluations with the logs.
    CHECK(SharedFit::parse(staged).without_evaluation_terms().loss_terms().eval_logs);
    CHECK_FALSE(SharedFit::parse(staged).without_evaluation_terms().loss_terms().logged_eval_price);
    CHECK_THROWS_AS(SharedFit::parse("operator,eval-logs,staged-logged-evals"), InputError);
}
