// The operator-level model wired into predictions (models/training/operator_step.hpp) and its calibration
// (models/calibration/operator_fit.hpp).
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
#include "prediction_helpers.hpp"
#include "sim/errors.hpp"
#include "models/compute/profile_files.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/predict.hpp"
#include "models/workloads/layers/kernel_time.hpp"

using namespace ttsim;

namespace {

ProfileSet operator_profiles() { return load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level); }

const std::vector<CalibrationPoint>& points() {
    static const std::vector<CalibrationPoint> all = load_calibration_points({});
    return all;
}

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
        const PreparedScenario s = prepare(request(w.name, 64));
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
    // A faster software stack (speed > 1) is faster.
    CHECK(price_operator_step(table, perfect, 2.0).backward_seconds == Approx(best.backward_seconds / 2));
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

// Regression guards at today's figures of the operator model (`build/ttsim validate --compare`, session 7):
// in-sample 4.32 % with the shipped operator profiles, hold-out 13.79 % (fit on <= 64 GPUs with the operator
// defaults, which now also fit the logged step and evaluation times, predicting the 8 results with >= 128 GPUs).
// Guards 0.15 / 0.4 points above; tighten them as the model improves. The targets (in-sample <= 3.5 %,
// hold-out <= 10 %) are not reached (README). Session 10 moved the hold-out guard from 14.2 to 14.6 % with one
// deliberate change: the GPU family's speed offset no longer scales the per-kernel overhead (H200 had come out
// slower than H100 at small per-GPU batches); forward CV 5.90 against 5.91, the hold-out step time 13.72 against
// 14.25 %, the hold-out time-to-train 14.23 against 13.80 % (README).
TEST_CASE("operator model: in-sample MAPE stays at or below 4.47%", "[operator][calibration]") {
    const ProfileSet profiles = operator_profiles();
    std::vector<PointError> errors;
    for (const CalibrationPoint& p : points()) errors.push_back(evaluate_point(p, profiles));
    INFO(format_point_table(errors));
    CHECK(mean_absolute_percentage_error(errors) <= 4.47);
}

TEST_CASE("operator model: hold-out MAPE stays at or below 14.6%", "[operator][calibration]") {
    const HoldoutReport report = holdout_validation(points(), 64, 128, SharedFit::operator_defaults());
    for (const auto& fitted : report.fit.fitted) CHECK(fitted.gpus <= 64);
    REQUIRE(report.predicted.size() == 8);
    INFO(format_point_table(report.predicted) << "hold-out MAPE " << report.mape_percent << "%");
    CHECK(report.mape_percent <= 14.6);
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
    // A profile fitted with eval-passes prices the evaluation from the table; one without, as training forwards.
    const PreparedScenario s = prepare(request("bert", 8));
    ComputeProfile profile = operator_profiles().find(*s.workload, *s.gpu);
    profile.operator_eval_passes = true;
    const double passes = operator_eval_seconds(*s.eval_table, *profile.operator_efficiency, profile.operator_speed,
                                                s.eval_samples_per_rank, profile.tp_comm_exposed_fraction,
                                                s.tp_cp_comm_seconds_per_micro_step, s.operator_table->graph_micro_batch);
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
}

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
    CHECK_THROWS_AS(SharedFit::parse("step-logs,eval-cost"), InputError);   // eval-cost needs the operator model
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
    CHECK_THROWS_AS(SharedFit::parse("eval-step-cost"), InputError);                    // needs operator
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
// layout, at any scale, may come out slower on it. (Before session 10 the H200's fitted speed offset, 0.83, also
// stretched the per-kernel overheads, and Stable Diffusion and RetinaNet came out 2-5 % slower on H200 from 512
// GPUs up.) The data-parallel workloads, at the H100's batch; LoRA's published layouts differ by GPU.
TEST_CASE("operator model: an H200 is never slower than an H100", "[operator][physics]") {
    const ProfileSet profiles = operator_profiles();
    for (const char* workload : {"bert", "retinanet", "stable_diffusion"})
        for (int gpus : {8, 512, 2048}) {
            INFO(workload << " on " << gpus << " GPUs");
            const Prediction h100 = predict(test::prediction_request(workload, "dgx-h100", gpus), profiles);
            PredictionRequest on_h200 = test::prediction_request(workload, "dgx-h200", gpus);
            on_h200.global_batch = h100.layout.global_batch;
            const Prediction h200 = predict(on_h200, profiles);
            REQUIRE(h200.layout.samples_per_micro_batch == h100.layout.samples_per_micro_batch);
            CHECK(h200.step_ms <= h100.step_ms);
        }
}
