// Reference data files (models/data/gpus.yaml, nccl.yaml, prices.yaml, workload_catalog.yaml): the loaded values agree with the
// compilation they were taken from (hardware/params.yaml, read here on its own with yaml-cpp) and with a few
// independently measured figures; malformed data files are InputErrors naming file:line and the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "models/collectives/nccl_data.hpp"
#include "models/data_dir.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/planning/reference_prices.hpp"
#include "models/workloads/workload.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {

const YAML::Node& params_yaml() {
    static const YAML::Node root = YAML::LoadFile(data_file("hardware/params.yaml").string());
    return root;
}

double param(const YAML::Node& node) { return node["value"].as<double>(); }

// `text` written to a fresh temporary file; removed when the test case ends.
struct TempFile {
    std::filesystem::path path;
    TempFile(const std::string& name, const std::string& text)
        : path(std::filesystem::temp_directory_path() / ("ttsim-test-" + name)) {
        std::ofstream(path) << text;
    }
    ~TempFile() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

// The shipped file's text with the first occurrence of `from` replaced by `to` (which must exist).
std::string shipped_with(const std::string& file, const std::string& from, const std::string& to) {
    std::ifstream in(data_file(file));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

// 1-based line of the first occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
    const auto at = text.find(needle);
    REQUIRE(at != std::string::npos);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

template <typename Load>
std::string error_of(Load load) {
    try {
        load();
    } catch (const InputError& e) {
        return e.what();
    }
    FAIL("expected an InputError");
    return {};
}

}  // namespace

TEST_CASE("GPU catalog matches hardware/params.yaml field by field", "[reference-data]") {
    const YAML::Node gpus = params_yaml()["gpus"];
    const std::pair<const char*, const char*> names[] = {{"A100_SXM4_80GB", "A100-SXM"}, {"H100_SXM5_80GB", "H100-SXM"},
                                                         {"H200_SXM5_141GB", "H200-SXM"}, {"B200_SXM_180GB", "B200"},
                                                         {"GB200_NVL72", "GB200"}, {"MI300X", "MI300X"}};
    for (const auto& [key, name] : names) {
        INFO(name);
        const YAML::Node p = gpus[key];
        REQUIRE(p.IsMap());
        const GpuSpec& g = find_gpu(name);
        CHECK(g.bf16_dense_flops == Approx(param(p["bf16_dense_tflops"]) * 1e12));
        if (p["fp8_dense_tflops"]["value"].IsNull()) CHECK_FALSE(g.fp8_dense_flops);
        else CHECK(*g.fp8_dense_flops == Approx(param(p["fp8_dense_tflops"]) * 1e12));
        CHECK(g.hbm_capacity_bytes == Approx(param(p["hbm_gb"]) * 1e9));
        CHECK(g.hbm_bandwidth == Approx(param(p["hbm_tbps"]) * 1e12));
        CHECK(g.gpus_per_scaleup_domain == param(p["nvlink_domain_gpus"]));
        CHECK(g.tdp_watts == param(p["tdp_w"]));
        if (p["nvlink_links"]) {
            CHECK(g.scaleup_links == param(p["nvlink_links"]));
            CHECK(g.scaleup_bandwidth_per_direction == Approx(param(p["nvlink_uni_gbps"]) * 1e9));
            CHECK(g.scaleup_bandwidth_bidirectional == Approx(param(p["nvlink_bidir_gbps"]) * 1e9));
        } else {   // AMD Infinity Fabric
            CHECK(g.scaleup_links == param(p["if_links"]));
            CHECK(g.scaleup_bandwidth_per_direction == Approx(param(p["if_uni_gbps_total"]) * 1e9));
            CHECK(g.scaleup_bandwidth_bidirectional == Approx(param(p["if_bidir_gbps_total"]) * 1e9));
            CHECK(*g.collective_effective_link_bandwidth == Approx(param(p["if_link_uni_gbps_effective"]) * 1e9));
        }
        if (p["nccl_model_nvlink_bw_per_link_gbps"])
            CHECK(*g.collective_effective_link_bandwidth == Approx(param(p["nccl_model_nvlink_bw_per_link_gbps"]) * 1e9));
    }
}

TEST_CASE("GPU catalog agrees with independently measured figures", "[reference-data]") {
    // Measurements are below the vendor peaks the catalog holds, and not far below.
    const GpuSpec& a100 = find_gpu("a100");
    CHECK(256.5e12 < a100.bf16_dense_flops);                  // AZ_A100: FP16 GEMM 256.5 TF (82% of peak)
    CHECK(256.5e12 > 0.75 * a100.bf16_dense_flops);
    const GpuSpec& h200 = find_gpu("h200");
    CHECK(1366e12 < *h200.fp8_dense_flops);                   // AZ_H200: FP8 GEMM 1300-1366 TF
    CHECK(1300e12 > 0.6 * *h200.fp8_dense_flops);
    CHECK(4.48e12 < h200.hbm_bandwidth);                      // AZ_H200: HBM STREAM 4.0-4.48 TB/s
    CHECK(4.0e12 > 0.8 * h200.hbm_bandwidth);
    // NT_212: "~370 GB/s effective NVLink bandwidth" with NCCL_ALGO=RING on 8x H100; NCCL_1264: ~376 GB/s P2P.
    const GpuSpec& h100 = find_gpu("h100");
    CHECK(*h100.collective_effective_link_bandwidth * h100.scaleup_links == Approx(370e9).epsilon(0.01));
    CHECK(376e9 < h100.scaleup_bandwidth_per_direction);
    // MLPerf v4.1 system files report the driver's memory (MiB), a little above the vendor's nominal GB.
    for (const GpuSpec& g : gpu_catalog())
        if (g.hbm_reported_bytes) {
            INFO(g.name);
            CHECK(*g.hbm_reported_bytes > g.hbm_capacity_bytes);
            CHECK(*g.hbm_reported_bytes < 1.1 * g.hbm_capacity_bytes);
        }
}

TEST_CASE("NCCL constants match hardware/params.yaml's transcription of NCCL", "[reference-data]") {
    const YAML::Node v2223 = params_yaml()["nccl"]["v2_22_3"];
    const NcclParams hopper = nccl_params(GpuGeneration::Hopper);
    const YAML::Node base = v2223["baseLat_us"]["value"], hw = v2223["hwLat_us"]["value"];
    const char* protocols[] = {"LL", "LL128", "Simple"};
    for (std::size_t i = 0; i < 3; ++i) {
        INFO(protocols[i]);
        CHECK(hopper.ring_base_us[i] == base["Ring"][protocols[i]].as<double>());
        CHECK(hopper.tree_base_us[i] == base["Tree"][protocols[i]].as<double>());
        CHECK(hopper.ring_nvlink_us[i] == hw["NVLINK"]["Ring"][i].as<double>());
        CHECK(hopper.tree_nvlink_us[i] == hw["NVLINK"]["Tree"][i].as<double>());
        CHECK(hopper.ring_net_us[i] == hw["NET"]["Ring"][i].as<double>());
        CHECK(hopper.tree_net_us[i] == hw["NET"]["Tree"][i].as<double>());
        CHECK(hopper.ll_max_bw[i] == v2223["llMaxBws_GBps"]["value"]["Hopper/AMD"][i].as<double>());
        CHECK(hopper.per_channel_tree[i] == v2223["perChMaxTreeBws_GBps"]["value"]["Hopper"][i].as<double>());
        CHECK(hopper.per_channel_tree_ll128[i] == v2223["perChMaxTreeLL128Bws_GBps"]["value"]["Hopper"][i].as<double>());
    }
    CHECK(hopper.nvls_nvlink_us == hw["NVLINK"]["NVLS"][2].as<double>());
    CHECK(hopper.collnet_direct_net_us == hw["NET"]["CollNetDirect"][2].as<double>());
    CHECK(hopper.per_channel_ring_ll128 == v2223["perChMaxRingLL128Bws_GBps"]["value"]["Hopper"][0].as<double>());
    CHECK(hopper.nvlink_effective_gbps ==
          Approx(v2223["link_bw_GBps"]["value"]["SM90_NVLINK_BW_per_link"].as<double>() * 18));

    const YAML::Node head = params_yaml()["nccl"]["head_v2_30_changes"]["value"];
    const NcclParams blackwell = nccl_params(GpuGeneration::Blackwell);
    CHECK(blackwell.tree_base_us[2] == head["baseLat Tree Simple"].as<double>());
    CHECK(blackwell.tree_nvlink_us[2] == head["hwLat NVLINK Tree Simple"].as<double>());
    CHECK(blackwell.tree_net_us[2] == head["hwLat NET Tree Simple"].as<double>());
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(blackwell.ll_max_bw[i] == head["Blackwell llMaxBws"][i].as<double>());
        CHECK(blackwell.per_channel_tree[i] == head["Blackwell perChMaxTreeBws"][i].as<double>());
        CHECK(blackwell.per_channel_tree_ll128[i] == head["Blackwell perChMaxTreeLL128Bws"][i].as<double>());
    }
    CHECK(blackwell.per_channel_ring_ll128 == head["Blackwell perChMaxRingLL128Bws"].as<double>());
    CHECK(blackwell.nvlink_effective_gbps == Approx(head["SM100_NVLINK_BW_per_link"].as<double>() * 18));
    CHECK(nvls_efficiency(GpuGeneration::Blackwell) ==
          Approx(nvls_efficiency(GpuGeneration::Hopper) * head["nvlsEfficiency"]["Blackwell"].as<double>() /
                 head["nvlsEfficiency"]["Hopper"].as<double>()));
    // NT_267 / NT_290: an NDR NIC (50 GB/s line rate) sustains 46-49 GB/s.
    const double ib = LinkEfficiency{}.infiniband * 50;
    CHECK(ib >= 46.0);
    CHECK(ib <= 49.0);
}

