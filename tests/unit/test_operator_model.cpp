// The operator-level model wired into predictions (models/training/operator_step.hpp) and its calibration
// (models/calibration/operator_fit.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "models/calibration/calibration.hpp"
#include "models/calibration/fit_loss.hpp"
#include "models/calibration/like_system.hpp"
#include "models/calibration/operator_fit.hpp"
#include "models/data_dir.hpp"
#include "models/mlperf/results.hpp"
#include "models/planning/holdout_error.hpp"
#include "prediction_helpers.hpp"
#include "sim/errors.hpp"
#include "models/compute/profile_files.hpp"
#include "models/training/iteration.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/layers/kernel_time.hpp"

using namespace ttsim;

namespace {

ProfileSet operator_profiles() { return load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level); }

PredictionRequest request(const std::string& workload, int gpus) {
    PredictionRequest r;
    r.workload = workload;
    r.system = "dgx-h100";
    r.gpus = gpus;
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

}  // namespace

TEST_CASE("operator model: every catalog workload has a layer graph and prices on the catalog GPUs", "[operator]") {
    for (const Workload& w : workload_catalog()) {
        INFO(w.name);
        REQUIRE(w.layer_model.has_value());
        // At 64 GPUs, or the smallest H100 count published above it (GPT-3's optimizer state fits 80 GB from 256).
        int gpus = 1 << 30;
        for (const PublishedParallelism& p : w.published_parallelism)
            if (p.system_family == "H100-SXM" && p.gpus >= 64) gpus = std::min(gpus, p.gpus);
        const PreparedScenario s = prepare(request(w.name, gpus));
        REQUIRE(s.operator_table);
        CHECK(s.operator_table->memory.fits);
        CHECK(!s.operator_table->layers.empty());
    }
}

TEST_CASE("operator model: gradient buckets are released in order, the last when backward ends", "[operator]") {
    const PreparedScenario s = prepare(request("bert", 64));
    const OperatorStepTimes step = price_operator_step(*s.operator_table, layers::Efficiency{});
    for (std::size_t buckets : {1u, 2u, 5u, 11u, 40u}) {
        const std::vector<double> ready = bucket_ready_fractions(step, buckets);
        REQUIRE(ready.size() == buckets);
        CHECK(ready.back() == 1.0);
        CHECK(std::is_sorted(ready.begin(), ready.end()));
        CHECK(ready.front() > 0.0);
    }
    // BERT's last layers (heads) hold few gradients: the first of many buckets needs several blocks' backward.
    CHECK(bucket_ready_fractions(step, 10).front() > 0.05);
}

TEST_CASE("operator model: the memory-bound share of a step, and what moves it", "[operator]") {
    const PreparedScenario s = prepare(request("bert", 8));
    const OperatorTable& table = *s.operator_table;
    layers::Efficiency e;
    e.gemm = e.conv = e.attention = 1.0;
    e.memory = 0.3;
    const double slow_memory = memory_bound_share(table, e);
    e.memory = 1.0;
    const double fast_memory = memory_bound_share(table, e);
    CHECK(slow_memory >= 0.0);
    CHECK(slow_memory <= 1.0);
    CHECK(fast_memory < slow_memory);   // faster memory turns kernels compute-bound
    e.gemm = e.conv = e.attention = 0.05;
    CHECK(memory_bound_share(table, e) < fast_memory);   // and so does slower compute
    CHECK(memory_bound_share(table, e, 0.5) == Approx(memory_bound_share(table, e)).epsilon(1e-12));   // a speed scales both roofs
}

