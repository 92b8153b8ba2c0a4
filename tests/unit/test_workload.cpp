// Workloads: parameter counts and FLOPs from params.md §4.1, evaluation cadence checked against the v4.1 logs,
// published parallelism and the derived defaults.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "models/data_dir.hpp"
#include "models/mlperf/results.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

// The shipped v4.1_runs.csv as header-keyed rows.
std::vector<std::map<std::string, std::string>> load_runs_csv() {
    std::ifstream in(data_file("mlperf/v4.1_runs.csv"));
    std::ostringstream text;
    text << in.rdbuf();
    const auto records = parse_csv(text.str(), "v4.1_runs.csv");
    std::vector<std::map<std::string, std::string>> rows;
    for (std::size_t r = 1; r < records.size(); ++r) {
        std::map<std::string, std::string> row;
        for (std::size_t c = 0; c < records[0].size(); ++c) row[records[0][c]] = records[r].at(c);
        rows.push_back(row);
    }
    return rows;
}

}  // namespace

TEST_CASE("workload parameters and FLOPs match params.md", "[workload]") {
    const Workload& bert = find_workload("bert");
    CHECK(bert.trainable_params == 336'226'108);
    CHECK(bert.gradient_bytes == 672'452'216);
    CHECK(bert.gradient_dtype == "fp16");
    CHECK(bert.train_flops_per_sample == Approx(0.4906e12).epsilon(1e-3));
    CHECK(bert.convergence_unit == ConvergenceUnit::samples);
    CHECK(bert.runs_per_result == 10);
    CHECK(bert.eval_on_the_clock);

    const Workload& lora = find_workload("llama2_70b_lora");
    CHECK(lora.trainable_params == 44'564'480);
    CHECK(lora.trainable_params == 80ULL * 16 * ((8192 + 10240) + (8192 + 8192)));
    CHECK(lora.gradient_bytes == 178'257'920);   // fp32: NeMo's grad_reduce_in_fp32
    CHECK(lora.gradient_dtype == "fp32");
    CHECK(lora.gradient_dtype_confirmed);
    CHECK(lora.train_flops_per_sample == Approx(2562e12).epsilon(1e-3));
    CHECK(lora.total_params == 68'976'648'192ULL + 44'564'480ULL);
    CHECK(*lora.train_samples == 3'901);
    CHECK(lora.eval_samples == 173);

    const Workload& retinanet = find_workload("retinanet");
    CHECK(retinanet.mlperf_benchmark == "ssd");
    CHECK(retinanet.trainable_params == 36'849'004);
    CHECK(retinanet.total_params == 37'060'652);
    CHECK(retinanet.train_flops_per_sample == Approx(1169e9).epsilon(1e-3));
    CHECK(retinanet.convergence_unit == ConvergenceUnit::epochs);
    CHECK(*retinanet.train_samples == 1'170'301);
    CHECK(retinanet.runs_per_result == 5);

    const Workload& sd = find_workload("stable_diffusion");
    CHECK(sd.trainable_params == 865'910'724);
    CHECK(sd.gradient_bytes == 2 * sd.trainable_params);
    CHECK(sd.train_flops_per_sample == Approx(2413e9).epsilon(1e-3));
    CHECK(sd.train_flops_per_sample == Approx(3 * sd.forward_flops_per_sample));
    CHECK_FALSE(sd.eval_on_the_clock);

    for (const Workload& w : workload_catalog()) {
        INFO(w.name);
        CHECK(w.gradient_bytes == w.gradient_element_bytes() * w.trainable_params);
        CHECK_FALSE(w.published_parallelism.empty());
        for (const PublishedParallelism& p : w.published_parallelism) {
            CHECK(p.config.gpus() == p.gpus);
            CHECK(p.config.global_batch ==
                  p.config.data_parallel * p.config.samples_per_micro_batch * p.config.gradient_accumulation);
        }
    }
}

TEST_CASE("workload lookup accepts MLPerf ids and aliases", "[workload]") {
    CHECK(find_workload("ssd").name == "retinanet");
    CHECK(find_workload("RetinaNet").name == "retinanet");
    CHECK(find_workload("sd").name == "stable_diffusion");
    CHECK(find_workload("stable-diffusion").name == "stable_diffusion");
    CHECK(find_workload("lora").name == "llama2_70b_lora");
    CHECK(find_workload("LLAMA2-70B-LORA").name == "llama2_70b_lora");
    try {
        find_workload("resnet");
        FAIL("expected InputError");
    } catch (const InputError& e) {
        const std::string message = e.what();
        for (const std::string& name : workload_names()) CHECK(message.find(name) != std::string::npos);
    }
}

TEST_CASE("BERT evaluation interval formula matches the logged v4.1 intervals", "[workload]") {
    // FLOOR(0.05 * (230.23 * 768 + 3e6), 25000) = FLOOR(158,840.8, 25000) = 150,000 samples.
    CHECK(bert_eval_interval_samples(768) == 150'000);
    CHECK(bert_eval_interval_samples(13'888) == 300'000);
    const EvalSchedule s = eval_schedule(find_workload("bert"), 768);
    CHECK(s.interval_samples == 150'000);
    CHECK(s.first_eval_samples == 150'000);
    CHECK(s.on_the_clock);

    // The CSV's eval_interval is the mean spacing of the logged evaluations. Evaluations fall on step boundaries,
    // so each logged spacing is within one global batch of the rule (e.g. ESC_N8_E11: 149,813.75 vs 150,000).
    int checked = 0;
    for (const MlperfResult& r : load_mlperf_results()) {
        if (r.benchmark != "bert" || !r.global_batch_size || !r.eval_interval) continue;
        if (*r.global_batch_size != 768 && *r.global_batch_size != 13'888) continue;
        INFO(r.submitter << "/" << r.system);
        CHECK(std::abs(*r.eval_interval - static_cast<double>(bert_eval_interval_samples(*r.global_batch_size))) <
              *r.global_batch_size);
        ++checked;
    }
    CHECK(checked >= 15);
}

TEST_CASE("LoRA evaluation skips FLOOR(0.125 GBS + 2) evaluations, as in the v4.1 run logs", "[workload]") {
    const Workload& lora = find_workload("lora");
    CHECK(eval_schedule(lora, 8).first_eval_samples == 4 * 384);      // skip 3
    CHECK(eval_schedule(lora, 64).first_eval_samples == 11 * 384);    // skip 10
    CHECK(eval_schedule(lora, 128).first_eval_samples == 19 * 384);   // skip 18
    CHECK(eval_schedule(lora, 8).interval_samples == 384);

    // Every converged run: convergence point = first evaluation + (evaluations - 1) x 384. Oracle's 512-GPU
    // (GBS 64) logs are the exception: they log evaluations from 1,920 samples on.
    int matched = 0;
    std::set<std::string> mismatched_systems;
    for (const auto& run : load_runs_csv()) {
        if (run.at("benchmark") != "llama2_70b_lora" || run.at("converged") != "True") continue;
        const EvalSchedule s = eval_schedule(lora, std::stoi(run.at("global_batch_size")));
        const double predicted = static_cast<double>(s.first_eval_samples) +
                                 (std::stod(run.at("n_evals")) - 1) * static_cast<double>(s.interval_samples);
        if (std::abs(predicted - std::stod(run.at("conv_point"))) < 0.5)
            ++matched;
        else
            mismatched_systems.insert(run.at("submitter") + "/" + run.at("system"));
    }
    CHECK(matched > 250);
    CHECK(mismatched_systems == std::set<std::string>{"Oracle/512xBM.GPU.H100.8"});
}

TEST_CASE("RetinaNet evaluates every epoch, Stable Diffusion offline every 512,000 images", "[workload]") {
    const EvalSchedule retinanet = eval_schedule(find_workload("ssd"), 256);
    CHECK(retinanet.interval_samples == 1'170'301);
    CHECK(retinanet.on_the_clock);
    const EvalSchedule sd = eval_schedule(find_workload("sd"), 2048);
    CHECK(sd.interval_samples == 512'000);
    CHECK(sd.first_eval_samples == 512'000);
    CHECK_FALSE(sd.on_the_clock);
    CHECK_THROWS_AS(eval_schedule(find_workload("bert"), 0), InputError);
}

TEST_CASE("default parallelism reproduces NVIDIA's v4.1 layouts and scales from the nearest one", "[workload]") {
    const Workload& bert = find_workload("bert");
    const ParallelismChoice bert_max = default_parallelism(bert, "h100", 3472);
    CHECK(bert_max.exact_match);
    CHECK(bert_max.config.global_batch == 13'888);
    CHECK(bert_max.config.sharp);
    CHECK(bert_max.config.packing_factor == 2);
    CHECK(default_parallelism(bert, "H200-SXM", 8).config.global_batch == 768);

    // 16 GPUs: the layout comes from the nearest published scale (8); the batch is interpolated log-linearly
    // between v4.1's 768 at 8 and 4608 at 64 GPUs (768 x 6^(1/3) = 1396), rounded to the nearest multiple of 16
    // ranks (1392, not 1408).
    const ParallelismChoice bert16 = default_parallelism(bert, "H100-SXM", 16);
    CHECK_FALSE(bert16.exact_match);
    CHECK(bert16.basis.gpus == 8);
    CHECK(bert16.batch_target == 1396);
    CHECK(bert16.config.global_batch == 1392);
    CHECK(bert16.config.samples_per_micro_batch == 87);   // below the largest published micro batch, no accumulation
    CHECK(bert16.config.gradient_accumulation == 1);
    CHECK(bert16.config.sharp);   // two nodes

    const Workload& lora = find_workload("lora");
    const ParallelismChoice lora8 = default_parallelism(lora, "H100-SXM", 8);
    CHECK(lora8.config.tensor_parallel == 4);
    CHECK(lora8.config.data_parallel == 2);
    CHECK(lora8.config.gradient_accumulation == 4);
    CHECK(lora8.config.global_batch == 8);
    const ParallelismChoice lora16 = default_parallelism(lora, "H100-SXM", 16);   // Dell ran GBS 8 on 16 GPUs
    CHECK(lora16.config.global_batch == 8);    // v4.1 used 8 at both 8 and 64 GPUs
    CHECK(lora16.config.data_parallel == 4);
    CHECK(lora16.config.gradient_accumulation == 2);
    CHECK(default_parallelism(lora, "H100-SXM", 1024).config.global_batch == 128);
    const ParallelismChoice gb200 = default_parallelism(lora, "GB200", 72);
    CHECK(gb200.config.context_parallel == 8);
    CHECK(gb200.config.global_batch == 9);
    CHECK_THROWS_AS(default_parallelism(lora, "H100-SXM", 6), InputError);   // TP4 x CP1 does not divide 6

    // RetinaNet at 4096 GPUs: beyond the largest published scale, 2528's batch rounded up to one image per GPU.
    const ParallelismChoice retinanet = default_parallelism(find_workload("ssd"), "H100", 4096);
    CHECK(retinanet.basis.gpus == 2528);
    CHECK(retinanet.config.global_batch == 4096);

    // B200 never ran SD at 512 GPUs: the H100 layout is used and says so.
    const ParallelismChoice sd = default_parallelism(find_workload("sd"), "B200", 512);
    CHECK(sd.basis.system_family == "H100-SXM");
    CHECK(sd.config.global_batch == 2048);
    CHECK_FALSE(sd.notes.empty());
    CHECK(default_parallelism(find_workload("sd"), "B200", 8).basis.system_family == "B200");
    // GB200 at 64 GPUs: its own 72-GPU layout (CP 8) is within 2x, so it is preferred over H100's 64-GPU one.
    CHECK(default_parallelism(lora, "GB200", 64).basis.gpus == 72);
    const ParallelismChoice sd_mi = default_parallelism(find_workload("sd"), "MI300X", 512);
    CHECK(sd_mi.basis.system_family == "H100-SXM");
    CHECK(sd_mi.config.global_batch == 2048);
    CHECK_FALSE(sd_mi.notes.empty());
    CHECK_THROWS_AS(default_parallelism(find_workload("sd"), "TPU v5p", 8), InputError);
}

TEST_CASE("default global batch: hold, cap at the RCPs, raise, round to the data-parallel size", "[workload]") {
    // Splits evenly: held, split into the fewest micro steps no larger than the micro limit.
    BatchChoice b = default_global_batch(4608, 72, 64, {}, "test");
    CHECK(b.global_batch == 4608);
    CHECK(b.samples_per_micro_batch == 72);
    CHECK(b.gradient_accumulation == 1);
    b = default_global_batch(4608, 72, 32, {}, "test");
    CHECK(b.global_batch == 4608);
    CHECK(b.samples_per_micro_batch * b.gradient_accumulation == 144);
    CHECK(b.samples_per_micro_batch <= 72);
    // Does not split: the nearest multiple of the ranks (4488 is 120 below 4608, 4752 144 above), at least one
    // sample each; up where down is farther (2064 for 2048 on 688), or below a lower bound (the next checks).
    b = default_global_batch(4608, 72, 264, {}, "test");
    CHECK(b.global_batch == 4488);
    CHECK(b.note.find("rounded down to a multiple of 264") != std::string::npos);
    b = default_global_batch(4608, 72, 264, {4600, 0, 0}, "test");
    CHECK(b.global_batch == 4752);   // 4488 would fall below the smallest RCP batch
    CHECK(b.note.find("rounded up to a multiple of 264") != std::string::npos);
    CHECK(default_global_batch(4608, 72, 264, {0, 0, 4500}, "test").global_batch == 4752);   // below fewer GPUs' target
    CHECK(default_global_batch(2528, 32, 4096, {}, "test").global_batch == 4096);
    // Cap: the target is held at the largest RCP batch, then rounded up.
    b = default_global_batch(13888, 96, 512, {0, 8192, 0}, "test");
    CHECK(b.global_batch == 8192);
    CHECK(b.note.find("capped") != std::string::npos);
    CHECK(default_global_batch(2048, 8, 688, {0, 2048, 0}, "test").global_batch == 2064);   // was 1376 rounded down
    b = default_global_batch(2528, 32, 8192, {0, 4096, 0}, "test");
    CHECK(b.global_batch == 8192);
    CHECK(b.note.find("extrapolated") != std::string::npos);
    // Floor: never below the smallest RCP batch (LoRA on 7 data-parallel ranks: 14, not 7).
    b = default_global_batch(7, 1, 7, {8, 128, 0}, "test");
    CHECK(b.global_batch == 14);
    CHECK(b.note.find("smallest RCP batch 8") != std::string::npos);
    // Never below v4.1's batch at fewer GPUs.
    b = default_global_batch(1376, 8, 688, {256, 2048, 2040}, "test");
    CHECK(b.global_batch == 2064);
    CHECK(b.note.find("at fewer GPUs") != std::string::npos);
}

TEST_CASE("model state per GPU follows TP and the distributed optimizer", "[workload]") {
    const Workload& lora = find_workload("lora");
    ParallelismConfig c;
    c.tensor_parallel = 1;
    // 69 B parameters in bf16 (2 B) + 44.6 M trainable with fp32 gradients (4 B: NeMo's grad_reduce_in_fp32) and
    // fp32 optimizer state (12 B) on one GPU: ~139 GB, more than an H100's 80 GB.
    REQUIRE(lora.gradient_element_bytes() == 4.0);
    CHECK(model_state_bytes_per_gpu(lora, c) == Approx(2.0 * lora.total_params + 16.0 * lora.trainable_params));
    CHECK(model_state_bytes_per_gpu(lora, c) > find_gpu("H100-SXM").hbm_capacity_bytes);
    c.tensor_parallel = 4;
    CHECK(model_state_bytes_per_gpu(lora, c) < find_gpu("H100-SXM").hbm_capacity_bytes);
    const Workload& sd = find_workload("sd");
    ParallelismConfig dp;
    dp.data_parallel = 8;
    const double replicated = model_state_bytes_per_gpu(sd, dp);
    dp.distributed_optimizer = true;
    CHECK(model_state_bytes_per_gpu(sd, dp) == Approx(replicated - 12.0 * sd.trainable_params * (1 - 1.0 / 8)));
}
