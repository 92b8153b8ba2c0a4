// Allocation units: what a system is rented by governs the GPU counts a plan searches, the
// GPU-hours billed and the non-GPU energy charged; counts that are not whole units are answered with a warning.
#include <catch2/catch.hpp>

#include "models/hardware/system.hpp"
#include "models/planning/cost_energy.hpp"
#include "models/planning/plan_evaluator.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/plan_query.hpp"
#include "models/planning/prediction_cost.hpp"
#include "models/planning/reference_prices.hpp"
#include "models/planning/sweep_config.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "prediction_helpers.hpp"

using namespace ttsim;
using namespace ttsim::planning;

using test::error_key;

TEST_CASE("allocation units: a GB200 NVL72 is rented by the rack (trays as an option), a DGX by the node", "[allocation]") {
    const System gb200 = resolve_system("gb200-nvl72");
    CHECK(gb200.allocation == AllocationUnit::rack);
    CHECK(gb200.allocation_unit_gpus == 72);
    CHECK(gb200.describe_allocation(144) == "2 racks (144 GPUs)");
    CHECK(gb200.describe_allocation(36) == "1 rack (72 GPUs)");
    const System trays = with_allocation(gb200, AllocationUnit::tray);
    CHECK(trays.allocation_unit_gpus == 4);   // the NVL72 compute tray (SPOD_GB200: 18 x 4 GPUs)
    CHECK(trays.describe_allocation(36) == "9 trays (36 GPUs)");
    CHECK(with_allocation(trays, AllocationUnit::rack).allocation_unit_gpus == 72);
    CHECK(with_allocation(gb200, std::nullopt).allocation == AllocationUnit::rack);

    const System dgx = resolve_system("dgx-h100");
    CHECK(dgx.allocation == AllocationUnit::node);
    CHECK(dgx.allocation_unit_gpus == 8);
    CHECK(dgx.describe_allocation(144) == "18 nodes (144 GPUs)");
    CHECK(error_key([&] { (void)with_allocation(dgx, AllocationUnit::tray); }) == "allocation");
    CHECK(error_key([&] { (void)with_allocation(dgx, AllocationUnit::rack); }) == "allocation");
    CHECK_THROWS_WITH(with_allocation(dgx, AllocationUnit::tray), Catch::Contains("rented by the node"));
    CHECK(error_key([] { (void)parse_allocation("node"); }) == "allocation");
    CHECK(error_key([] { (void)parse_allocation("Rack"); }) == "allocation");

    CHECK(partial_allocation_warning(gb200, 144).empty());
    CHECK_THAT(partial_allocation_warning(gb200, 36),
               Catch::Contains("36 GPUs are not a whole number of gb200-nvl72 racks") && Catch::Contains("1 rack (72 GPUs)"));
    CHECK(partial_allocation_warning(trays, 36).empty());
    CHECK_THAT(partial_allocation_warning(dgx, 12), Catch::Contains("2 nodes (16 GPUs)"));
}

TEST_CASE("allocation units: GPU-hours billed whole, non-GPU power per unit from the rack's published figure", "[allocation]") {
    const System rack = resolve_system("gb200-nvl72");
    const System tray = with_allocation(rack, AllocationUnit::tray);
    const System dgx = resolve_system("dgx-h100");
    // One hour on 36 GPUs: a whole rack (72 GPU-hours), 9 trays (36), and on a DGX 12 GPUs rent 2 nodes (16).
    CHECK(rented_gpu_hours(rack, 36, 60) == Approx(72));
    CHECK(rented_gpu_hours(tray, 36, 60) == Approx(36));
    CHECK(rented_gpu_hours(rack, 144, 30) == Approx(72));
    CHECK(rented_gpu_hours(dgx, 12, 60) == Approx(16));

    const EnergyParameters p;
    const double rack_watts = reference_prices().rack_watts.at("gb200-nvl72");
    CHECK(rack_watts >= 120e3);   // the published ~120-132 kW per NVL72 rack (prices.yaml power.rack)
    CHECK(rack_watts <= 150e3);   // SPOD_GB200: ~1.2 MW per 8 racks, with the unit's network and storage
    // The GPUs are charged by their own TDP, so a rack's non-GPU part is its total less 72 GPU TDPs (not 18
    // trays x a DGX-style 2.5 kW node figure, the old model's 45 kW).
    const double rest = non_gpu_watts_per_unit(rack, p);
    CHECK(rest == Approx(rack_watts - 72 * rack.catalog_gpu->tdp_watts));
    CHECK(rest > 0);
    CHECK(rest != Approx(18 * p.node_watts));
    CHECK(non_gpu_watts_per_unit(tray, p) == Approx(rest / 18));   // 18 compute trays per rack
    CHECK(non_gpu_watts_per_unit(dgx, p) == p.node_watts);

    // A job on 36 GPUs of one rented rack: the other 36 idle, and the whole rack's non-GPU part draws.
    RunProfile run;
    run.gpus = 36;
    run.rented_gpus = 72;
    run.units = 1;
    run.unit_watts = 30000;
    run.ttt_seconds = 3600;
    run.busy_seconds = 1800;
    run.gpu_tdp_watts = 1200;
    run.gpu_idle_watts = 100;
    const EnergyBreakdown e = energy_of(run, p);
    // 36 x (1800 s x 1200 W + 1800 s x 100 W) + 36 x 3600 s x 100 W = 97.2 MJ = 27 kWh; 30 kW x 1 h = 30 kWh.
    CHECK(e.gpu_kwh == Approx(27.0));
    CHECK(e.node_kwh == Approx(30.0));
    run.rented_gpus = 35;   // fewer GPUs rented than used is a bug
    CHECK_THROWS_AS(energy_of(run, p), InternalError);
}