TEST_CASE("default prices and power come from prices.yaml", "[reference-data]") {
    const planning::ReferencePrices& prices = planning::reference_prices();
    CHECK(prices.currency == "USD");
    CHECK(prices.price_per_gpu_hour.count("dgx-h100") == 1);
    // Newer parts cost more per GPU-hour; the default for unlisted systems is no more than the newest.
    CHECK(prices.price_per_gpu_hour.at("dgx-h100") < prices.price_per_gpu_hour.at("dgx-h200"));
    CHECK(prices.price_per_gpu_hour.at("dgx-h200") < prices.price_per_gpu_hour.at("dgx-b200"));
    // The non-GPU node draw fits inside DGX H100's 10.2 kW maximum less 8 x 700 W of GPU TDP.
    CHECK(prices.node_watts > 0);
    CHECK(prices.node_watts <= 10200 - 8 * find_gpu("h100").tdp_watts);
    CHECK(prices.pue >= 1.0);
}

TEST_CASE("malformed data files are input errors naming file, line and key", "[reference-data]") {
    // Each case edits one spot of a shipped file; the error must name the temporary file, the line of the edit
    // (the line holding `at`), and say what is wrong and where in the key path.
    struct Case {
        const char* file;
        const char* from;
        const char* to;
        const char* at;
        std::vector<std::string> says;
    };
    const Case cases[] = {
        {"gpus.yaml", "    tdp: {value: 700W", "    tdpp: {value: 700W", "tdpp:",
         {"'gpus[1].tdpp'", "unknown key; did you mean 'tdp'?"}},
        {"gpus.yaml", "{value: 3.35TB/s", "{value: 3.35TB", "3.35TB,",
         {"'gpus[1].hbm_bandwidth.value'", "unknown bandwidth unit 'TB'"}},
        {"gpus.yaml", "tdp: {value: 400W, source: \"NV_DS (conf medium)\"}", "tdp: {value: 400W}",
         "tdp: {value: 400W}", {"'gpus[0].tdp'", "missing required key 'source'"}},
        {"gpus.yaml", "aliases: [mi300, amd-mi300x]", "aliases: [mi300, h100]", "aliases: [mi300, h100]",
         {"'gpus[5].aliases[1]'", "already used by another GPU"}},
        {"nccl.yaml", "nvls_nvlink: {value: 25us", "nvls_nvlink: {value: 25ms", "25ms",
         {"'generations.hopper.nvls_nvlink.value'", "unit 'ms' where this table is written in 'us'"}},
        {"nccl.yaml", "LL: 6.6us, LL128: 14.0us, Simple: 8.4us", "LL: 6.6us, LL128: 14.0us", "ring_base:",
         {"'generations.hopper.ring_base'", "missing required key 'Simple'"}},
        {"prices.yaml", "  dgx-h200: {", "  dgx-h2000: {", "dgx-h2000", {"'price_per_gpu_hour.dgx-h2000'", "unknown system"}},
        {"prices.yaml", "{value: 5.0USD/GPU-hour", "{value: 5.0EUR/GPU-hour", "5.0EUR",
         {"'price_per_gpu_hour.dgx-b200.value'", "where this table is written in 'USD/GPU-hour'"}},
        {"prices.yaml", "node: {value: 2500W", "node: {value: 2500", "node: {value: 2500,",
         {"'power.node.value'", "has no unit"}},
        {"workload_catalog.yaml", "    flops_note: \"per 800x800", "    flop_note: \"per 800x800", "flop_note:",
         {"'workloads[2].flop_note'", "unknown key; did you mean 'flops_note'?"}},
        {"workload_catalog.yaml", "runs_per_result: {value: 5, source: RULES}", "runs_per_result: {value: 5}",
         "runs_per_result: {value: 5}", {"'workloads[2].runs_per_result'", "missing required key 'source'"}},
        {"workload_catalog.yaml", "micro: 32, source: \"MLP41 ssd configs (params.md §4.3)\"}\n      - {system: B200",
         "micro: 32}\n      - {system: B200", "{system: H200-SXM, gpus: 8, dp: 8, micro: 32}",
         {"'workloads[2].published_parallelism[3]'", "missing required key 'source'"}},
        {"workload_catalog.yaml", "{system: H100-SXM, gpus: 64, dp: 64, micro: 72", "{system: H100-SXM, gpus: 65, dp: 64, micro: 72",
         "gpus: 65", {"'workloads[0].published_parallelism[1].gpus'", "does not multiply out to its GPU count",
                      "TP 1 x CP 1 x PP 1 x DP 64 is not 65"}},
        {"workload_catalog.yaml", "base: 3000000, round_to: 25000,", "base: 3000000,", "eval_rule: {interval: batch_linear",
         {"'workloads[0].eval_rule'", "missing required key 'round_to'"}},
        {"workload_catalog.yaml", "aliases: [ssd]", "aliases: [sd]", "aliases: [sd, ",
         {"'workloads[3].aliases[0]'", "already used by another workload"}},
        {"workload_catalog.yaml", "sharp: true, eval_batch: 8,", "sharp: true, eval_batch: eight,", "eval_batch: eight",
         {"'workloads[2].published_parallelism[2].eval_batch'", "or 'shard'"}},
        {"workload_catalog.yaml", "{system: H100-SXM, gpus: 512, dp: 512, micro: 4,",
         "{system: H100-SXM, gpus: 512, dp: 512, eval_batch: 4, micro: 4,", "eval_batch: 4",
         {"'workloads[3].published_parallelism", "on-the-clock evaluation"}},
        {"workload_catalog.yaml", "batch: 32, packing: 1, cuda_graphs: none,", "batch: 32, packing: 1, cuda_graphs: eager,",
         "cuda_graphs: eager", {"'workloads[2].evaluation.cuda_graphs'", "full_iteration"}},
        {"workload_catalog.yaml", "pad_last_batch: true, step: global_batch,", "pad_last_batch: true, step: micro_batch,",
         "step: micro_batch", {"'workloads[1].evaluation.step'", "global_batch"}},
        {"workload_catalog.yaml", "{system: B200, gpus: 8, cp: 2", "{system: b200, gpus: 8, cp: 2", "system: b200",
         {"'workloads[1].published_parallelism[4].system'", "write the GPU catalog name 'B200'"}},
    };
    for (const Case& c : cases) {
        INFO(c.file << ": " << c.to);
        const std::string text = shipped_with(c.file, c.from, c.to);
        const TempFile file(std::string("malformed-") + c.file, text);
        const std::string message = error_of([&] {
            const std::string name = c.file;
            if (name == "gpus.yaml") load_gpu_catalog(file.path);
            else if (name == "nccl.yaml") load_nccl_reference(file.path);
            else if (name == "workload_catalog.yaml") load_workload_catalog(file.path);
            else planning::load_reference_prices(file.path);
        });
        CHECK_THAT(message, Catch::StartsWith(file.path.string() + ":" + std::to_string(line_of(text, c.at)) + ":"));
        for (const std::string& part : c.says) CHECK_THAT(message, Catch::Contains(part));
    }
}
