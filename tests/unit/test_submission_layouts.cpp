// The submitters' own layouts of v4.1 results (models/mlperf/submission_layouts.hpp): read strictly, and what the
// calibration points price where they differ from NVIDIA's layout at the nearest scale.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "models/calibration/calibration.hpp"
#include "models/mlperf/submission_layouts.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

const CalibrationPoint& point(const std::string& submitter, const std::string& system, const std::string& workload) {
    static const std::vector<CalibrationPoint> all = load_calibration_points({});
    for (const CalibrationPoint& p : all)
        if (p.result.submitter == submitter && p.result.system == system && p.scenario.workload->name == workload) return p;
    FAIL("no calibration point " << submitter << "/" << system << "/" << workload);
    return all.front();
}

}  // namespace

TEST_CASE("submission layouts: every shipped entry is a v4.1 result's, priced as its submitter ran it",
          "[calibration][layouts]") {
    const auto facts = load_submission_facts();
    REQUIRE(facts.size() == 5);
    // Lambda's 4-node LoRA: TP 4 without CP over 8 data-parallel ranks (NVIDIA's layout at 64 GPUs, which the
    // nearest scale would give, is TP 4 x CP 2), no layer graphs, FP8 attention.
    const ParallelismConfig& lora = point("Lambda", "lambda_1cc_n4_H100-SXM-80GB_ngc24.04_nemo", "llama2_70b_lora").scenario.layout;
    CHECK(lora.tensor_parallel == 4);
    CHECK(lora.context_parallel == 1);
    CHECK(lora.data_parallel == 8);
    CHECK(lora.gradient_accumulation == 1);
    CHECK(lora.cuda_graphs == "none");
    CHECK(lora.attention_precision == "fp8");
    // Clemson's 6-node BERT: packed rows with segmented graphs, one micro step of 144 sequences a GPU (NVIDIA's
    // 8-node layout is unpacked and eager).
    const ParallelismConfig& bert = point("Clemson", "6x8xH100-SXM5-80GB", "bert").scenario.layout;
    CHECK(bert.packing_factor == 2);
    CHECK(bert.cuda_graphs == "segmented");
    CHECK(bert.samples_per_micro_batch == 144);
    CHECK(bert.gradient_accumulation == 1);
    CHECK(bert.eval_samples_per_graph_sample == 0);   // its evaluation pads, as the 1-node recipe's
    // A result without an entry keeps NVIDIA's layout at the nearest scale (the 8-node BERT, unpacked and eager).
    const ParallelismConfig& nvidia = point("NVIDIA", "eos_n8_ngc23.04_pytorch", "bert").scenario.layout;
    CHECK(nvidia.packing_factor == 1);
    CHECK(nvidia.cuda_graphs == "none");
    // Oracle's 512-GPU LoRA skipped 4 evaluations (SKIP_EVALS=4), not the 10 the rules allow at global batch 64:
    // its first evaluation at 1,920 samples, every 384 after, 19 on the clock in its logs.
    const CalibrationPoint& oracle = point("Oracle", "512xBM.GPU.H100.8", "llama2_70b_lora");
    CHECK(oracle.scenario.eval_schedule.first_eval_samples == 1920);
    CHECK(oracle.scenario.eval_schedule.interval_samples == 384);
    CHECK(oracle.fit_scenario.eval_schedule.first_eval_samples == 1920);
    CHECK(oracle.scenario.evaluations == evaluations_until(oracle.scenario.eval_schedule, oracle.scenario.samples_mean));
    CHECK(eval_schedule(*oracle.scenario.workload, 64).first_eval_samples == 11 * 384);
    // Lambda's 8-node BERT evaluates every 150,000 samples, where the rules' interval at 4,608 is 200,000.
    const CalibrationPoint& lambda = point("Lambda", "lambda_1cc_n8_H100-SXM-80GB_ngc24.04_nemo", "bert");
    CHECK(lambda.scenario.eval_schedule.interval_samples == 150000);
    CHECK(eval_schedule(*lambda.scenario.workload, 4608).interval_samples == 200000);
    CHECK(point("Clemson", "6x8xH100-SXM5-80GB", "bert").scenario.eval_schedule.interval_samples == 200000);
    CHECK(eval_schedule(*lambda.scenario.workload, 6912).interval_samples == 225000);
}

TEST_CASE("submission layouts: malformed files are refused with the file and line", "[calibration][layouts]") {
    const auto file = std::filesystem::temp_directory_path() / "ttsim_test_submission_layouts.yaml";
    auto write = [&](const std::string& text) {
        std::ofstream(file) << "format: ttsim-submission-layouts-1\nresults:\n" << text;
    };
    const std::string entry =
        "  - {submitter: A, system: s, benchmark: bert, layout: {system: H100-SXM, gpus: 8, dp: 8, micro: 4, source: x}}\n";
    write(entry);
    CHECK(load_submission_facts(file).count("A/s/bert") == 1);
    write(entry + entry);
    CHECK_THROWS_WITH(load_submission_facts(file), Catch::Contains("a second entry for A/s/bert"));
    write("  - {submitter: A, system: s, benchmark: bert}\n");
    CHECK_THROWS_WITH(load_submission_facts(file), Catch::Contains("neither a layout nor an evaluation"));
    write("  - {submitter: A, system: s, benchmark: bert, evaluation: {first: 10, every: 0, source: x}}\n");
    CHECK_THROWS_AS(load_submission_facts(file), InputError);
    write("  - {submitter: A, system: s, benchmark: bert, layout: {system: H100-SXM, gpus: 8, dp: 4, source: x}}\n");
    CHECK_THROWS_WITH(load_submission_facts(file), Catch::Contains("does not multiply out"));
    write("  - {submitter: A, system: s, benchmark: bert, tp: 2, layout: {system: H100-SXM, gpus: 8, dp: 8, source: x}}\n");
    CHECK_THROWS_AS(load_submission_facts(file), InputError);
    std::filesystem::remove(file);
}
