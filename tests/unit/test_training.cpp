#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <future>
#include <vector>

#include "models/training/iteration.hpp"
#include "models/compute/profile_files.hpp"
#include "models/planning/sweep_spec.hpp"
#include "models/training/predict.hpp"
#include "sim/errors.hpp"
#include "tests/unit/prediction_helpers.hpp"

using namespace ttsim;

namespace {
const ProfileSet& shipped_profiles() {
    static const ProfileSet set = ProfileSet::load_dir(ProfileSet::default_dir());
    return set;
}
PredictionRequest request(const char* workload, const char* system, int gpus) {
    PredictionRequest r;
    r.workload = workload;
    r.system = system;
    r.gpus = gpus;
    return r;
}
}  // namespace

TEST_CASE("iteration overlaps bucket communication with backward", "[training]") {
    IterationPlan plan;
    plan.micro_step_compute_seconds = 0.3;   // forward 0.1, backward 0.2
    plan.bucket_comm_seconds = {0.01, 0.01, 0.01, 0.01};
    IterationResult r = simulate_iteration(plan);
    // Buckets ready every 50 ms of backward; each takes 10 ms, so only the last one is exposed.
    CHECK(r.exposed_comm_seconds == Approx(0.01).margin(1e-9));
    CHECK(r.step_seconds == Approx(0.31).margin(1e-9));
    plan.bucket_comm_seconds = {0.1, 0.1, 0.1, 0.1};   // comm-bound: first ready at 0.15, 4 x 0.1 -> 0.55
    r = simulate_iteration(plan);
    CHECK(r.exposed_comm_seconds == Approx(0.25).margin(1e-9));
}

TEST_CASE("expected maximum of normals grows with N", "[training]") {
    CHECK(expected_max_standard_normal(1) == 0.0);
    CHECK(expected_max_standard_normal(2) == Approx(0.56).margin(0.03));
    CHECK(expected_max_standard_normal(1000) == Approx(3.24).margin(0.05));
}

// Physics acceptance. Once violated (RetinaNet 16 GPUs 0.2179 ms < 8 GPUs 0.2200 ms: NCCL's 44 us CollNetDirect
// latency let a 2-node SHARP all-reduce undercut the 1-node ring); fixed in the collective model by flooring every
// multi-node all-reduce at the same all-reduce on one of its nodes (collective_simulator, "one-island floor").
// The recipe is held fixed: BERT's published layouts reduce the gradients in one block after backward up to 8 nodes
// and overlap 5 blocks at 434 (workload_catalog.yaml `gradient_reduction`, `gradient_buckets`), so its default
// layouts change recipe between 256 and 1,024 GPUs; each mode is checked on its own across every count, in buckets
// of the workload's size.
TEST_CASE("more GPUs at fixed per-GPU batch never lower exposed communication", "[training]") {
    for (const char* workload : {"bert", "retinanet", "stable_diffusion"})
        for (bool after_backward : {false, true}) {
            double previous = -1;
            for (int gpus : {8, 16, 32, 64, 256, 1024, 4096}) {
                PredictionRequest r = request(workload, "dgx-h100", gpus);
                const std::string name = workload;
                const int per_gpu = name == "bert" ? 16 : 8;
                r.global_batch = per_gpu * gpus;
                // Stay within 2x the largest RCP batch (bert 16384, retinanet 4096, SD 2048).
                const int limit = name == "bert" ? 32768 : name == "retinanet" ? 8192 : 4096;
                if (*r.global_batch > limit) continue;
                r.compute_efficiency_vs_8gpu = false;
                const PreparedScenario as_published = prepare(r);
                ParallelismConfig layout = as_published.layout;
                layout.gradient_reduction_after_backward = after_backward;
                layout.gradient_buckets = 0;   // the workload's bucket size at every count
                const PreparedScenario s = prepare_with_layout(*as_published.workload, as_published.system, gpus, layout);
                const Prediction p = evaluate(s, shipped_profiles().find(*s.workload, *s.gpu));
                INFO(workload << " " << gpus << (after_backward ? ", reduced after backward" : ", overlapped"));
                CHECK(p.exposed_comm_ms >= previous - 1e-9);
                previous = p.exposed_comm_ms;
            }
        }
}

