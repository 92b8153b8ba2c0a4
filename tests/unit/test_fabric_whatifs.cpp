// Training predictions price their collectives on the system's simulated fabric for every what-if: NIC speed,
// oversubscription, routing, a YAML topology, a hypothetical GPU (models/hardware/system.hpp, predict.hpp).
#include <catch2/catch.hpp>

#include <algorithm>

#include <string>
#include <vector>

#include "models/planning/plan_evaluator.hpp"
#include "models/planning/point_prediction.hpp"
#include "models/planning/sweep_config.hpp"
#include "models/planning/sweep_runner.hpp"
#include "prediction_helpers.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

const std::string kTwoDgx = std::string(TTSIM_TESTS_DIR) + "/../topologies/examples/two_dgx_h100.yaml";

Prediction predict_on(const std::string& workload, int gpus, FabricChoice fabric, bool sharp = false) {
    PredictionRequest r = test::prediction_request(workload, "dgx-h100", gpus);
    r.sharp = sharp;
    r.fabric = std::move(fabric);
    return predict(r, test::shipped_profile_set());
}

}  // namespace

TEST_CASE("RetinaNet on 1,024 H100s: NDR, HDR, XDR and 2:1 oversubscription each give their own time", "[fabric]") {
    const Prediction ndr = predict_on("retinanet", 1024, {});
    const Prediction hdr = predict_on("retinanet", 1024, {.nic = NicSpeed::Hdr200});
    const Prediction xdr = predict_on("retinanet", 1024, {.nic = NicSpeed::Xdr800});
    const Prediction over = predict_on("retinanet", 1024, {.oversubscription = 2.0});
    for (const Prediction* p : {&ndr, &hdr, &xdr, &over}) {
        INFO(p->fabric);
        CHECK(p->comm_topology == "dgx-h100 x1024");   // simulated on the fabric, not estimated
        CHECK_FALSE(p->layout.sharp);
    }
    CHECK(hdr.fabric == "HDR 200G NICs");
    CHECK(xdr.fabric == "XDR 800G NICs");
    CHECK(over.fabric == "NDR 400G NICs, 2:1 oversubscribed");
    // Slower fabric, more gradient communication and a longer run; all four differ.
    CHECK(hdr.comm_total_ms > ndr.comm_total_ms);
    CHECK(ndr.comm_total_ms > xdr.comm_total_ms);
    CHECK(over.comm_total_ms > ndr.comm_total_ms);
    CHECK(hdr.ttt_minutes > ndr.ttt_minutes);
    CHECK(ndr.ttt_minutes > xdr.ttt_minutes);
    CHECK(over.ttt_minutes > ndr.ttt_minutes);
    CHECK(over.ttt_minutes != hdr.ttt_minutes);
}

TEST_CASE("a slower fabric never gives a faster training run", "[fabric]") {
    // Over workloads and scales, with SHARP on and off: NIC rates in ascending order never lengthen the run, and
    // more oversubscription never shortens it.
    const std::vector<NicSpeed> nics = {NicSpeed{12.5e9}, NicSpeed::Hdr200, NicSpeed::Ndr400, NicSpeed::Xdr800};
    for (const char* workload : {"bert", "retinanet", "llama2_70b_lora", "stable_diffusion"}) {
        for (int gpus : {64, 512, 2048}) {
            for (bool sharp : {false, true}) {
                INFO(workload << " on " << gpus << (sharp ? " SHARP on" : " SHARP off"));
                double previous_ttt = 0, previous_comm = 0;
                for (std::size_t i = 0; i < nics.size(); ++i) {
                    const Prediction p = predict_on(workload, gpus, {.nic = nics[i]}, sharp);
                    INFO(p.fabric);
                    if (i > 0) {
                        CHECK(p.ttt_minutes <= previous_ttt);
                        CHECK(p.comm_total_ms <= previous_comm + 1e-9);
                    }
                    previous_ttt = p.ttt_minutes;
                    previous_comm = p.comm_total_ms;
                }
                double previous = 0;
                for (double ratio : {1.0, 2.0, 4.0}) {
                    const Prediction p = predict_on(workload, gpus, {.oversubscription = ratio}, sharp);
                    INFO(p.fabric);
                    CHECK(p.ttt_minutes >= previous);
                    previous = p.ttt_minutes;
                }
            }
        }
    }
}