TEST_CASE("operator model: kernel times respect the roofline and move the right way", "[operator]") {
    const PreparedScenario s = prepare(request("stable_diffusion", 8));
    const OperatorTable& table = *s.operator_table;
    layers::Efficiency perfect;
    perfect.gemm = perfect.conv = perfect.attention = perfect.memory = 1.0;
    perfect.launch_seconds = perfect.graph_launch_seconds = 0;
    const OperatorStepTimes best = price_operator_step(table, perfect);
    // No step beats its roofline: each kernel is at least its compute and its memory time at full efficiency.
    double compute = 0;
    for (const LayerPrices& layer : table.layers)
        for (const auto* pass : {&layer.forward, &layer.backward})
            for (const KernelPrice& k : *pass) compute += std::max(k.compute_seconds, k.memory_seconds);
    CHECK(best.forward_seconds + best.backward_seconds == Approx(compute).epsilon(1e-9));

    layers::Efficiency slower = perfect;
    slower.gemm = 0.5;
    slower.memory = 0.5;
    const OperatorStepTimes worse = price_operator_step(table, slower);
    CHECK(worse.forward_seconds + worse.backward_seconds > best.forward_seconds + best.backward_seconds);
    layers::Efficiency overhead = perfect;
    overhead.kernel_overhead_seconds = 3e-6;
    const OperatorStepTimes with_overhead = price_operator_step(table, overhead);
    CHECK(with_overhead.backward_seconds > best.backward_seconds);
    // A faster family or stack (speed > 1) is faster where its kernels are below their roofs, and never passes
    // them: at efficiency 1 everywhere nothing is left to gain.
    CHECK(price_operator_step(table, slower, 1.5).backward_seconds < worse.backward_seconds);
    CHECK(price_operator_step(table, slower, 1.0, 0.0, 1.5).backward_seconds < worse.backward_seconds);
    CHECK(price_operator_step(table, slower, 4.0).backward_seconds >= best.backward_seconds * (1 - 1e-12));
    CHECK(price_operator_step(table, perfect, 2.0).backward_seconds == Approx(best.backward_seconds).epsilon(1e-12));
    CHECK(price_operator_step(table, perfect, 1.0, 0.0, 2.0).backward_seconds == Approx(best.backward_seconds).epsilon(1e-12));
    CHECK(price_operator_step(table, perfect, 2.0).optimizer_seconds >= best.optimizer_seconds * (1 - 1e-12));
}

TEST_CASE("operator model: shared layer sums price a step as kernel by kernel, offsets that reach the roof included",
          "[operator]") {
    const PreparedScenario s = prepare(request("stable_diffusion", 8));
    const OperatorTable& table = *s.operator_table;
    layers::Efficiency e;
    e.gemm = 0.9;
    e.conv = 1.0;   // at its roof: any offset above 1 reaches it
    e.memory = 0.6;
    for (const double speed : {0.8, 1.0, 1.2}) {
        const LayerKernelSums sums = layer_kernel_sums(table.layers, e, speed);
        for (const double stack : {0.5, 1.0, 1.05, 2.0}) {
            INFO("speed " << speed << ", stack " << stack);
            const OperatorStepTimes a = price_operator_step(table, e, speed, 0.0, stack);
            const OperatorStepTimes b = price_operator_step(table, e, speed, 0.0, stack, &sums);
            CHECK(a.forward_seconds == b.forward_seconds);   // to the bit
            CHECK(a.backward_seconds == b.backward_seconds);
        }
    }
}

TEST_CASE("operator model: eager launches make a small-batch step launch-bound", "[operator]") {
    PredictionRequest r = request("bert", 64);
    const PreparedScenario s = prepare(r);
    OperatorTable eager = *s.operator_table;
    eager.cuda_graphs = layers::CudaGraphs::none;
    layers::Efficiency e;
    e.launch_seconds = 1e-3;   // an absurdly slow host: every pass is bound by its launches
    const OperatorStepTimes step = price_operator_step(eager, e);
    CHECK(step.launch_bound);
    CHECK(step.backward_seconds > step.backward_gpu_seconds);
    OperatorTable graphed = eager;
    graphed.cuda_graphs = layers::CudaGraphs::full_iteration;
    CHECK(!price_operator_step(graphed, e).launch_bound);
}

