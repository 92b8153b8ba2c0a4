// GPU catalog: complete, consistent entries, lookup by alias, unknown names list the valid ones, variants.
#include <catch2/catch.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

// The values themselves are checked against hardware/params.yaml and measured figures in
// test_reference_data.cpp; here, the catalog's shape and the relations between its fields.
TEST_CASE("catalog entries are complete and consistent", "[catalog]") {
    REQUIRE(gpu_names() == std::vector<std::string>{"A100-SXM", "H100-SXM", "H200-SXM", "B200", "GB200", "MI300X",
                                                       "MI325X"});
    for (const GpuSpec& g : gpu_catalog()) {
        INFO(g.name);
        CHECK(g.idle_watts >= 0.10 * g.tdp_watts);   // idle is an estimate of 10-15% of TDP
        CHECK(g.idle_watts <= 0.15 * g.tdp_watts);
        CHECK_NOTHROW(validate_gpu_spec(g));
        CHECK_FALSE(g.hypothetical);
        // Bidirectional is both directions of the same links; FP8 runs at twice BF16's dense rate where present.
        CHECK(g.scaleup_bandwidth_bidirectional == Approx(2 * g.scaleup_bandwidth_per_direction));
        if (g.fp8_dense_flops) CHECK(*g.fp8_dense_flops == Approx(2 * g.bf16_dense_flops).epsilon(1e-3));
        // What the collective library assumes a link delivers is below its share of the line rate.
        if (g.collective_effective_link_bandwidth)
            CHECK(*g.collective_effective_link_bandwidth * g.scaleup_links < g.scaleup_bandwidth_per_direction);
    }
    CHECK(find_gpu("A100-SXM").fp8_dense_flops == std::nullopt);   // no FP8 tensor cores on Ampere
    CHECK_FALSE(find_gpu("MI300X").scaleup_switched);               // Infinity Fabric is point to point
    CHECK(find_gpu("GB200").gpus_per_scaleup_domain == 72);         // NVL72
    // MI325X is MI300X's compute with more and faster HBM.
    CHECK(find_gpu("MI325X").bf16_dense_flops == find_gpu("MI300X").bf16_dense_flops);
    CHECK(find_gpu("MI325X").hbm_bandwidth > find_gpu("MI300X").hbm_bandwidth);
}

TEST_CASE("catalog lookup accepts aliases and any case", "[catalog]") {
    const GpuSpec* h100 = &find_gpu("H100-SXM");
    for (const char* alias : {"h100", "H100", "h100-sxm", "h100-sxm5", "H100_SXM5_80GB", "h100 sxm"})
        CHECK(&find_gpu(alias) == h100);
    CHECK(find_gpu("h200").name == "H200-SXM");
    CHECK(find_gpu("b200").name == "B200");
    CHECK(find_gpu("gb200-nvl72").name == "GB200");
    CHECK(find_gpu("a100").name == "A100-SXM");
    CHECK(find_gpu("mi300").name == "MI300X");
    CHECK(find_gpu("mi325").name == "MI325X");
}

TEST_CASE("unknown GPU names are input errors that list the valid names", "[catalog]") {
    try {
        find_gpu("H800");
        FAIL("expected InputError");
    } catch (const InputError& e) {
        const std::string message = e.what();
        CHECK(message.find("H800") != std::string::npos);
        for (const std::string& name : gpu_names()) CHECK(message.find(name) != std::string::npos);
    }
}

TEST_CASE("hypothetical variants copy a catalog entry and can be validated", "[catalog]") {
    GpuSpec fat = make_variant(find_gpu("h100"), "H100-fat-NVLink");
    fat.scaleup_bandwidth_per_direction *= 2;
    CHECK(fat.hypothetical);
    CHECK(fat.name == "H100-fat-NVLink");
    CHECK(fat.bf16_dense_flops == find_gpu("h100").bf16_dense_flops);
    CHECK(find_gpu("h100").scaleup_bandwidth_per_direction == Approx(450e9));   // the catalog is untouched
    CHECK_NOTHROW(validate_gpu_spec(fat));

    GpuSpec broken = fat;
    broken.hbm_bandwidth = 0;
    CHECK_THROWS_AS(validate_gpu_spec(broken), InputError);
    broken = fat;
    broken.idle_watts = broken.tdp_watts + 1;
    CHECK_THROWS_AS(validate_gpu_spec(broken), InputError);
}
