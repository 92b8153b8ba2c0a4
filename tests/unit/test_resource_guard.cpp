#include <catch2/catch.hpp>

#include <cstdlib>
#include <csignal>

#include <signal.h>

#include "sim/errors.hpp"
#include "sim/resource_guard.hpp"
#include "topologies/presets.hpp"
#include "tools/cli/interrupt.hpp"

using namespace ttsim;

TEST_CASE("cost estimate grows with GPUs, links and flows and saturates instead of overflowing", "[resources]") {
    const CostEstimate small = estimate_simulation_cost({.gpus = 8, .links = 0, .flows = 0});
    CHECK(small.bytes == 8 * kBytesPerGpu + 8 * kLinksPerGpuEstimate * kBytesPerLink + 8 * kBytesPerFlow);
    const CostEstimate more_flows = estimate_simulation_cost({.gpus = 8, .links = 0, .flows = 1000});
    CHECK(more_flows.bytes > small.bytes);
    CHECK(more_flows.seconds > small.seconds);
    const CostEstimate absurd = estimate_simulation_cost({.gpus = 100'000'000, .links = 0,
                                                          .flows = std::int64_t{1} << 62});
    CHECK(absurd.bytes == ~std::uint64_t{0});
    CHECK(absurd.seconds > 1e9);
    const CostEstimate negative = estimate_simulation_cost({.gpus = -5, .links = -1, .flows = -1});
    CHECK(negative.bytes == 0);
}

