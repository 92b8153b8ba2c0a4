// SHARP on/off as a user choice: predict() refuses it where the model cannot run it (the same rule as the collective
// model), sweeps and plans carry `sharp:` to every point (running without it where a job fits one NVLink domain),
// and the sweep's CSV/JSON record the routing and SHARP each point ran with.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/collectives/group_layout.hpp"
#include "models/collectives/tuner.hpp"
#include "models/planning/plan_evaluator.hpp"
#include "models/planning/plan_format.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/results_format.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"
#include "models/training/predict.hpp"
#include "sim/errors.hpp"
#include "topologies/presets.hpp"

using namespace ttsim;
using namespace ttsim::planning;

namespace {

const ProfileSet& shipped_profiles() {
    static const ProfileSet set = ProfileSet::load_dir(ProfileSet::default_dir());
    return set;
}

PredictionRequest bert_on(const char* system, int gpus) {
    PredictionRequest r;
    r.workload = "bert";
    r.system = system;
    r.gpus = gpus;
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

// The InputError `body` throws (fails the test when it throws none).
template <typename Body>
InputError input_error_of(Body body) {
    try {
        body();
    } catch (const InputError& e) {
        return e;
    }
    FAIL("expected an InputError");
    return InputError("");
}

// Fields of one CSV line (RFC 4180 quoting, as results_format.cpp writes it).
std::size_t csv_fields(const std::string& line) {
    std::size_t fields = 1;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++fields;
    }
    return fields;
}

}  // namespace

TEST_CASE("SHARP can run exactly where the collective model runs it", "[training][sharp]") {
    // The rule predict() checks without building anything, against the collective model on the built preset: SHARP
    // is a candidate for the whole cluster's all-reduce only when the job spans two NVLink domains.
    for (const PresetInfo& preset : preset_systems()) {
        for (const int gpus : {preset.gpus_per_nvlink_domain, 2 * preset.gpus_per_nvlink_domain}) {
            const Topology topology = build_preset(preset.name, gpus);
            const GroupLayout layout(topology, {});
            INFO(preset.name << " x" << gpus);
            CHECK(sharp_unavailable_reason(resolve_system(preset.name), gpus).empty() ==
                  inapplicable_reason(CollectiveAlgorithm::Sharp, CollectiveOp::AllReduce, layout, true).empty());
        }
    }
}

TEST_CASE("predict: SHARP on where it cannot run is refused at the sharp key", "[training][sharp]") {
    // One node of a preset, and of a GPU without one (analytic model): one NVLink domain, no switch fabric.
    for (const char* system : {"dgx-h100", "A100-SXM"}) {
        PredictionRequest r = bert_on(system, 8);
        REQUIRE_NOTHROW(prepare(r));   // otherwise valid: the default runs without SHARP
        CHECK_FALSE(prepare(r).layout.sharp);
        r.sharp = true;
        const InputError e = input_error_of([&] { prepare(r); });
        INFO(e.message());
        CHECK(e.field() == Field::sharp);
        CHECK_THAT(e.message(), Catch::Contains("8 GPUs fit in one") && Catch::Contains("NVLink domain (up to 8 GPUs)"));
        r.sharp = false;   // off is always possible
        CHECK_FALSE(prepare(r).layout.sharp);
    }
    // Two nodes: on is the default; off is honoured; both on the simulated fabric.
    PredictionRequest r = bert_on("dgx-h100", 16);
    const PreparedScenario by_default = prepare(r);
    r.sharp = true;
    const PreparedScenario on = prepare(r);
    r.sharp = false;
    const PreparedScenario off = prepare(r);
    CHECK(by_default.layout.sharp);
    CHECK(on.layout.sharp);
    CHECK_FALSE(off.layout.sharp);
    CHECK(on.bucket_comm_seconds == by_default.bucket_comm_seconds);
    CHECK(off.comm_topology == "dgx-h100 x16");
    // A100's generic nodes sit on the same InfiniBand fabric, so two A100 nodes take SHARP too.
    PredictionRequest a100 = bert_on("A100-SXM", 16);
    a100.sharp = true;
    CHECK(prepare(a100).layout.sharp);
}