// A topology file describes its own links: an H100 cluster's file (NVLink4, 450 GB/s a direction) under B200s
// (NVLink5, 900 GB/s) is priced as the file says, and the prediction says so; on H100s nothing is said.
TEST_CASE("a topology file whose NVLink is not the GPU's own is warned about", "[fabric]") {
    auto said = [](const Prediction& p) {
        return std::any_of(p.warnings.begin(), p.warnings.end(),
                           [](const std::string& w) { return w.find("gives each GPU NVLink at 450 GB/s") != std::string::npos; });
    };
    PredictionRequest b200 = test::prediction_request("bert", "dgx-b200", 16);
    b200.fabric.topology_file = kTwoDgx;
    CHECK(said(predict(b200, test::shipped_profile_set())));
    PredictionRequest h100 = test::prediction_request("bert", "dgx-h100", 16);
    h100.fabric.topology_file = kTwoDgx;
    CHECK_FALSE(said(predict(h100, test::shipped_profile_set())));
}

TEST_CASE("a training prediction runs on a YAML topology", "[fabric]") {
    PredictionRequest r = test::prediction_request("bert", "dgx-h100", 16);
    r.fabric.topology_file = kTwoDgx;
    const Prediction on_file = predict(r, test::shipped_profile_set());
    CHECK(on_file.comm_topology == "two-dgx-h100");
    CHECK(on_file.fabric == "topology " + kTwoDgx);
    CHECK_FALSE(on_file.layout.sharp);   // a topology file has no default SHARP
    CHECK(on_file.comm_total_ms > 0);
    // The file describes what the preset builds for 16 GPUs (static ECMP): the same gradient communication within
    // the precision of the two descriptions, which differ in routing only.
    PredictionRequest preset = test::prediction_request("bert", "dgx-h100", 16);
    preset.sharp = false;
    preset.fabric.routing = FabricRouting::StaticEcmp;
    const Prediction on_preset = predict(preset, test::shipped_profile_set());
    CHECK(on_file.comm_total_ms == Approx(on_preset.comm_total_ms).epsilon(0.05));

    // Its GPU count is the file's; fabric options cannot join it.
    r.gpus = 32;
    CHECK_THROWS_WITH(predict(r, test::shipped_profile_set()), Catch::Contains("has 16"));
    r.gpus = 16;
    r.fabric.nic = NicSpeed::Xdr800;
    try {
        (void)predict(r, test::shipped_profile_set());
        FAIL("a NIC with a topology file was accepted");
    } catch (const InputError& e) {
        CHECK(e.field() == Field::nic);
    }
}

TEST_CASE("a sweep runs on a YAML topology from cluster: topology_file", "[fabric][planning]") {
    const auto root = ConfigNode::load_string("scenario: sweep\nworkloads: [bert, retinanet]\nsystems: [dgx-h100, "
                                              "dgx-h200]\ncluster: {topology_file: " + kTwoDgx + "}\n",
                                              "topo-sweep.yaml");
    const planning::SweepScenario s = planning::read_sweep_scenario(root);
    REQUIRE(s.spec.gpu_counts == std::vector<int>{16});
    const auto points = planning::expand_sweep(s.spec);
    REQUIRE(points.size() == 4);
    const planning::SweepResult result = planning::run_sweep(points, test::shipped_profile_set(), {});
    for (const auto& r : result.points) {
        INFO(r.point.workload << " " << r.point.system << ": " << r.outcome.error);
        REQUIRE(r.outcome.ok);
        CHECK(r.outcome.prediction.comm_topology == "two-dgx-h100");
    }
    // The file fixes the GPU count; a NIC option describes another fabric.
    CHECK_THROWS_WITH(planning::read_sweep_scenario(ConfigNode::load_string(
                          "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [32]\ncluster: {topology_file: " +
                              kTwoDgx + "}\n",
                          "bad.yaml")),
                      Catch::Contains("bad.yaml:4") && Catch::Contains("has 16 GPUs"));
    CHECK_THROWS_WITH(planning::read_sweep_scenario(ConfigNode::load_string(
                          "scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\nnetwork: [{nic: xdr}]\n"
                          "cluster: {topology_file: " + kTwoDgx + "}\n",
                          "bad.yaml")),
                      Catch::Contains("bad.yaml:4") && Catch::Contains("describes its own fabric"));
}