TEST_CASE("operator model: shipped operator profiles give operator predictions with memory", "[operator]") {
    const ProfileSet profiles = operator_profiles();
    for (const char* w : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"}) {
        INFO(w);
        const Prediction p = predict(request(w, 64), profiles);
        CHECK(p.compute_model == "operator");
        CHECK(p.memory_fits);
        CHECK(p.memory_per_gpu_bytes > 0);
        CHECK(p.memory_per_gpu_bytes <= p.memory_capacity_bytes);
        CHECK(p.step_ms > 0);
        CHECK(p.ttt_minutes > 0);
    }
    // The lumped profiles stay lumped.
    const Prediction lumped = predict(request("bert", 64), load_profiles(ProfileSet::default_dir(), ComputeModel::lumped));
    CHECK(lumped.compute_model == "lumped");
}

TEST_CASE("operator model: a profile file of the other model is refused", "[operator]") {
    CHECK_THROWS_AS(ProfileSet::load_dir(ProfileSet::default_dir()).all().begin()->second.operator_efficiency.value(),
                    std::bad_optional_access);
    const ProfileSet op = operator_profiles();
    for (const auto& [key, profile] : op.all()) CHECK(profile.operator_efficiency.has_value());
}

// Regression guards at today's figures of the operator model (`build/ttsim validate --compare`):
// in-sample 4.32 % with the shipped operator profiles, hold-out 13.79 % (fit on <= 64 GPUs with the operator
// defaults, which now also fit the logged step and evaluation times, predicting the 8 results with >= 128 GPUs).
// Guards 0.15 / 0.4 points above; tighten them as the model improves. The targets (in-sample <= 3.5 %,
// hold-out <= 10 %) are not reached (README). The GPU family's speed offset does not scale the per-kernel
// overhead (scaling it made H200 slower than H100 at small per-GPU batches).
TEST_CASE("operator model: an evaluation is never faster than its FLOPs at the job's peak", "[operator]") {
    const ProfileSet profiles = operator_profiles();
    for (const char* w : {"bert", "llama2_70b_lora", "retinanet"}) {
        for (int gpus : {8, 64, 512}) {
            INFO(w << " at " << gpus << " GPUs");
            const PreparedScenario s = prepare(request(w, gpus));
            const double bound = static_cast<double>(s.workload->eval_samples) * s.workload->forward_flops_per_sample /
                                 (gpus * peak_flops(*s.gpu, s.layout.fp8));
            ComputeProfile profile = profiles.find(*s.workload, *s.gpu);
            for (bool passes : {false, true}) {   // as training forwards, and as the framework's evaluation passes
                profile.operator_eval_passes = passes;
                CHECK(make_iteration_plan(s, profile).eval_seconds >= bound);
            }
        }
    }
}