TEST_CASE("check_resources refuses 10^8 GPUs up front, with the estimate and the limit", "[resources]") {
    const ResourceLimits limits;  // defaults
    CHECK(limits.max_gpus == 262'144);
    CHECK(limits.max_memory_bytes == (4ULL << 30));
    CHECK_NOTHROW(check_resources({.gpus = 1024}, limits, "cluster.gpus"));
    CHECK_NOTHROW(check_resources({.gpus = 65'536, .flows = 65'536}, limits, "cluster.gpus"));
    CHECK_THROWS_WITH(check_resources({.gpus = 100'000'000}, limits, "cluster.gpus"),
                      Catch::Contains("'cluster.gpus'") && Catch::Contains("100000000 GPUs exceed") &&
                          Catch::Contains("262144") && Catch::Contains("TTSIM_MAX_GPUS") &&
                          Catch::Contains("estimated memory"));
    // An all-to-all on 65,536 GPUs: 4.3e9 flows, about 2 TiB.
    const std::int64_t n = 65'536;
    CHECK_THROWS_WITH(check_resources({.gpus = n, .flows = n * (n - 1)}, limits, "alltoall"),
                      Catch::Contains("would need about") && Catch::Contains("TiB") &&
                          Catch::Contains("above the limit of 4.0GiB") && Catch::Contains("TTSIM_MAX_MEMORY"));
    // Raised limits let it through.
    const ResourceLimits raised = limits.with_max_memory("8TiB", "--max-memory");
    CHECK_NOTHROW(check_resources({.gpus = n, .flows = n * (n - 1)}, raised, "alltoall"));
}

TEST_CASE("sweep points count against the memory limit, GPU requests go to the guard before the preset cap",
          "[resources]") {
    const ResourceLimits limits;
    CHECK(estimate_simulation_cost({.points = 1000}).bytes == 1000 * kBytesPerSweepPoint);
    CHECK_NOTHROW(check_resources({.points = 100'000}, limits, "gpus"));
    CHECK_THROWS_WITH(check_resources({.points = 2'000'000}, limits, "gpus"),
                      Catch::Contains("(2000000 sweep points)") && Catch::Contains("TTSIM_MAX_MEMORY"));
    CHECK(checked_gpu_request(262'144) == 262'144);   // the largest preset count (kMaxPresetGpus)
    CHECK_THROWS_WITH(checked_gpu_request(262'152), Catch::Contains("'gpus'") && Catch::Contains("262144 GPUs"));
    CHECK_THROWS_WITH(checked_gpu_request(100'000'000, Field::max_gpus),
                      Catch::Contains("'max_gpus'") && Catch::Contains("estimated memory") &&
                          Catch::Contains("TTSIM_MAX_GPUS"));
    CHECK_THROWS_WITH(checked_gpu_request(kMaxRequestableGpus), Catch::Contains("exceed the simulation limit"));
}

TEST_CASE("limit overrides are validated and name their source", "[resources]") {
    const ResourceLimits limits;
    CHECK(limits.with_max_memory("16GiB", "--max-memory").max_memory_bytes == (16ULL << 30));
    CHECK(limits.with_max_gpus("1000000", "--max-gpus").max_gpus == 1'000'000);
    CHECK_THROWS_WITH(limits.with_max_memory("16", "--max-memory"),
                      Catch::Contains("'--max-memory'") && Catch::Contains("no unit"));
    CHECK_THROWS_WITH(limits.with_max_memory("1KiB", "TTSIM_MAX_MEMORY"), Catch::Contains("'TTSIM_MAX_MEMORY'"));
    CHECK_THROWS_WITH(limits.with_max_gpus("lots", "TTSIM_MAX_GPUS"), Catch::Contains("'TTSIM_MAX_GPUS'"));
    CHECK_THROWS_AS(limits.with_max_gpus("0", "--max-gpus"), InputError);
    CHECK_THROWS_AS(limits.with_max_gpus("1.5", "--max-gpus"), InputError);
    CHECK_THROWS_AS(limits.with_max_gpus("nan", "--max-gpus"), InputError);
    CHECK_THROWS_AS(limits.with_max_gpus("1e300", "--max-gpus"), InputError);
}

TEST_CASE("limits come from TTSIM_MAX_GPUS and TTSIM_MAX_MEMORY", "[resources]") {
    ::setenv("TTSIM_MAX_GPUS", "16", 1);
    ::setenv("TTSIM_MAX_MEMORY", "64MiB", 1);
    const ResourceLimits limits = ResourceLimits::from_environment();
    CHECK(limits.max_gpus == 16);
    CHECK(limits.max_memory_bytes == (64ULL << 20));
    CHECK_THROWS_WITH(check_resources({.gpus = 32}, "--gpus"), Catch::Contains("limit of 16 GPUs"));
    ::setenv("TTSIM_MAX_GPUS", "sixteen", 1);
    CHECK_THROWS_WITH(ResourceLimits::from_environment(), Catch::Contains("TTSIM_MAX_GPUS"));
    ::unsetenv("TTSIM_MAX_GPUS");
    ::unsetenv("TTSIM_MAX_MEMORY");
    CHECK(ResourceLimits::from_environment().max_gpus == ResourceLimits{}.max_gpus);
}

TEST_CASE("describe_bytes is short and readable", "[resources]") {
    CHECK(describe_bytes(0) == "0B");
    CHECK(describe_bytes(4ULL << 30) == "4.0GiB");
    CHECK(describe_bytes(300ULL << 20) == "300MiB");
    CHECK(describe_bytes(~0ULL) == "16EiB");
}

TEST_CASE("SIGINT only sets the interrupted flag while a guard is installed", "[interrupt]") {
    using namespace ttsim::cli;
    clear_interrupt();
    struct sigaction before {};
    ::sigaction(SIGINT, nullptr, &before);
    {
        InterruptGuard guard;
        CHECK_FALSE(interrupted());
        std::raise(SIGINT);  // the handler sets the flag; the process goes on
        CHECK(interrupted());
        clear_interrupt();
        CHECK_FALSE(interrupted());
        request_interrupt();
        CHECK(interrupted());
    }
    // The guard restored the previous disposition (whatever the test runner had installed).
    struct sigaction after {};
    ::sigaction(SIGINT, nullptr, &after);
    CHECK(after.sa_handler == before.sa_handler);
    clear_interrupt();
}

// Hostile files given as a scenario or topology (sim/config.cpp load_file / load_string).
#include "sim/config.hpp"

TEST_CASE("hostile files are refused quickly with a location", "[config][hostile]") {
    CHECK_THROWS_WITH(ConfigNode::load_file("/dev/zero"), Catch::Contains("/dev/zero") &&
                                                              Catch::Contains("not a regular file"));
    CHECK_THROWS_WITH(ConfigNode::load_file("/tmp"), Catch::Contains("is a directory"));
    CHECK_THROWS_WITH(ConfigNode::load_file("/no/such/file.yaml"), Catch::Contains("cannot open"));
    CHECK_THROWS_WITH(ConfigNode::load_string(std::string("a: 1\nb: x\0y\n", 12), "n.yaml"),
                      Catch::Contains("n.yaml:2:5") && Catch::Contains("NUL byte"));
    // Deep nesting: yaml-cpp's depth guard turns it into a syntax error, not a stack overflow.
    CHECK_THROWS_AS(ConfigNode::load_string(std::string(100000, '['), "deep.yaml"), InputError);
}

TEST_CASE("a second YAML document is refused, not silently ignored", "[config][hostile]") {
    // The error points at the second document marker, line 2.
    CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\n---\nb: 2\n", "m.yaml"),
                      Catch::Contains("m.yaml:2") && Catch::Contains("more than one YAML document"));
    CHECK_NOTHROW(ConfigNode::load_string("---\na: 1\n", "one.yaml"));
    CHECK_NOTHROW(ConfigNode::load_string("a: 1\n...\n", "end.yaml"));
}

#include "sim/units.hpp"

TEST_CASE("durations and powers that overflow to infinity are refused", "[units][hostile]") {
    CHECK_THROWS_WITH(units::parse_time_seconds("1e308h"), Catch::Contains("too large"));
    CHECK_THROWS_WITH(units::parse_power("1e308MW"), Catch::Contains("too large"));
    CHECK(units::parse_time_seconds("90min") == Approx(5400));
    CHECK(units::parse_power("1.2kW") == Approx(1200));
}

TEST_CASE("document markers: one document per file, no hang on stray flow ends", "[config][hostile]") {
    CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\n...\nb: 2\n", "e.yaml"),
                      Catch::Contains("e.yaml:3") && Catch::Contains("after the end"));
    CHECK_NOTHROW(ConfigNode::load_string("%YAML 1.2\n---\na: 1\n", "d.yaml"));
    CHECK_NOTHROW(ConfigNode::load_string("# c\n--- # start\na: |\n  ---x\n", "c.yaml"));
    // Found by fuzz_scenario: yaml-cpp's LoadAll looped forever on this; now a prompt InputError.
    CHECK_THROWS_AS(ConfigNode::load_string(", nic: xdr, sharp: off}\ncollective: {op: alltoall}\n", "h.yaml"),
                    InputError);
}

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/cli/scenario_kinds.hpp"

TEST_CASE("a Ctrl-C caught while the scenario was read stops every kind before any output", "[interrupt]") {
    // `ttsim run` installs its guard before reading the file; the flag must survive into each kind's own guard,
    // and the kind must stop before creating --out (no empty directory, no partial file).
    using namespace ttsim::cli;
    const auto out_dir = std::filesystem::temp_directory_path() / "ttsim-test-interrupt-before-start";
    std::filesystem::remove_all(out_dir);
    using Handler = int (*)(const ttsim::ConfigNode&, const ScenarioContext&, std::ostream&);
    const std::pair<const char*, Handler> kinds[] = {{"scenarios/default.yaml", run_scaling_study_scenario},
                                                     {"scenarios/plan-deadline-bert.yaml", run_plan_scenario},
                                                     {"scenarios/collective-h100-nvls.yaml", run_collective_scenario}};
    for (const auto& [file, handler] : kinds) {
        INFO(file);
        const auto path = std::filesystem::path(TTSIM_SOURCE_DIR) / file;
        REQUIRE(std::filesystem::exists(path));
        const ttsim::ConfigNode root = ttsim::ConfigNode::load_file(path.string());
        ScenarioContext context;
        context.file = path.string();
        context.out_dir = out_dir.string();
        std::ostringstream out;
        clear_interrupt();
        {
            InterruptGuard outer;   // as `ttsim run` holds it
            request_interrupt();    // Ctrl-C while reading
            CHECK(handler(root, context, out) == kExitInterrupted);
        }
        CHECK(out.str().empty());
        CHECK_FALSE(std::filesystem::exists(out_dir));
        clear_interrupt();
    }
}

TEST_CASE("input files: a name the OS refuses, a device and an oversized file are InputErrors at the file",
          "[config][hostile]") {
    // ENAMETOOLONG from std::filesystem's throwing overloads escaped as an internal error (CI's fuzz_scenario).
    const std::string long_name(300, 'a');
    constexpr InputFileKind kTiny{"a test file", 4, "a test file is at most 4 bytes"};
    CHECK_THROWS_WITH(read_input_file(long_name, kTiny), Catch::Contains("no such file"));
    CHECK_THROWS_WITH(read_input_file("/dev/zero", kTiny), Catch::Contains("expected a test file"));
    CHECK_THROWS_WITH(read_input_file("/tmp", kTiny), Catch::Contains("is a directory, not a test file"));
    const std::string path = "test_read_input_file.tmp";
    std::ofstream(path) << "12345";
    CHECK_THROWS_WITH(read_input_file(path, kTiny),
                      Catch::Contains(path + ": file is 5 bytes; a test file is at most 4 bytes"));
    std::ofstream(path) << "1234";
    CHECK(read_input_file(path, kTiny) == "1234");
    std::filesystem::remove(path);
    CHECK_THROWS_WITH(ConfigNode::load_file(long_name + ".yaml"), Catch::Contains("no such file"));
}