TEST_CASE("allocation units: a plan's grid is whole units, refused when none fits", "[allocation]") {
    const std::vector<int> racks = whole_unit_grid(8, 8192, 72);
    REQUIRE(racks.size() >= 5);
    CHECK(std::vector<int>(racks.begin(), racks.begin() + 5) == std::vector<int>{72, 144, 216, 288, 432});
    for (int n : racks) CHECK(n % 72 == 0);
    CHECK(racks.back() <= 8192);
    CHECK(whole_unit_grid(100, 300, 72) == std::vector<int>{144, 216, 288});   // from the first whole unit up
    CHECK(whole_unit_grid(8, 64, 72).empty());
    // The node grid keeps its powers of two and 1.5x (12 GPUs is not whole DGX nodes).
    CHECK(whole_unit_grid(8, 64, 8) == std::vector<int>{8, 16, 24, 32, 48, 64});

    PlanQuery q;
    q.systems = {"gb200-nvl72"};
    q.gpu_counts = plan_gpu_grid(8, 64);
    q.unit_of = [](const std::string&) { return PlanUnit{AllocationUnit::rack, 72}; };
    CHECK(error_key([&] { check_plan_range(q); }) == "max_gpus");
    q.unit_of = [](const std::string&) { return PlanUnit{AllocationUnit::tray, 4}; };
    CHECK(error_key([&] { check_plan_range(q); }) == "(none)");
    CHECK(plan_counts_for(q, "gb200-nvl72").front() == 8);
}

namespace {
PlanScenario gb200_plan(const std::string& extra) {
    return read_plan_scenario(ConfigNode::load_string(
        "scenario: plan\nworkload: llama2_70b_lora\nsystems: [gb200-nvl72]\ndeadline: 30min\n" + extra, "plan.yaml"));
}
PlanAnswer answer(const PlanScenario& s) {
    PlanQuery q = s.query;
    q.threads = 2;
    return answer_plan_query(q, make_prediction_evaluator(s.workload, test::shipped_profile_set(), s.energy, s.cost, q));
}
}  // namespace