// The evaluation as the submissions run it (workload_catalog.yaml `evaluation`, models/data/mlperf/
// eval_implementations.md): BERT evaluates eager batches of 16 unpacked, padded sequences, 79 of them on each of 8
// GPUs (10,000 samples); at 3,472 GPUs each rank's whole share, 3 sequences, in one graphed pass.
TEST_CASE("operator model: an evaluation runs the framework's evaluation passes, not training micro steps", "[operator]") {
    const layers::Efficiency e = *operator_profiles().find(find_workload("bert"), find_gpu("h100")).operator_efficiency;
    {
        const PreparedScenario s = prepare(request("bert", 8));
        REQUIRE(s.eval_table);
        CHECK(s.eval_samples_per_rank == 1250);
        CHECK(s.eval_table->samples_per_pass == 16);
        CHECK(s.eval_table->rows_per_pass == 16);   // one padded sequence a row, where training packs two
        CHECK(s.operator_table->graph_micro_batch == 48);
        CHECK(s.eval_table->cuda_graphs == layers::CudaGraphs::none);
        // 78 whole passes and a last one of 2 sequences (1,250 = 78 x 16 + 2), not padded.
        const double pass = eval_pass_seconds(*s.eval_table, e);
        const double last = eval_pass_seconds(*s.eval_table, e, 1.0, 2.0 / 16);
        CHECK(last < pass);
        CHECK(operator_eval_seconds(*s.eval_table, e, 1.0, s.eval_samples_per_rank, 1.0, 0.0, 48) ==
              Approx(78 * pass + last));
    }
    {
        const PreparedScenario s = prepare(request("bert", 3472));
        REQUIRE(s.eval_table);
        CHECK(s.eval_samples_per_rank == 3);
        CHECK(s.eval_table->samples_per_pass == 3);
        CHECK(s.eval_table->rows_per_pass == 3);
        CHECK(s.eval_table->cuda_graphs == layers::CudaGraphs::full_iteration);
    }
    {
        // 64 GPUs unpad their evaluation too: 16 sequences cost 8 rows of real tokens.
        const PreparedScenario s = prepare(request("bert", 64));
        CHECK(s.eval_table->rows_per_pass == 8);
    }
    {
        // RetinaNet at 2,528 GPUs: batches of 8, 10 images a rank: a whole pass of 8 x 130 host operations and a
        // partial one of 2 images (DALI keeps the last batch partial).
        const PreparedScenario s = prepare(request("retinanet", 2528));
        REQUIRE(s.eval_table);
        CHECK(s.eval_samples_per_rank == 10);
        CHECK(s.eval_table->samples_per_pass == 8);
        CHECK(s.eval_table->host_kernels_per_pass == 8 * 130);
        CHECK(!s.eval_table->pad_last_batch);
    }
    {
        // LoRA pads its last validation batch: a 173-sample set on 128 ranks is 2 whole forwards each.
        const PreparedScenario s = prepare(request("llama2_70b_lora", 1024));
        REQUIRE(s.eval_table);
        CHECK(s.eval_table->pad_last_batch);
        CHECK(s.eval_samples_per_rank == 2);
        const layers::Efficiency lora = *operator_profiles().find(*s.workload, *s.gpu).operator_efficiency;
        CHECK(operator_eval_seconds(*s.eval_table, lora, 1.0, 1.5, 1.0, 0.0, 1) ==
              Approx(2 * eval_pass_seconds(*s.eval_table, lora)));
    }
    // Stable Diffusion evaluates offline: no evaluation table.
    CHECK(!prepare(request("stable_diffusion", 8)).eval_table);
    // A profile with operator_eval_passes prices the evaluation from the table; one without, as training forwards.
    const PreparedScenario s = prepare(request("bert", 8));
    ComputeProfile profile = operator_profiles().find(*s.workload, *s.gpu);
    profile.operator_eval_passes = true;
    const double passes = operator_eval_seconds(*s.eval_table, *profile.operator_efficiency, profile.operator_speed,
                                                s.eval_samples_per_rank, profile.tp_comm_exposed_fraction,
                                                s.tp_cp_comm_seconds_per_micro_step, s.operator_table->graph_micro_batch,
                                                profile.operator_stack_speed, profile.eval_host_kernels_per_sample);
    CHECK(make_iteration_plan(s, profile).eval_seconds ==
          Approx(profile.eval_forward_factor * passes + profile.eval_fixed_seconds));
    profile.operator_eval_passes = false;
    CHECK(make_iteration_plan(s, profile).eval_seconds !=
          Approx(profile.eval_forward_factor * passes + profile.eval_fixed_seconds));
    // The option survives a profile file.
    ProfileSet set;
    ComputeProfile written = profile;
    written.operator_eval_passes = true;
    set.add(written);
    const auto file = std::filesystem::temp_directory_path() / "ttsim_eval_passes_profiles.yaml";
    set.save_file(file);
    CHECK(ProfileSet::load_file(file).find(*s.workload, *s.gpu).operator_eval_passes);
    std::filesystem::remove(file);
}