TEST_CASE("sweep and plan scenarios take sharp: for every point, strictly", "[planning][sharp]") {
    const auto study = ConfigNode::load_string(
        "scenario: scaling-study\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [8, 16]\ninclude_published_gpus: false\n"
        "sharp: true\n",
        "study.yaml");
    const SweepScenario s = read_sweep_scenario(study);
    REQUIRE(s.spec.sharp == std::optional<bool>(true));
    const std::vector<SweepPoint> points = expand_sweep(s.spec);
    REQUIRE(points.size() == 2);
    for (const SweepPoint& p : points) {
        CHECK(p.requested_sharp() == std::optional<bool>(true));
    }
    // The one-node point runs without SHARP instead of failing; the two-node point runs with it.
    const PointOutcome one_node = predict_point(points[0], shipped_profiles());
    const PointOutcome two_nodes = predict_point(points[1], shipped_profiles());
    REQUIRE(one_node.ok);
    REQUIRE(two_nodes.ok);
    CHECK_FALSE(one_node.prediction.layout.sharp);
    CHECK(two_nodes.prediction.layout.sharp);

    const auto plan = ConfigNode::load_string(
        "scenario: plan\nworkload: bert\nsystems: [dgx-h100]\nsharp: false\ndeadline: 10min\n", "plan.yaml");
    CHECK(read_plan_scenario(plan).query.sharp == std::optional<bool>(false));

    // Strict, at the key's line: not a boolean; set twice (top level and a network option); on where no point
    // or candidate spans two NVLink domains.
    const std::string head = "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\n";
    const struct {
        std::string text, expect;
    } bad[] = {
        {head + "gpus: [8, 16]\nsharp: 1\n", "expected true or false, got '1'"},
        {head + "gpus: [16]\nnetwork: {nic: xdr, sharp: true}\nsharp: true\n", "set SHARP in one place"},
        {head + "gpus: [4, 8]\nsharp: true\n", "no point of this sweep spans two domains"},
        {"scenario: plan\nworkload: bert\nsystems: [dgx-h100]\ndeadline: 10min\ngpus: {from: 8, to: 8}\nsharp: true\n",
         "no configuration searched spans two domains"},
    };
    for (const auto& b : bad) {
        const auto root = ConfigNode::load_string(b.text, "bad.yaml");
        const InputError e = input_error_of([&] {
            if (b.text.rfind("scenario: plan", 0) == 0)
                read_plan_scenario(root);
            else
                read_sweep_scenario(root);
        });
        INFO(b.text << "-> " << e.what());
        CHECK(e.key() == "sharp");
        CHECK(std::string(e.what()).find("bad.yaml:") != std::string::npos);
        CHECK_THAT(e.message(), Catch::Contains(b.expect));
    }
    // Off needs no fabric, so it is fine anywhere.
    CHECK_NOTHROW(read_sweep_scenario(ConfigNode::load_string(head + "gpus: [8]\nsharp: false\n", "off.yaml")));
}