TEST_CASE("time to train is never below the compute-only bound", "[training]") {
    for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"})
        for (const char* system : {"dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"})
            for (int gpus : {8, 64, 512}) {
                const Prediction p = predict(request(workload, system, gpus), shipped_profiles());
                INFO(workload << " " << system << " " << gpus);
                CHECK(p.ttt_minutes >= p.compute_only_bound_minutes);
                CHECK(p.ttt_p10_minutes <= p.ttt_minutes);
                CHECK(p.ttt_p90_minutes >= p.ttt_minutes);
                CHECK(p.steps * p.global_batch >= p.samples_to_converge);
            }
}

TEST_CASE("model FLOPs utilisation is above 0 and at most 1 for every workload, system and scale, both compute models",
          "[training]") {
    // No step beats its roofline: the workload's training FLOPs per step can never exceed GPUs x step x peak.
    const ProfileSet operator_profiles = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    for (const ProfileSet* profiles : {&shipped_profiles(), &operator_profiles})
        for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"})
            for (const char* system : {"dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"})
                for (int gpus : {8, 64, 512, 2048}) {
                    const Prediction p = predict(request(workload, system, gpus), *profiles);
                    INFO(workload << " " << system << " " << gpus << " " << p.compute_model);
                    CHECK(p.model_flops_utilisation > 0);
                    CHECK(p.model_flops_utilisation <= 1);
                }
    // What-if GPUs whose compute is a hundredth to a quarter of an H100's: compute-bound everywhere, the closest
    // any step comes to its roofline. A first version divided the catalog's FLOPs by the bf16 peak and reached
    // 1.27 here (BERT's GEMMs run FP8; a review found it).
    for (double scale : {0.01, 0.1, 0.25})
        for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"}) {
            planning::HardwareVariant variant;
            variant.name = "h100-compute-x" + std::to_string(scale);
            variant.base_system = "dgx-h100";
            variant.compute_scale = scale;
            PredictionRequest r = request(workload, "dgx-h100", 8);
            r.gpu_override = std::make_shared<const GpuSpec>(planning::make_variant_gpu(variant));
            const Prediction p = predict(r, operator_profiles);
            INFO(workload << " at " << scale << " x H100 compute");
            // Compute-bound, so far above the real H100's 24.5-37.1 % at 64 GPUs: measured 0.574 (LoRA at 25 %) to
            // 0.910 (RetinaNet at 1 %) on 2026-12-06 (`ttsim run` of a sweep over these variants at 8 GPUs). 0.5 is
            // not a published figure: it only says the step is compute-bound, as these variants make it.
            CHECK(p.model_flops_utilisation > 0.5);
            CHECK(p.model_flops_utilisation <= 1);
        }
}