// The iterations of each framework's evaluation loop (EvalPasses::step), what eval-step-cost charges per evaluation.
// NeMo steps LoRA's validation by the training global batch, padded: 173 samples are ceil(173 / 8) = 22 steps at
// 8 and 64 GPUs (GBS 8: 4 forwards a rank on DP 2, 1 on DP 8) and ceil(173 / 128) = 2 at 1,024 (GBS 128). BERT and
// RetinaNet step per pass: 1,250 sequences a rank in batches of 16 are 79 steps; the 3,472-GPU shard is one; 10
// images a rank in batches of 8 are 2.
TEST_CASE("operator model: an evaluation's loop steps, and their fixed cost in the evaluation", "[operator]") {
    CHECK(prepare(request("llama2_70b_lora", 8)).eval_steps == 22);
    CHECK(prepare(request("llama2_70b_lora", 64)).eval_steps == 22);
    CHECK(prepare(request("llama2_70b_lora", 1024)).eval_steps == 2);
    CHECK(prepare(request("bert", 8)).eval_steps == 79);
    CHECK(prepare(request("bert", 3472)).eval_steps == 1);
    CHECK(prepare(request("retinanet", 2528)).eval_steps == 2);
    CHECK(prepare(request("stable_diffusion", 8)).eval_steps == 0);   // evaluated offline
    const PreparedScenario s = prepare(request("llama2_70b_lora", 64));
    ComputeProfile profile = operator_profiles().find(*s.workload, *s.gpu);
    profile.eval_step_seconds = 0;
    const double without = make_iteration_plan(s, profile).eval_seconds;
    profile.eval_step_seconds = 0.25;
    CHECK(make_iteration_plan(s, profile).eval_seconds == Approx(without + 22 * 0.25));
    // The value survives a profile file.
    ProfileSet set;
    set.add(profile);
    const auto file = std::filesystem::temp_directory_path() / "ttsim_eval_step_profiles.yaml";
    set.save_file(file);
    CHECK(ProfileSet::load_file(file).find(*s.workload, *s.gpu).eval_step_seconds == 0.25);
    std::filesystem::remove(file);
}

// The memory line counts the layout's samples, saying how many packed rows hold them (BERT packs 2 sequences a row:
// the 3,472-GPU layout's micro batch of 4 is 2 rows of the graph).
TEST_CASE("operator model: the memory line says the layout's micro batch, and the rows that hold it", "[operator]") {
    const PreparedScenario packed = prepare(request("bert", 3472));
    CHECK(packed.operator_table->graph_micro_batch == 2);
    CHECK_THAT(packed.operator_table->memory.summary, Catch::Contains("micro batch 4 in 2 packed rows"));
    CHECK_THAT(prepare(request("retinanet", 64)).operator_table->memory.summary, Catch::Contains("micro batch 4,"));
}

// Worked example: the eager BERT evaluation pass is bound by its host launches once each costs 1 ms (about 200
// kernels: 0.2 s against a few ms of GPU work), while the same pass replayed as one graph is bound by its kernels.
TEST_CASE("operator model: an eager evaluation pass is host-bound where its graphed twin is not", "[operator]") {
    const PreparedScenario s = prepare(request("bert", 8));
    layers::Efficiency e = *operator_profiles().find(*s.workload, *s.gpu).operator_efficiency;
    e.launch_seconds = 1e-3;
    e.graph_launch_seconds = 1e-5;
    e.eval_launch_seconds = 0;   // the training launch cost prices the loop (a fitted eval launch cost is tried below)
    EvalTable eager = *s.eval_table;
    EvalTable graphed = eager;
    graphed.cuda_graphs = layers::CudaGraphs::full_iteration;
    std::size_t kernels = 0;
    for (const LayerPrices& layer : eager.layers) kernels += layer.forward.size();
    CHECK(eval_pass_seconds(eager, e) == Approx(kernels * 1e-3));
    CHECK(eval_pass_seconds(graphed, e) < eval_pass_seconds(eager, e) / 10);
    CHECK(eval_pass_seconds(graphed, e) > 1e-5);   // its kernels, not the graph launch
    // Host operations outside the graph (post-processing) add to the host side only.
    EvalTable post = graphed;
    post.host_kernels_per_pass = 1000;
    CHECK(eval_pass_seconds(post, e) == Approx(1.0 + 1e-5));
    // The fitted host operations add to the catalog's, and an eval launch cost fitted apart prices the eager
    // loop's host work instead of the training launch.
    CHECK(eval_pass_seconds(post, e, 1.0, 1.0, 1.0, 500) == Approx(1.5 + 1e-5));
    layers::Efficiency eval_launch = e;
    eval_launch.eval_launch_seconds = 2e-3;
    CHECK(eval_pass_seconds(post, eval_launch) == Approx(2.0 + 1e-5));
    CHECK(eval_pass_seconds(eager, eval_launch) == Approx(kernels * 2e-3));
}

