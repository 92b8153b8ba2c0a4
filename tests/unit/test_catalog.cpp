// GPU catalog: values match params.md §1, lookup by alias, unknown names list the valid ones, variants.
#include <catch2/catch.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

TEST_CASE("catalog holds the params.md accelerator figures", "[catalog]") {
    const GpuSpec& h100 = find_gpu("H100-SXM");
    CHECK(h100.bf16_dense_flops == Approx(989.4e12));
    CHECK(*h100.fp8_dense_flops == Approx(1978.9e12));
    CHECK(h100.scaleup_bandwidth_per_direction == Approx(450e9));
    CHECK(h100.scaleup_bandwidth_bidirectional == Approx(900e9));
    CHECK(*h100.collective_effective_link_bandwidth * h100.scaleup_links == Approx(370.8e9));
    CHECK(h100.hbm_capacity_bytes == Approx(80e9));
    CHECK(h100.hbm_bandwidth == Approx(3.35e12));
    CHECK(h100.gpus_per_scaleup_domain == 8);
    CHECK(h100.nics_per_gpu == 1);
    CHECK(h100.nic_bandwidth_per_direction == Approx(50e9));
    CHECK(h100.tdp_watts == 700);

    const GpuSpec& b200 = find_gpu("B200");
    CHECK(b200.bf16_dense_flops == Approx(2250e12));
    CHECK(*b200.fp8_dense_flops == Approx(4500e12));
    CHECK(b200.scaleup_bandwidth_per_direction == Approx(900e9));
    CHECK(b200.scaleup_bandwidth_bidirectional == Approx(1800e9));
    CHECK(*b200.collective_effective_link_bandwidth * b200.scaleup_links == Approx(721.8e9));

    CHECK(find_gpu("H200-SXM").hbm_capacity_bytes == Approx(141e9));
    CHECK(find_gpu("GB200").gpus_per_scaleup_domain == 72);
    CHECK(find_gpu("A100-SXM").fp8_dense_flops == std::nullopt);
    const GpuSpec& mi300x = find_gpu("MI300X");
    CHECK(mi300x.bf16_dense_flops == Approx(1307.4e12));
    CHECK_FALSE(mi300x.scaleup_switched);
    CHECK(mi300x.scaleup_links == 7);
    CHECK(mi300x.scaleup_bandwidth_per_direction == Approx(448e9));

    REQUIRE(gpu_catalog().size() == 6);
    for (const GpuSpec& g : gpu_catalog()) {
        INFO(g.name);
        CHECK(g.idle_watts >= 0.10 * g.tdp_watts);   // idle is an estimate of 10-15% of TDP
        CHECK(g.idle_watts <= 0.15 * g.tdp_watts);
        CHECK_NOTHROW(validate_gpu_spec(g));
        CHECK_FALSE(g.hypothetical);
    }
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
