// Pipeline parallelism in predictions: layouts with PP/VP (layout_search.hpp), the pipelined step
// (pipeline_step.cpp), memory per pipeline device (layers/memory.hpp), and the public step times of large decoders
// (models/data/llm/public_step_times.yaml).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "models/compute/profile_files.hpp"
#include "models/data_dir.hpp"
#include "models/hardware/system.hpp"
#include "models/training/iteration.hpp"
#include "models/training/layout_search.hpp"
#include "models/training/operator_step.hpp"
#include "models/training/pipeline_schedule.hpp"
#include "models/training/step_bounds.hpp"
#include "models/workloads/custom_workload.hpp"
#include "models/workloads/layers/layer_workload.hpp"
#include "models/workloads/layers/memory.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"

#include <yaml-cpp/yaml.h>

using namespace ttsim;

namespace {

// The public rows' MAPE and the layouts within the memory estimate, as measured when this test was written
// (regression guards; the aim is 12 % and all of them); tighten them as the model improves.
// Measured 11.3 % over 23 rows with the profiles fitted on every round (10.3 % with v4.1's alone: the joint fit's
// GEMM efficiency 0.78 against 0.68 prices the H100 rows faster).
constexpr double kPublicStepTimeMapeGuard = 11.4;
constexpr int kPublicLayoutsFittingGuard = 21;      // measured 21 of 23 (Llama 3.1 405B at DP 4 is 1 GB over)

const ProfileSet& operator_profiles() {
    static const ProfileSet set = load_profiles(ProfileSet::default_dir(), ComputeModel::operator_level);
    return set;
}

const ConfigNode& public_rows() {
    static const ConfigNode root = ConfigNode::load_file((data_dir() / "llm" / "public_step_times.yaml").string());
    return root;
}

// A user model of `model` (public_step_times.yaml `models:`) at `precision`, trained for 100 global batches.
UserModel user_model(const std::string& model, const std::string& precision, int global_batch, double weight_bytes = 2,
                     double hidden_dropout = 0) {
    const ConfigNode shape = public_rows().required("models").required(model).required("architecture");
    YAML::Node architecture = YAML::Clone(shape.raw());
    if (hidden_dropout > 0) architecture["hidden_dropout"] = hidden_dropout;
    YAML::Emitter flow;
    flow << YAML::Flow << architecture;
    const std::string yaml = fmt::format(
        "name: {}\ngraph:\n  family: transformer_decoder\n  training: {{precision: {}, weight_bytes: {}, cuda_graphs: none, "
        "recompute: none}}\n  architecture: {}\ntrain: {{samples: {}}}\nglobal_batch: {{samples: {}}}\n",
        model, precision, weight_bytes, flow.c_str(), 100 * global_batch, global_batch);
    return load_user_model(ConfigNode::load_string(yaml, model + " (test)"));
}

PredictionRequest pinned(const UserModel& m, const std::string& system, int gpus, const std::string& layout) {
    PredictionRequest r;
    r.custom_workload = m.workload;
    r.workload = m.workload->name;
    r.system = system;
    r.gpus = gpus;
    r.global_batch = m.global_batch;
    r.layout = parse_layout_request(layout);
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

}  // namespace

TEST_CASE("layout pins: pp, vp and recompute are parsed and printed back", "[pipeline][layout]") {
    const LayoutRequest r = parse_layout_request("tp=4,pp=8,vp=12,cp=1,micro=1,recompute=full");
    REQUIRE(r.mode == LayoutMode::pinned);
    CHECK(*r.pins.tensor_parallel == 4);
    CHECK(*r.pins.pipeline_parallel == 8);
    CHECK(*r.pins.virtual_pipeline == 12);
    CHECK(*r.pins.recompute == "full");
    CHECK(format_layout_pins(r.pins) == "tp=4,cp=1,pp=8,vp=12,micro=1,recompute=full");
    CHECK_THROWS_AS(parse_layout_request("pp=0"), InputError);
    CHECK_THROWS_AS(parse_layout_request("recompute=selective"), InputError);
}

TEST_CASE("pipeline stages: blocks split evenly, or with the embedding and loss counted as a block each",
          "[pipeline][layout]") {
    // embedding, 6 blocks, head
    const std::vector<bool> flags{false, true, true, true, true, true, true, false};
    const auto even = layers::pipeline_stages(flags, 3);
    REQUIRE(even.size() == 3);
    CHECK(even[0].first == 0);
    CHECK(even[0].last == 3);   // embedding + 2 blocks
    CHECK(even[2].last == 8);   // 2 blocks + head
    const auto asymmetric = layers::pipeline_stages(flags, 4);   // (6 + 2) / 4 = 2: first and last hold one block
    REQUIRE(asymmetric.size() == 4);
    CHECK(asymmetric[0].last - asymmetric[0].first == 2);   // embedding + 1 block
    CHECK(asymmetric[1].last - asymmetric[1].first == 2);
    CHECK(asymmetric[3].last - asymmetric[3].first == 2);   // 1 block + head
    CHECK(layers::pipeline_stages(flags, 5).empty());
    CHECK(layers::pipeline_stage_problem(flags, 5).find("divide neither") != std::string::npos);
}

TEST_CASE("pipelined step: one stage is the data-parallel step's layers exactly", "[pipeline]") {
    IterationPlan plan;
    plan.micro_steps = 7;
    plan.micro_step_compute_seconds = 0.3;
    plan.backward_share = 0.64;
    plan.optimizer_seconds = 0.01;
    plan.fixed_step_seconds = 0.002;
    const int n = 6;
    for (int i = 0; i < n; ++i) {
        IterationLayer l;
        l.forward_kernels_end = l.forward_end = double(i + 1) / n;
        l.backward_kernels_end = l.backward_end = double(n - i) / n;
        plan.layers.push_back(l);
        plan.layer_is_block.push_back(i > 0 && i + 1 < n);
        plan.layer_gradient_bytes.push_back(1e6);
    }
    const IterationResult data_parallel = simulate_iteration(plan);
    const IterationResult one_stage = simulate_pipelined_iteration(plan);   // PP 1 through the pipeline code
    CHECK(one_stage.step_seconds == Approx(data_parallel.step_seconds).epsilon(1e-12));
    CHECK(one_stage.bubble_seconds == Approx(0.0).margin(1e-12));
    // Four stages of 1F1B over 7 micro batches, one block each (the first with the embedding, the last with the
    // head): the pipeline idles, and each device computes a quarter of the model or so.
    plan.pipeline_parallel = 4;
    const IterationResult four = simulate_pipelined_iteration(plan);
    CHECK(four.bubble_fraction > 0);
    CHECK(four.step_seconds < data_parallel.step_seconds);
    CHECK(four.compute_seconds >= data_parallel.compute_seconds / 4);
}

namespace {

// A pipelined step with free communication and no optimizer or fixed cost (the step is the pipeline's makespan), in
// `schedule`. Layers of a third, two thirds and one unit of compute alternate so that stages differ; with every layer
// a block and a layer per virtual stage (`even`), stages are even.
IterationPlan free_pipeline(int p, int v, int m, bool even, PipeScheduleKind schedule) {
    IterationPlan plan;
    plan.micro_steps = m;
    plan.micro_step_compute_seconds = 0.3;
    plan.backward_share = 0.64;
    plan.pipeline_parallel = p;
    plan.virtual_pipeline = v;
    plan.pipeline_schedule = schedule;
    const int n = p * v * (even ? 1 : 3) + (even ? 0 : 2);   // uneven: an embedding and a head beside
    std::vector<double> weight;
    for (int i = 0; i < n; ++i) weight.push_back(even ? 1.0 : 1.0 + (i % 3) / 3.0);
    double total = 0, done = 0;
    for (double w : weight) total += w;
    for (int i = 0; i < n; ++i) {
        IterationLayer l;
        done += weight[static_cast<std::size_t>(i)];
        l.forward_kernels_end = l.forward_end = done / total;
        plan.layers.push_back(l);
        plan.layer_is_block.push_back(even || (i > 0 && i + 1 < n));
        plan.layer_gradient_bytes.push_back(1e6);
    }
    for (int i = 0; i < n; ++i)   // cumulative in backward order, last layer first
        plan.layers[static_cast<std::size_t>(i)].backward_kernels_end =
            plan.layers[static_cast<std::size_t>(i)].backward_end =
                1.0 - (i == 0 ? 0.0 : plan.layers[static_cast<std::size_t>(i - 1)].forward_end);
    return plan;
}

}  // namespace

TEST_CASE("pipelined step: the search's unsimulated bound is at most the simulated makespan, and tight when even",
          "[pipeline][layout_search]") {
    // Even: the bound is the bubble itself: 1F1B and GPipe (m + p - 1)(F + B); interleaved m (F + B) + (p - 1)(F + B)
    // / v per device, which the schedule meets within its 2 % (the bubble test above).
    for (const bool even : {false, true})
        for (const auto& [p, v, m] : {std::tuple{4, 1, 8}, {4, 2, 8}, {2, 3, 6}, {8, 2, 16}, {4, 3, 4}})
            for (const PipeScheduleKind schedule : {pipe_schedule_of("", v), PipeScheduleKind::gpipe}) {
                if (schedule == PipeScheduleKind::gpipe && v > 1) continue;   // GPipe runs one chunk per device
                const IterationPlan plan = free_pipeline(p, v, m, even, schedule);
                const double makespan = simulate_pipelined_iteration(plan).step_seconds;
                const double bound = pipeline_makespan_lower_bound(plan);
                INFO(to_string(schedule) << " p " << p << " v " << v << " m " << m << (even ? " even" : " uneven")
                                         << ": bound " << bound << " s, simulated " << makespan << " s");
                CHECK(bound <= makespan * (1 + 1e-12));
                if (even) CHECK(bound >= makespan * 0.98);
            }
}

TEST_CASE("pipelined step: GPipe's and 1F1B's simulated bubbles are (p-1)/m with free p2p and even stages",
          "[pipeline][physics]") {
    // The step's schedule comes from the plan (a layout's `schedule`): all forwards then all backwards, or 1F1B's
    // interleaving of them; with even stages both idle (p-1)/m of the busiest stage's compute.
    for (const auto& [p, m] : {std::pair{4, 8}, {4, 16}, {8, 32}, {2, 6}})
        for (const PipeScheduleKind schedule : {PipeScheduleKind::gpipe, PipeScheduleKind::one_f_one_b}) {
            const IterationResult r = simulate_pipelined_iteration(free_pipeline(p, 1, m, true, schedule));
            INFO(to_string(schedule) << " p " << p << " m " << m);
            CHECK(r.bubble_fraction == Approx(double(p - 1) / m).epsilon(0.02));
        }
}

TEST_CASE("memory: Korthikanti's activations per layer with TP, SP and flash attention (GPT-3 175B)", "[pipeline][memory]") {
    // GPT-3 175B at TP 8 with sequence parallelism, micro batch 1 of 2,048 tokens: Korthikanti et al. 2022
    // (arXiv 2205.05198) Table 2 with selective recomputation, which Megatron-LM's code implements as
    // s b h (18 + 4 ffn / h) / t per layer (theoretical_memory_usage.py; 34 s b h / t for ffn = 4h), the
    // attention scores not kept (flash attention keeps none either). Their accounting keeps the two dropout masks of
    // a block (1 byte per element): the model with GPT-3's dropout of 0.1 after attention and MLP.
    const UserModel gpt3 = user_model("gpt3_175b", "bf16", 64, 2, 0.1);
    ParallelismConfig c;
    c.tensor_parallel = 8;
    c.pipeline_parallel = 8;
    c.sequence_parallel = true;
    c.data_parallel = 1;
    c.samples_per_micro_batch = 1;
    c.gradient_accumulation = 64;
    const layers::LayerGraph graph = build_layout_graph(*gpt3.workload, layer_description(*gpt3.workload), c);
    const double s = 2048, h = 12288, t = 8;
    const layers::GraphTotals block = layers::totals(graph, {1, 2});
    const double korthikanti = 34 * s * h / t;
    INFO("one block keeps " << block.saved_bytes / 1e6 << " MB, Korthikanti's 34 sbh/t = " << korthikanti / 1e6 << " MB");
    CHECK(block.saved_bytes == Approx(korthikanti).epsilon(0.05));
    // The first of 8 stages holds 8 micro batches of its 12 layers: 96 layers' worth (Korthikanti's 1F1B accounting).
    layers::MemoryLayout m;
    m.tensor_parallel = 8;
    m.pipeline_parallel = 8;
    m.sequence_parallel = true;
    m.micro_batches = 64;
    const layers::MemoryEstimate first = layers::memory_per_gpu(graph, m, find_gpu("H100-SXM"));
    const double all_layers = 96 * korthikanti;
    std::printf("GPT-3 175B TP 8 PP 8 SP, first stage activations %.2f GiB (Korthikanti 34 sbh L / t = %.2f GiB; "
                "Fig. 7 measured 12.35 GiB with embeddings and buffers)\n",
                first.activations / (1 << 30), all_layers / (1 << 30));
    CHECK(first.activations >= all_layers * 0.95);
    CHECK(first.activations <= all_layers * 1.15);   // plus the embedding's output and one micro batch's input
}

TEST_CASE("memory: the first pipeline device holds the most, interleaving adds (p-1)/(p v)", "[pipeline][memory]") {
    const UserModel gpt3 = user_model("gpt3_175b", "bf16", 64);
    ParallelismConfig c;
    c.tensor_parallel = 8;
    c.sequence_parallel = true;
    c.samples_per_micro_batch = 1;
    const layers::LayerGraph graph = build_layout_graph(*gpt3.workload, layer_description(*gpt3.workload), c);
    layers::MemoryLayout m;
    m.tensor_parallel = 8;
    m.pipeline_parallel = 8;
    m.sequence_parallel = true;
    m.micro_batches = 64;
    const double plain = layers::memory_per_gpu(graph, m, find_gpu("H100-SXM")).activations;
    m.virtual_pipeline = 4;
    const double interleaved = layers::memory_per_gpu(graph, m, find_gpu("H100-SXM")).activations;
    CHECK(interleaved / plain == Approx(1.0 + 7.0 / 32).epsilon(0.05));
}

TEST_CASE("memory: GPipe holds every micro batch in flight, m/p times 1F1B's first device", "[pipeline][memory]") {
    // A layout's `schedule` reaches the estimate through its table (build_operator_table): 1F1B's first device keeps
    // PP = 8 micro batches of its stage, GPipe's devices all 64 until their backward.
    const UserModel gpt3 = user_model("gpt3_175b", "bf16", 64);
    ParallelismConfig c;
    c.tensor_parallel = 8;
    c.sequence_parallel = true;
    c.pipeline_parallel = 8;
    c.data_parallel = 1;
    c.samples_per_micro_batch = 1;
    c.gradient_accumulation = 64;
    c.global_batch = 64;
    auto activations = [&](const std::string& schedule) {
        c.pipeline_schedule = schedule;
        return build_operator_table(*gpt3.workload, find_gpu("H100-SXM"), c, 1)->memory.activations;
    };
    const double one_f_one_b = activations("1f1b");
    CHECK(activations("") == one_f_one_b);   // the default without VP
    const double gpipe = activations("gpipe");
    CHECK(gpipe > one_f_one_b);
    CHECK(gpipe / one_f_one_b == Approx(64.0 / 8).epsilon(0.1));
}

TEST_CASE("layout pins: a pipeline schedule is parsed, printed back and checked against PP and VP", "[pipeline][layout]") {
    const LayoutRequest r = parse_layout_request("tp=8,pp=8,schedule=gpipe");
    CHECK(*r.pins.schedule == "gpipe");
    CHECK(format_layout_pins(r.pins) == "tp=8,pp=8,schedule=gpipe");
    CHECK_THROWS_WITH(parse_layout_request("pp=4,schedule=foo"),
                      Catch::Contains("schedule must be gpipe, 1f1b or interleaved, not 'foo'"));
    const UserModel gpt3 = user_model("gpt3_175b", "bf16", 64);
    const System h100 = resolve_system("dgx-h100");
    CHECK_THROWS_WITH(check_pins_apply(*gpt3.workload, h100, parse_layout_request("pp=4,vp=2,schedule=1f1b").pins),
                      Catch::Contains("vp=2 needs schedule=interleaved"));
    CHECK_THROWS_WITH(check_pins_apply(*gpt3.workload, h100, parse_layout_request("pp=1,schedule=gpipe").pins),
                      Catch::Contains("needs pipeline parallelism"));
    CHECK_NOTHROW(check_pins_apply(*gpt3.workload, h100, parse_layout_request("pp=4,vp=2,schedule=interleaved").pins));
}

TEST_CASE("public runs' layouts fit in memory and price with a bubble", "[pipeline][memory]") {
    const UserModel llama = user_model("llama31_405b", "bf16", 256);
    const Prediction p = predict(pinned(llama, "dgx-h100", 512, "tp=8,pp=8,vp=8,cp=2,micro=1"), operator_profiles());
    INFO(p.memory_summary);
    CHECK(p.memory_fits);
    CHECK(p.layout.pipeline_parallel == 8);
    CHECK(p.layout.virtual_pipeline == 8);
    CHECK(p.bubble_fraction > 0);
    CHECK(p.model_flops_utilisation > 0.2);
    CHECK(p.model_flops_utilisation < 1.0);
}

TEST_CASE("p2p messages between pipeline devices take at least their bandwidth bound", "[pipeline][physics]") {
    const UserModel gpt3 = user_model("gpt3_175b", "bf16", 256);
    ParallelismConfig c;
    c.tensor_parallel = 4;
    c.pipeline_parallel = 8;
    c.virtual_pipeline = 6;
    c.data_parallel = 4;
    c.gradient_accumulation = 64;
    c.global_batch = 256;
    c.sequence_parallel = true;
    c.distributed_optimizer = true;
    const PreparedScenario s = prepare_with_layout(gpt3.workload, resolve_system("dgx-h100"), 128, c);
    REQUIRE(s.pp_send_seconds.size() == 8);
    // 2,048 tokens x 12,288 x 2 bytes / TP 4 per rank; neighbours with TP x CP = 4 share a node every other stage.
    const double bytes = 2048.0 * 12288 * 2 / 4;
    for (std::size_t d = 0; d < s.pp_send_seconds.size(); ++d) {
        const bool same_node = (d * 4) / 8 == ((d + 1) % 8 * 4) / 8;
        const double bandwidth = same_node ? s.gpu->scaleup_bandwidth_per_direction : s.gpu->nic_bandwidth_per_direction;
        INFO("device " << d << (same_node ? " NVLink" : " InfiniBand"));
        CHECK(s.pp_send_seconds[d] >= bytes / bandwidth);
    }
}

TEST_CASE("refusal names what fills memory and the change that helps", "[pipeline][layout]") {
    const UserModel llama = user_model("llama31_405b", "bf16", 2048);
    PredictionRequest r = pinned(llama, "dgx-h100", 64, "tp=8,pp=1");
    try {
        predict(r, operator_profiles());
        FAIL("a 405B model on 64 GPUs without PP fits");
    } catch (const InputError& e) {
        const std::string m = e.message();
        INFO(m);
        CHECK(m.find("pipeline stages") != std::string::npos);
        CHECK(m.find("more GPUs allow a larger TP or CP") == std::string::npos);
    }
}

TEST_CASE("public step times of pipelined decoders: every row, the error of each", "[pipeline][accuracy]") {
    // Each row at exactly its layout (no search, no memory refusal: the run ran), priced as a user model is; the
    // memory estimate is printed beside it.
    const ConfigNode rows = public_rows().required("rows");
    double sum_abs = 0;
    int n = 0, fitting = 0;
    std::printf("%-12s %-14s %-12s %6s %-5s %-26s %9s %9s %7s %7s %8s\n", "row", "model", "system", "GPUs", "prec",
                "layout", "measured", "predicted", "error", "bubble", "memory");
    for (const ConfigNode& row : rows.items()) {
        const int gbs = static_cast<int>(row.required("global_batch").as_int(1, 1 << 20));
        const std::string model = row.required("model").as_string();
        const std::string precision = row.required("precision").as_string();
        const double weight_bytes = row.has("weight_bytes") ? row.required("weight_bytes").as_double(1, 4) : 2.0;
        const UserModel m = user_model(model, precision, gbs, weight_bytes);
        const System system = resolve_system(row.required("system").as_string());
        const int gpus = static_cast<int>(row.required("gpus").as_int(1, 1 << 20));
        ParallelismConfig c;
        c.tensor_parallel = static_cast<int>(row.required("tp").as_int(1, 64));
        c.pipeline_parallel = static_cast<int>(row.required("pp").as_int(1, 256));
        c.virtual_pipeline = static_cast<int>(row.required("vp").as_int(1, 64));
        c.context_parallel = static_cast<int>(row.required("cp").as_int(1, 64));
        c.samples_per_micro_batch = static_cast<int>(row.required("micro").as_int(1, 64));
        c.data_parallel = gpus / c.model_split();
        REQUIRE(c.gpus() == gpus);
        c.gradient_accumulation = gbs / (c.data_parallel * c.samples_per_micro_batch);
        REQUIRE(c.gradient_accumulation * c.data_parallel * c.samples_per_micro_batch == gbs);
        c.global_batch = gbs;
        c.sequence_parallel = c.tensor_parallel > 1;
        c.distributed_optimizer = true;
        c.recompute = "none";
        c.sharp = sharp_by_default(system, gpus);
        const PreparedScenario s = prepare_with_layout(m.workload, system, gpus, c);
        const Prediction p = evaluate(s, user_model_profile(operator_profiles(), *m.workload, *system.gpu));
        const double measured = row.required("step_s").as_double(0, 1e6);
        const double predicted = p.step_ms / 1e3;
        const double error = predicted / measured - 1;
        sum_abs += std::abs(error);
        ++n;
        fitting += p.memory_fits ? 1 : 0;
        const std::string layout = fmt::format("tp{} pp{} vp{} cp{} dp{} mb{}x{}", c.tensor_parallel, c.pipeline_parallel,
                                               c.virtual_pipeline, c.context_parallel, c.data_parallel,
                                               c.samples_per_micro_batch, c.gradient_accumulation);
        std::printf("%-12s %-14s %-12s %6d %-5s %-26s %9.3f %9.3f %+6.1f%% %6.1f%% %5.1f GB%s\n",
                    row.required("id").as_string().c_str(), model.c_str(), system.name.c_str(), gpus, precision.c_str(),
                    layout.c_str(), measured, predicted, 100 * error, 100 * p.bubble_fraction,
                    p.memory_per_gpu_bytes / 1e9, p.memory_fits ? "" : " (over)");
    }
    const double mape = 100 * sum_abs / n;
    std::printf("MAPE over %d rows: %.1f %%; %d of %d layouts within the memory estimate\n", n, mape, fitting, n);
    CHECK(mape <= kPublicStepTimeMapeGuard);
    CHECK(fitting >= kPublicLayoutsFittingGuard);
}