// Worked example (fitted eval host operations): host operations per sample bind only where they outlast the pass's GPU work; a
// GPU-bound pass is unchanged by a few, a host-bound one grows with them.
TEST_CASE("operator model: fitted eval host operations bind only past the pass's GPU time", "[operator]") {
    const PreparedScenario s = prepare(request("llama2_70b_lora", 64));
    REQUIRE(s.eval_table);
    const layers::Efficiency e = *operator_profiles().find(*s.workload, *s.gpu).operator_efficiency;
    const double base = operator_eval_seconds(*s.eval_table, e, 1.0, s.eval_samples_per_rank, 1.0, 0.0, 1);
    CHECK(operator_eval_seconds(*s.eval_table, e, 1.0, s.eval_samples_per_rank, 1.0, 0.0, 1, 1.0, 1.0) ==
          Approx(base));
    const double host_bound = operator_eval_seconds(*s.eval_table, e, 1.0, s.eval_samples_per_rank, 1.0, 0.0, 1, 1.0, 1e6);
    CHECK(host_bound > base);
    CHECK(host_bound >= s.eval_samples_per_rank * 1e6 * e.launch_seconds * (1 - 1e-9));
}

TEST_CASE("operator model: an H200 is never slower than an H100", "[operator][physics]") {
    // Every workload, LoRA's TP x CP layouts included, at the H100's whole layout (its software facts too: CUDA
    // graphs, FP8, sequence parallelism) on the H200: the H200 is the H100 die with more, faster HBM, so no step
    // or time to train of it may be slower, whatever its fitted speed (operator_step.cpp reference_floor).
    const ProfileSet profiles = operator_profiles();
    const System h200_system = resolve_system("dgx-h200");
    for (const char* workload : {"bert", "llama2_70b_lora", "retinanet", "stable_diffusion"})
        for (int gpus : {8, 64, 512, 2048}) {
            INFO(workload << " on " << gpus << " GPUs");
            const Prediction h100 = predict(test::prediction_request(workload, "dgx-h100", gpus), profiles);
            const Workload& w = find_workload(workload);
            const PreparedScenario on_h200 = prepare_with_layout(w, h200_system, gpus, h100.layout);
            const Prediction h200 = evaluate(on_h200, profiles.find(w, *h200_system.catalog_gpu));
            CHECK(h200.step_ms <= h100.step_ms);
            CHECK(h200.ttt_minutes <= h100.ttt_minutes);
        }
}