TEST_CASE("allocation units: a GB200 plan answers whole racks by default, trays when allowed", "[allocation][slow]") {
    const PlanScenario by_rack = gb200_plan("");
    const PlanScenario by_tray = gb200_plan("allocation: tray\n");
    CHECK(by_rack.query.unit_of("gb200-nvl72").gpus == 72);
    CHECK(by_tray.query.unit_of("gb200-nvl72").gpus == 4);
    const PlanAnswer racks = answer(by_rack);
    const PlanAnswer trays = answer(by_tray);
    REQUIRE(racks.best);
    REQUIRE(trays.best);
    for (const auto& e : racks.evaluated) CHECK(e.candidate.gpus % 72 == 0);
    for (const auto& e : trays.evaluated) CHECK(e.candidate.gpus % 4 == 0);
    const int rack_gpus = racks.best->candidate.gpus, tray_gpus = trays.best->candidate.gpus;
    // Fewest GPUs that meet the deadline: whole racks by default; trays find a smaller answer below one rack.
    CHECK(rack_gpus % 72 == 0);
    CHECK(tray_gpus < rack_gpus);
    CHECK(tray_gpus % 72 != 0);
    CHECK(racks.best->evaluation.allocation == std::to_string(rack_gpus / 72) + " rack" + (rack_gpus > 72 ? "s" : "") +
                                                   " (" + std::to_string(rack_gpus) + " GPUs)");
    CHECK(trays.best->evaluation.rented_gpus == tray_gpus);
    // Cost follows the unit: the same count is billed the same when it is whole units of both.
    const PlanEvaluator rack_eval =
        make_prediction_evaluator(by_rack.workload, test::shipped_profile_set(), by_rack.energy, by_rack.cost, by_rack.query);
    const PlanEvaluator tray_eval =
        make_prediction_evaluator(by_tray.workload, test::shipped_profile_set(), by_tray.energy, by_tray.cost, by_tray.query);
    // 40 GPUs (5 LoRA replicas of 8): 10 trays, or part of one rack, billed whole (72 GPUs).
    const PlanEvaluation r40 = rack_eval({"gb200-nvl72", 40}), t40 = tray_eval({"gb200-nvl72", 40});
    REQUIRE(r40.ok);
    REQUIRE(t40.ok);
    CHECK(r40.ttt_minutes == Approx(t40.ttt_minutes));
    CHECK(r40.cost == Approx(72.0 / 40.0 * t40.cost));   // a whole rack (72 GPUs) billed against 10 trays (40)
    CHECK(r40.energy_kwh > t40.energy_kwh);              // 32 idle GPUs and a whole rack's non-GPU draw
    CHECK(r40.rented_gpus == 72);
    CHECK(t40.rented_gpus == 40);
    CHECK_THAT(r40.warnings, Catch::VectorContains(partial_allocation_warning(resolve_system("gb200-nvl72"), 40)));
    CHECK(t40.warnings.size() + 1 == r40.warnings.size());
    const PlanEvaluation r72 = rack_eval({"gb200-nvl72", 72}), t72 = tray_eval({"gb200-nvl72", 72});
    CHECK(r72.cost == Approx(t72.cost));
    CHECK(r72.energy_kwh == Approx(t72.energy_kwh));   // 18 trays' share = one rack
}

TEST_CASE("allocation units: a plan scenario's allocation is checked at its key", "[allocation]") {
    // Beside a rack-scale system a DGX keeps its node (a plan can weigh DGX nodes against GB200 trays); with no
    // rack-scale system searched the unit cannot apply and is refused at its key.
    const PlanScenario mixed = read_plan_scenario(ConfigNode::load_string(
        "scenario: plan\nworkload: bert\nsystems: [dgx-h100, gb200-nvl72]\ndeadline: 1min\nallocation: tray\n", "mixed.yaml"));
    CHECK(mixed.query.unit_of("gb200-nvl72").gpus == 4);
    CHECK(mixed.query.unit_of("dgx-h100").gpus == 8);
    CHECK(mixed.query.unit_of("dgx-h100").unit == AllocationUnit::node);
    CHECK_THROWS_WITH(read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\nsystems: [dgx-h100, dgx-b200]\ndeadline: 1min\n"
                          "allocation: tray\n",
                          "dgxs.yaml")),
                      Catch::Contains("dgxs.yaml:5") && Catch::Contains("dgx-h100 is rented by the node"));
    CHECK_THROWS_WITH(read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\nsystems: [gb200-nvl72]\ndeadline: 1min\nallocation: node\n",
                          "node.yaml")),
                      Catch::Contains("node.yaml:5"));
    CHECK_THROWS_WITH(read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\nsystems: [gb200-nvl72]\ndeadline: 1min\ngpus: {to: 64}\n",
                          "small.yaml")),
                      Catch::Contains("small.yaml:5") && Catch::Contains("one allocation unit of gb200-nvl72"));
}

TEST_CASE("allocation units: a sweep bills its points by the scenario's allocation", "[allocation]") {
    const SweepScenario racks = read_sweep_scenario(ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystems: [gb200-nvl72]\ngpus: [36, 72]\n", "sweep.yaml"));
    const SweepScenario trays = read_sweep_scenario(ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystems: [gb200-nvl72]\ngpus: [36, 72]\nallocation: tray\n", "sweep.yaml"));
    CHECK_FALSE(racks.spec.allocation);
    REQUIRE(trays.spec.allocation == std::optional<AllocationUnit>(AllocationUnit::tray));
    for (const SweepPoint& p : expand_sweep(trays.spec)) CHECK(point_system(p).allocation_unit_gpus == 4);
    for (const SweepPoint& p : expand_sweep(racks.spec)) CHECK(point_system(p).allocation_unit_gpus == 72);
    const SweepScenario mixed = read_sweep_scenario(ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h100, gb200-nvl72]\ngpus: [72]\nallocation: tray\n", "mixed.yaml"));
    for (const SweepPoint& p : expand_sweep(mixed.spec))
        CHECK(point_system(p).allocation_unit_gpus == (p.base_system == "gb200-nvl72" ? 4 : 8));
    CHECK_THROWS_WITH(read_sweep_scenario(ConfigNode::load_string(
                          "scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h100]\ngpus: [8]\nallocation: rack\n",
                          "dgx.yaml")),
                      Catch::Contains("dgx.yaml:5") && Catch::Contains("rented by the node"));
    CHECK_THROWS_WITH(read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\nsystems: [gb200-nvl72]\ndeadline: 1min\n"
                          "energy: {node_power: 3kW}\n",
                          "np.yaml")),
                      Catch::Contains("np.yaml:5") && Catch::Contains("rented by the node"));
}