TEST_CASE("GPUs without v4.1 data get a transferred profile and a warning", "[training]") {
    const Prediction p = predict(request("bert", "gb200-nvl72", 72), shipped_profiles());
    bool warned = false;
    for (const auto& w : p.warnings) warned |= w.find("transferred") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("bad prediction input is an InputError naming the request field", "[training]") {
    const auto key_of = [](PredictionRequest r) {
        try {
            predict(r, shipped_profiles());
        } catch (const InputError& e) {
            return e.field() ? std::string(to_string(*e.field())) : "no field: " + e.key();
        }
        return std::string("no error");
    };
    CHECK(key_of(request("gpt5", "dgx-h100", 8)) == "workload");
    CHECK(key_of(request("bert", "dgx-h999", 8)) == "system");
    CHECK(key_of(request("bert", "dgx-h100", 12)) == "gpus");
    CHECK(key_of(request("bert", "dgx-h100", 0)) == "gpus");
    PredictionRequest r = request("bert", "dgx-h100", 64);
    r.global_batch = 1000;   // not divisible by DP 64
    CHECK(key_of(r) == "global_batch");
    r.global_batch = 64 * 1024;   // 4x the largest BERT RCP batch
    CHECK(key_of(r) == "global_batch");
    r.global_batch = 64;          // 4x below the smallest
    CHECK(key_of(r) == "global_batch");
    PredictionRequest t = request("llama2_70b_lora", "dgx-h100", 64);
    t.tensor_parallel = 16;       // larger than the 8-GPU NVLink domain
    CHECK(key_of(t) == "tensor_parallel");
    t.tensor_parallel = 4;
    t.context_parallel = 3;
    CHECK(key_of(t) == "context_parallel");
}

TEST_CASE("predict is deterministic and safe to call concurrently", "[training]") {
    const PredictionRequest r = request("llama2_70b_lora", "dgx-h100", 1024);
    const Prediction reference = predict(r, shipped_profiles());
    std::vector<std::future<double>> futures;
    for (int i = 0; i < 4; ++i)
        futures.push_back(std::async(std::launch::async, [&] { return predict(r, shipped_profiles()).ttt_minutes; }));
    for (auto& f : futures) CHECK(f.get() == reference.ttt_minutes);
}

// Its speed (target <= 2 s) is measured by tools/bench/bench_predict.cpp (predict_at_scale/bert_b200/16384).
TEST_CASE("a 16384-GPU prediction runs on the full-scale layout", "[training]") {
    const Prediction p = predict(request("bert", "dgx-b200", 16384), shipped_profiles());
    CHECK(p.gpus == 16384);
    CHECK(p.layout.gpus() == 16384);
    CHECK(p.ttt_minutes > 0);
    CHECK(std::isfinite(p.ttt_minutes));
}

TEST_CASE("iteration timeline is recorded only on request and matches the step", "[training]") {
    IterationPlan plan;
    plan.micro_steps = 2;
    plan.micro_step_compute_seconds = 0.3;
    plan.bucket_comm_seconds = {0.1, 0.1, 0.1, 0.1};
    plan.optimizer_seconds = 0.01;
    plan.param_all_gather_seconds = 0.02;
    plan.fixed_step_seconds = 0.005;
    plan.eval_seconds = 0.5;
    const IterationResult quiet = simulate_iteration(plan);
    CHECK(quiet.timeline.empty());
    plan.record_timeline = true;
    const IterationResult r = simulate_iteration(plan);
    CHECK(r.step_seconds == quiet.step_seconds);
    // 2 x (forward, backward) + 4 buckets + optimizer + param all-gather + fixed + eval.
    REQUIRE(r.timeline.size() == 12);
    CHECK(r.timeline[0].name == "forward mb0");
    CHECK(r.timeline[3].name == "backward mb1");
    CHECK(r.timeline[4].stream == "comm");
    CHECK(r.timeline[7].name == "allreduce bucket 3");
    // Last micro step's backward starts at 0.4; bucket 0 ready at 0.45; FIFO 0.1 each -> last ends at 0.85.
    CHECK(r.timeline[4].start.seconds() == Approx(0.45).margin(1e-9));
    CHECK((r.timeline[7].start + r.timeline[7].duration).seconds() == Approx(0.85).margin(1e-9));
    CHECK(r.timeline[8].name == "optimizer");
    CHECK(r.timeline[8].start.seconds() == Approx(0.85).margin(1e-9));
    const TimelineSpan& fixed = r.timeline[10];
    CHECK(fixed.name == "fixed step overhead");
    CHECK((fixed.start + fixed.duration).seconds() == Approx(r.step_seconds).margin(1e-9));
    CHECK(r.timeline[11].name == "eval");
}

TEST_CASE("collectives come from the simulator on the preset topology", "[training]") {
    PredictionRequest r = request("bert", "dgx-h100", 64);
    const PreparedScenario s = prepare(r);
    CHECK(s.comm_topology == "dgx-h100 x64");
    CHECK(s.collective_simulations > 0);
    CHECK_FALSE(s.bucket_comm_seconds.empty());
    // The simulation's own measurements of the bucket's collectives travel with the scenario (for traces).
    REQUIRE_FALSE(s.bucket_collectives.empty());
    for (const MeasuredCollective& m : s.bucket_collectives) {
        CHECK(m.seconds > 0);
        CHECK(m.max_link_utilisation > 0);
        CHECK(m.max_link_utilisation <= 1.0 + 1e-9);
    }
    // A system named by its GPU maps to the DGX preset; a GPU without a preset gets a generic node of its own.
    CHECK(prepare(request("bert", "H100", 16)).comm_topology == "dgx-h100 x16");
    const PreparedScenario amd = prepare(request("bert", "MI300X", 16));
    CHECK(amd.comm_topology == "MI300X node x16");
}

TEST_CASE("the shared multi-node step overhead is paid only beyond one node, once per optimizer step", "[training]") {
    const auto& all = shipped_profiles().all();
    REQUIRE(!all.empty());
    const double shared = all.begin()->second.multi_node_step_seconds;
    for (const auto& [key, p] : all) CHECK(p.multi_node_step_seconds == shared);   // one value for every profile
    for (int gpus : {8, 16}) {
        const PreparedScenario s = prepare(request("bert", "dgx-h100", gpus));
        ComputeProfile profile = shipped_profiles().find(*s.workload, *s.gpu);
        profile.multi_node_step_seconds = 0;
        const double base = evaluate(s, profile).step_ms;
        profile.multi_node_step_seconds = 0.004;
        const double with = evaluate(s, profile).step_ms;
        INFO(gpus << " GPUs");
        CHECK(with - base == Approx(gpus > 8 ? 4.0 : 0.0).margin(1e-9));
    }
}

TEST_CASE("static fabric routing makes multi-node gradient communication no faster than adaptive", "[training]") {
    // BERT on 1,024 H100s (128 DGX, 4 scalable units) with SHARP off: the gradient all-reduce runs ring/tree over
    // the rail fabric, where hashed ECMP paths collide on leaf up-links that adaptive routing loads evenly.
    PredictionRequest adaptive = request("bert", "dgx-h100", 1024);
    adaptive.sharp = false;
    adaptive.compute_efficiency_vs_8gpu = false;
    PredictionRequest hashed = adaptive;
    hashed.fabric.routing = FabricRouting::StaticEcmp;
    const PreparedScenario a = prepare(adaptive), s = prepare(hashed);
    CHECK(a.system.fabric.routing == FabricRouting::Adaptive);   // the preset default when the request leaves it open
    CHECK(s.system.fabric.routing == FabricRouting::StaticEcmp);
    REQUIRE(a.comm_topology == "dgx-h100 x1024");
    REQUIRE(a.bucket_comm_seconds.size() == s.bucket_comm_seconds.size());
    double adaptive_total = 0, static_total = 0;
    for (std::size_t i = 0; i < a.bucket_comm_seconds.size(); ++i) {
        CHECK(s.bucket_comm_seconds[i] >= a.bucket_comm_seconds[i]);
        adaptive_total += a.bucket_comm_seconds[i];
        static_total += s.bucket_comm_seconds[i];
    }
    CHECK(static_total > adaptive_total);

    const ComputeProfile profile = shipped_profiles().find(*a.workload, *a.gpu);
    const Prediction pa = evaluate(a, profile), ps = evaluate(s, profile);
    CHECK(ps.routing == FabricRouting::StaticEcmp);
    CHECK(ps.comm_total_ms > pa.comm_total_ms);
    CHECK(ps.exposed_comm_ms >= pa.exposed_comm_ms);
    CHECK(ps.ttt_minutes >= pa.ttt_minutes);

    // Asking for adaptive explicitly is the default.
    PredictionRequest explicit_adaptive = adaptive;
    explicit_adaptive.fabric.routing = FabricRouting::Adaptive;
    CHECK(prepare(explicit_adaptive).bucket_comm_seconds == a.bucket_comm_seconds);
}

TEST_CASE("a GPU without a preset system is simulated on a generic node of its own figures", "[training]") {
    // A100: 8-GPU nodes of NVLink3 (300 GB/s per direction) and one HDR NIC per GPU (gpu_catalog.cpp), on the
    // SuperPOD fabric; routing applies to that fabric like any other.
    PredictionRequest r = request("bert", "A100-SXM", 16);
    r.compute_efficiency_vs_8gpu = false;
    const PreparedScenario s = prepare(r);
    CHECK(s.comm_topology == "A100-SXM node x16");
    CHECK(s.system.preset.empty());
    CHECK(s.system.fabric.nic == NicSpeed::Hdr200);
    CHECK(std::any_of(s.warnings.begin(), s.warnings.end(),
                      [](const std::string& w) { return w.find("generic node") != std::string::npos; }));
    const Topology t = build_topology(s.system, 16);
    CHECK(t.link(t.gpu(0).nvlink_up).bandwidth_bytes_per_s == Approx(300e9));
    r.fabric.routing = FabricRouting::StaticEcmp;
    const PreparedScenario hashed = prepare(r);
    CHECK(hashed.system.fabric.routing == FabricRouting::StaticEcmp);
    for (std::size_t i = 0; i < s.bucket_comm_seconds.size(); ++i)
        CHECK(hashed.bucket_comm_seconds[i] >= s.bucket_comm_seconds[i]);
}

TEST_CASE("the printed breakdown adds up to the time to train", "[training]") {
    // steps x step + on-the-clock evaluation + per-run overhead = time to train, at one node and at many.
    for (const auto& [workload, gpus] : std::vector<std::pair<const char*, int>>{
             {"bert", 8}, {"retinanet", 512}, {"llama2_70b_lora", 64}, {"stable_diffusion", 1024}}) {
        const Prediction p = predict(test::prediction_request(workload, "dgx-h100", gpus), test::shipped_profile_set());
        INFO(workload << " on " << gpus);
        CHECK(p.steps * p.step_ms / 60000.0 + p.eval_minutes + p.run_overhead_minutes ==
              Approx(p.ttt_minutes).epsilon(1e-12));
    }
}