// The fixed host cost beside a graph (ComputeProfile::operator_graph_host_overlap): a step replayed as one CUDA graph never waits on the host, so the
// host's fixed per-step work runs beside it and costs only what the GPU's step does not cover; an eager step
// synchronises with the host and pays all of it. Worked on BERT at 64 GPUs (eager on 8 nodes, catalog) and the
// same step with its table switched to a whole-iteration graph.
TEST_CASE("operator model: a whole-iteration graph hides the fixed host cost behind its step, an eager step adds it",
          "[operator][physics]") {
    const PreparedScenario eager = prepare(request("bert", 64));
    REQUIRE(eager.operator_table->cuda_graphs == layers::CudaGraphs::none);
    PreparedScenario graphed = eager;
    auto table = std::make_shared<OperatorTable>(*eager.operator_table);
    table->cuda_graphs = layers::CudaGraphs::full_iteration;
    graphed.operator_table = table;
    ComputeProfile profile = operator_profiles().find(*eager.workload, *eager.gpu);
    profile.operator_graph_host_overlap = true;
    auto run = [&](const PreparedScenario& s, double fixed) {
        profile.fixed_step_seconds = fixed;
        return simulate_iteration(make_iteration_plan(s, profile));
    };
    const IterationResult bare = run(graphed, 0.0);
    const double gpu_step = bare.compute_seconds + bare.exposed_comm_seconds;
    REQUIRE(gpu_step > 0);
    // Half the GPU's step of host work: hidden to the picosecond.
    CHECK(run(graphed, 0.5 * gpu_step).step_seconds == Approx(bare.step_seconds).epsilon(1e-9));
    // Twice: the step waits for the host, max(GPU step, host work), plus the parts that never overlap.
    const IterationResult slow_host = run(graphed, 2.0 * gpu_step);
    CHECK(slow_host.step_seconds == Approx(bare.step_seconds + gpu_step).epsilon(1e-9));
    CHECK(slow_host.step_seconds >= 2.0 * gpu_step);
    // The eager step adds the whole cost, with or without the option.
    const double eager_bare = run(eager, 0.0).step_seconds;
    CHECK(run(eager, 0.5 * gpu_step).step_seconds == Approx(eager_bare + 0.5 * gpu_step).epsilon(1e-9));
    // Without the option the graphed step adds it too.
    profile.operator_graph_host_overlap = false;
    CHECK(run(graphed, 0.5 * gpu_step).step_seconds == Approx(bare.step_seconds + 0.5 * gpu_step).epsilon(1e-9));
    // The trace shows the host's work on its own row and the wait on the compute row, ending with the step.
    profile.operator_graph_host_overlap = true;
    profile.fixed_step_seconds = 2.0 * gpu_step;
    IterationPlan plan = make_iteration_plan(graphed, profile);
    plan.record_timeline = true;
    const IterationResult traced = simulate_iteration(plan);
    CHECK(traced.step_seconds == slow_host.step_seconds);
    bool host_row = false, wait = false;
    for (const TimelineSpan& span : traced.timeline) {
        if (span.stream == "host") host_row = span.duration.seconds() == Approx(2.0 * gpu_step).epsilon(1e-9);
        if (span.name == "wait for host") wait = true;
    }
    CHECK(host_row);
    CHECK(wait);
}

// The calibration's objective sums each distinct table once per evaluation and prices every result on it with its own
// stack offset (operator_fit.cpp): that must be the clock run_clock gives without the sums, to the bit, as the fit
// is sensitive to the last bits of its loss.
TEST_CASE("operator model: a run clock priced from shared kernel sums is the same to the bit", "[operator]") {
    for (const auto& [workload, gpus] : std::vector<std::pair<std::string, int>>{
             {"llama2_70b_lora", 64}, {"bert", 8}, {"retinanet", 64}, {"stable_diffusion", 8}}) {
        INFO(workload << " on " << gpus);
        const PreparedScenario s = prepare(request(workload, gpus));
        const PreparedScenario twin = prepare(request(workload, gpus));   // its own tables, priced alike
        REQUIRE(s.operator_table != twin.operator_table);
        CHECK(same_kernel_prices(s, twin));
        for (const bool eval_passes : {false, true}) {
            ComputeProfile profile = operator_profiles().find(*s.workload, *s.gpu);
            profile.operator_eval_passes = eval_passes;
            const ScenarioKernelSums sums = kernel_sums(s, profile);
            profile.operator_stack_speed = 1.07;   // a stack's offset divides after the sums
            const RunClock plain = run_clock(twin, profile), shared = run_clock(twin, profile, &sums);
            CHECK(shared.step_seconds == plain.step_seconds);
            CHECK(shared.eval_seconds == plain.eval_seconds);
        }
    }
    // Another per-GPU batch prices other kernels.
    CHECK(!same_kernel_prices(prepare(request("bert", 8)), prepare(request("bert", 64))));
}