TEST_CASE("allocation units: one prediction billed by trays where the user rents trays", "[allocation]") {
    // 8 GB200s: a 72-GPU rack by default (the rented GPU-hours 9x the used ones), two 4-GPU trays exactly.
    const Prediction p = predict(test::prediction_request("bert", "gb200-nvl72", 8), test::shipped_profile_set());
    const planning::EnergyParameters energy;
    const planning::CostParameters prices;
    const planning::PredictionCost rack = planning::cost_of_prediction(p, "gb200-nvl72", energy, prices);
    const planning::PredictionCost tray =
        planning::cost_of_prediction(p, "gb200-nvl72", energy, prices, AllocationUnit::tray);
    CHECK(rack.rented_gpu_hours == Approx(9.0 * p.gpu_hours).epsilon(1e-9));
    CHECK(tray.rented_gpu_hours == Approx(p.gpu_hours).epsilon(1e-9));
    CHECK(tray.cost == Approx(rack.cost / 9.0).epsilon(1e-9));
    CHECK(tray.energy.facility_kwh < rack.energy.facility_kwh);   // no idle rack of 64 GPUs and its share of power
    CHECK_THROWS_WITH(planning::cost_of_prediction(p, "dgx-h100", energy, prices, AllocationUnit::tray),
                      Catch::Contains("rented by the node"));
}

TEST_CASE("prices: a hypothetical variant is priced under its own name where given, else as its base system",
          "[allocation][cost]") {
    const SweepScenario s = read_sweep_scenario(ConfigNode::load_string(
        "scenario: sweep\nworkloads: [bert]\n"
        "gpu_variants:\n  - {name: h100-2xnvlink, base: dgx-h100, nvlink_bandwidth: 900GB/s}\n"
        "  - {name: h100-2xhbm, base: dgx-h100, hbm_bandwidth: 6.7TB/s}\n"
        "systems: [dgx-h100, h100-2xnvlink, h100-2xhbm]\ngpus: [8]\n"
        "cost: {price_per_gpu_hour: {dgx-h100: 2.5, h100-2xnvlink: 9.0}}\n",
        "variants.yaml"));
    const planning::CostParameters& cost = s.options.cost;
    CHECK(cost.price_of("h100-2xnvlink", "dgx-h100") == 9.0);
    CHECK_FALSE(cost.price_of_is_estimate("h100-2xnvlink", "dgx-h100"));
    CHECK(cost.price_of("h100-2xhbm", "dgx-h100") == 2.5);   // no price of its own: its base's
    CHECK(cost.price_of("dgx-h100", "dgx-h100") == 2.5);
    // The price line reads as charged (before, a plan's line showed a variant at the default estimate).
    const std::vector<std::pair<std::string, std::string>> labelled = {
        {"dgx-h100", "dgx-h100"}, {"h100-2xnvlink", "dgx-h100"}, {"h100-2xhbm", "dgx-h100"}};
    const std::string line = cost.describe_prices(labelled);
    CHECK(line.find("h100-2xnvlink 9.00 USD") != std::string::npos);
    CHECK(line.find("h100-2xhbm 2.50 USD") != std::string::npos);
    CHECK(line.find("default estimate") == std::string::npos);
    // A variant's name priced twice is refused as any duplicate key is.
    CHECK_THROWS_WITH(read_sweep_scenario(ConfigNode::load_string(
                          "scenario: sweep\nworkloads: [bert]\n"
                          "gpu_variants:\n  - {name: h100-2xnvlink, base: dgx-h100, nvlink_bandwidth: 900GB/s}\n"
                          "systems: [h100-2xnvlink]\ngpus: [8]\n"
                          "cost: {price_per_gpu_hour: {h100-2xnvlink: 9.0, h100-2xnvlink: 8.0}}\n",
                          "twice.yaml")),
                      Catch::Contains("duplicate key"));
}