TEST_CASE("sweep CSV and JSON record the routing and SHARP of every point", "[planning][sharp]") {
    SweepSpec spec;
    spec.workloads = {"bert"};
    spec.systems = {"dgx-h100"};
    spec.gpu_counts = {8, 16};
    spec.routing = FabricRouting::StaticEcmp;
    spec.sharp = false;
    // A second batch rule that no data-parallel size divides: error rows must keep the columns too.
    spec.batches = {planning::BatchChoice{}, planning::BatchChoice{BatchRule::fixed_global, 12}};
    const SweepResult result = run_sweep(expand_sweep(spec), shipped_profiles(), SweepOptions{});
    REQUIRE(result.points.size() == 4);

    const std::string csv = format_sweep_csv(result);
    std::vector<std::string> lines;
    for (std::size_t start = 0, end; start < csv.size(); start = end + 1) {
        end = csv.find('\n', start);
        lines.push_back(csv.substr(start, end - start));
    }
    REQUIRE(lines.size() == 5);
    // New columns are appended: every earlier column keeps its position.
    CHECK_THAT(lines[0], Catch::StartsWith("index,workload,system,gpu,network,nic,sharp,oversubscription,") &&
                             Catch::EndsWith(",error_percent,warnings,routing,sharp_used,pareto_cost,layout_choice,published_layout_minutes,"
                                             "mfu,model_tflops_per_gpu,goodput,interruptions,checkpoint_interval_minutes,"
                                             "expected_wall_minutes,wall_p90_minutes"));
    int errors = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        INFO(lines[i]);
        CHECK(csv_fields(lines[i]) == csv_fields(lines[0]));
        CHECK_THAT(lines[i], Catch::Contains(",ndr,off,"));   // the sharp column: what was asked for
        const bool ok = lines[i].find(",ok,") != std::string::npos;
        errors += ok ? 0 : 1;
        CHECK_THAT(lines[i], Catch::Contains(ok ? ",static,false," : ",static,,"));
    }
    CHECK(errors == 2);

    const auto json = nlohmann::json::parse(format_sweep_json("sweep", "t", result));
    for (const auto& point : json["points"]) {
        CHECK(point["routing"] == "static");
        CHECK(point["network"]["sharp"] == "off");
        if (point["status"] == "ok") CHECK(point["layout"]["sharp"] == false);
    }
}

TEST_CASE("a plan states the SHARP it searched with", "[planning][sharp]") {
    PlanQuery query;
    query.systems = {"dgx-h100"};
    query.gpu_counts = {8, 16};
    query.constraints.deadline_minutes = 1e6;
    query.routing = FabricRouting::StaticEcmp;
    query.sharp = false;
    const CostParameters cost;
    const EnergyParameters energy;
    const PlanAnswer answer = answer_plan_query(query, make_prediction_evaluator("bert", shipped_profiles(), energy,
                                                                                 cost, query));
    const PlanReportContext ctx{"bert", &query, &cost, &energy};
    CHECK_THAT(format_plan_table(ctx, answer), Catch::Contains("searched dgx-h100 (static ECMP routing, SHARP off): 8..16 GPUs in whole nodes of 8 GPUs"));
    const auto json = nlohmann::json::parse(format_plan_json("plan", ctx, answer));
    CHECK(json["sharp"] == "off");
    CHECK(json["routing"] == "static");
    query.sharp.reset();
    CHECK_FALSE(nlohmann::json::parse(format_plan_json("plan", ctx, answer)).contains("sharp"));
}

TEST_CASE("SHARP asked for on a topology file whose NICs are not on InfiniBand switches is refused", "[sharp]") {
    // It used to be reported as on while the collectives ran without it (they need an InfiniBand fabric,
    // GroupLayout::infiniband_fabric): the results were those of SHARP off.
    const std::string examples = std::string(TTSIM_SOURCE_DIR) + "/topologies/examples/";
    FabricChoice ethernet;
    ethernet.topology_file = examples + "pcie_servers_ethernet.yaml";
    const System pcie = with_fabric(resolve_system("dgx-h100"), ethernet);
    CHECK_FALSE(pcie.topology_file_infiniband);
    CHECK_THAT(sharp_unavailable_reason(pcie, pcie.topology_file_gpus),
               Catch::Contains("does not attach every GPU to InfiniBand switches"));
    FabricChoice infiniband;
    infiniband.topology_file = examples + "two_dgx_h100.yaml";
    const System dgx = with_fabric(resolve_system("dgx-h100"), infiniband);
    CHECK(dgx.topology_file_infiniband);
    CHECK(sharp_unavailable_reason(dgx, 16).empty());
}