TEST_CASE("fabric options that cannot apply are refused, naming the option", "[fabric]") {
    // Oversubscription shapes leaf uplinks; one DGX (one NVLink domain) has none.
    PredictionRequest r = test::prediction_request("bert", "dgx-h100", 8);
    r.fabric.oversubscription = 2.0;
    try {
        (void)prepare(r);
        FAIL("oversubscription within one NVLink domain was accepted");
    } catch (const InputError& e) {
        CHECK(e.field() == Field::oversubscription);
        CHECK_THAT(e.message(), Catch::Contains("one dgx-h100 NVLink domain"));
    }
    // A GB200 NVL72 rack is one domain of 72 GPUs.
    PredictionRequest rack = test::prediction_request("bert", "gb200-nvl72", 72);
    rack.fabric.oversubscription = 2.0;
    CHECK_THROWS_AS(prepare(rack), InputError);
    rack.gpus = 144;
    CHECK_NOTHROW(prepare(rack));
}

TEST_CASE("a hypothetical GPU's NVLink and NIC rates reach the simulated fabric", "[fabric][planning]") {
    // Twice the NVLink bandwidth: the intra-node all-reduce of 8 GPUs gets faster; the layout stays H100's.
    auto faster = std::make_shared<GpuSpec>(make_variant(find_gpu("H100-SXM"), "h100-2xnvlink"));
    faster->scaleup_bandwidth_per_direction *= 2;
    faster->scaleup_bandwidth_bidirectional *= 2;
    PredictionRequest base = test::prediction_request("bert", "dgx-h100", 8);
    PredictionRequest what_if = base;
    what_if.gpu_override = faster;
    what_if.gpu_label = "h100-2xnvlink";
    const PreparedScenario a = prepare(base), b = prepare(what_if);
    CHECK(b.system.name == "h100-2xnvlink");
    CHECK(b.layout.global_batch == a.layout.global_batch);
    REQUIRE_FALSE(a.bucket_comm_seconds.empty());
    CHECK(b.bucket_comm_seconds.front() < a.bucket_comm_seconds.front());
    const Topology t = build_topology(b.system, 8);
    CHECK(t.link(t.gpu(0).nvlink_up).bandwidth_bytes_per_s == Approx(900e9));
    // A slower NIC on the variant: 512 GPUs span nodes, so the NIC limits the gradient all-reduce.
    auto slow_nic = std::make_shared<GpuSpec>(make_variant(find_gpu("H100-SXM"), "h100-hdr"));
    slow_nic->nic_bandwidth_per_direction = 25e9;
    PredictionRequest wide = test::prediction_request("retinanet", "dgx-h100", 512);
    wide.sharp = false;
    PredictionRequest wide_slow = wide;
    wide_slow.gpu_override = slow_nic;
    const PreparedScenario c = prepare(wide), d = prepare(wide_slow);
    CHECK(d.system.fabric.nic == NicSpeed::Hdr200);
    CHECK(d.bucket_comm_seconds.front() > c.bucket_comm_seconds.front());
}

TEST_CASE("a what-if bandwidth 8x off the base GPU's is noted as a bits/bytes slip", "[fabric][planning]") {
    const GpuSpec& h100 = find_gpu("H100-SXM");
    GpuSpec typo = make_variant(h100, "typo");   // nvlink_bandwidth: 900Gb/s where 900GB/s both ways was meant
    typo.scaleup_bandwidth_per_direction = 900e9 / 8;
    typo.scaleup_bandwidth_bidirectional = 2 * typo.scaleup_bandwidth_per_direction;
    const std::vector<std::string> notes = planning::variant_unit_notes(h100, typo);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("nvlink_bandwidth 112.5 GB/s is 8x off H100-SXM's NVLink both directions") != std::string::npos);
    GpuSpec slow_nic = make_variant(h100, "nic");   // 50 GB/s written as 50Gb/s
    slow_nic.nic_bandwidth_per_direction = h100.nic_bandwidth_per_direction / 8;
    CHECK(planning::variant_unit_notes(h100, slow_nic).size() == 1);
    // A deliberate 2x what-if and the base's own figures are no slip.
    GpuSpec doubled = make_variant(h100, "2x");
    doubled.scaleup_bandwidth_per_direction *= 2;
    doubled.scaleup_bandwidth_bidirectional *= 2;
    doubled.hbm_bandwidth *= 2;
    CHECK(planning::variant_unit_notes(h100, doubled).empty());
    CHECK(planning::variant_unit_notes(h100, make_variant(h100, "same")).empty());
}

TEST_CASE("plans take the sweep's network, batch and gpu_variants keys, and refuse prices of unsearched systems",
          "[fabric][planning]") {
    const auto root = ConfigNode::load_string(
        "scenario: plan\nworkload: retinanet\nsystems: [dgx-h100, h100-xdr]\n"
        "gpu_variants: [{name: h100-xdr, base: dgx-h100, nic_bandwidth: 800Gb/s}]\n"
        "network: {nic: hdr, oversubscription: 2, sharp: false}\nbatch: {per_rank: 2}\n"
        "deadline: 10min\ngpus: {from: 512, to: 1024}\n",
        "plan.yaml");
    const planning::PlanScenario s = planning::read_plan_scenario(root);
    CHECK(s.query.systems == std::vector<std::string>{"dgx-h100", "h100-xdr"});
    CHECK(s.query.network.nic == NicSpeed::Hdr200);
    CHECK(s.query.network.oversubscription == 2.0);
    CHECK(s.query.sharp == std::optional<bool>(false));
    CHECK(s.query.batch.rule == planning::BatchRule::per_rank);
    CHECK(s.query.unit_of("h100-xdr").gpus == 8);   // a variant is rented as its base system
    const planning::PlanEvaluator evaluate =
        planning::make_prediction_evaluator(s.workload, test::shipped_profile_set(), s.energy, s.cost, s.query);
    const planning::PlanEvaluation hdr = evaluate({"dgx-h100", 1024});
    REQUIRE(hdr.ok);
    // The network option's NIC applies to every candidate, the variant's included (its own 800 Gb/s is replaced
    // by the option's HDR): both run the same fabric, so the same time.
    const planning::PlanEvaluation variant = evaluate({"h100-xdr", 1024});
    REQUIRE(variant.ok);
    CHECK(variant.ttt_minutes == Approx(hdr.ttt_minutes));
    // A plan on NDR is faster than on HDR with 2:1 oversubscription.
    planning::PlanQuery ndr_query = s.query;
    ndr_query.network = {};
    const planning::PlanEvaluation ndr =
        planning::make_prediction_evaluator(s.workload, test::shipped_profile_set(), s.energy, s.cost, ndr_query)(
            {"dgx-h100", 1024});
    REQUIRE(ndr.ok);
    CHECK(ndr.ttt_minutes < hdr.ttt_minutes);

    CHECK_THROWS_WITH(planning::read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\nsystems: [dgx-h100]\ndeadline: 1min\n"
                          "cost: {price_per_gpu_hour: {dgx-b200: 5}}\n",
                          "price.yaml")),
                      Catch::Contains("price.yaml:5") && Catch::Contains("does not search"));
    CHECK_THROWS_WITH(planning::read_plan_scenario(ConfigNode::load_string(
                          "scenario: plan\nworkload: bert\ndeadline: 1min\nnetwork: [{nic: xdr}, {nic: hdr}]\n",
                          "two.yaml")),
                      Catch::Contains("two.yaml:4") && Catch::Contains("one network option"));
    // On a topology file, the grid is the file's GPU count.
    const planning::PlanScenario on_file = planning::read_plan_scenario(ConfigNode::load_string(
        "scenario: plan\nworkload: bert\nsystems: [dgx-h100, dgx-h200]\ndeadline: 10min\ncluster: {topology_file: " +
            kTwoDgx + "}\n",
        "file.yaml"));
    CHECK(on_file.query.gpu_counts == std::vector<int>{16});
    CHECK(on_file.query.topology_file == std::optional<std::string>(kTwoDgx));
}
