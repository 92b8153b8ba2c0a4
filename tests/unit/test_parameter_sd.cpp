// ComputeProfile::parameter_sd: the relative step-time standard deviation a fit's parameter uncertainty gives a
// profile. Optional in the profiles YAML (0 = unknown, and then not written), kept through a round trip, refused
// below 0 with the file, line and key named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/compute/compute_profile.hpp"
#include "sim/errors.hpp"

using namespace ttsim;

namespace {
// A one-profile lumped file; `extra` is added under the profile (indented by the caller).
std::filesystem::path write_profiles(const std::string& name, const std::string& extra) {
    const auto file = std::filesystem::temp_directory_path() / name;
    std::ofstream(file) << "format: ttsim-compute-profiles-1\n"
                           "profiles:\n"
                           "  - workload: bert\n"
                           "    gpu: H100-SXM\n"
                           "    max_flops_fraction: 0.4\n"
                           "    half_saturation_samples: 1\n"
                           "    fixed_step_seconds: 0.005\n"
                        << extra;
    return file;
}

std::string read(const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("parameter_sd: absent is 0, read, written and read back", "[calibration]") {
    const auto plain = write_profiles("ttsim-test-sd-plain.yaml", "");
    const ProfileSet without = ProfileSet::load_file(plain);
    CHECK(without.all().begin()->second.parameter_sd == 0.0);
    // 0 (unknown) is not written, so files without the key stay as they were.
    without.save_file(plain);
    CHECK(read(plain).find("parameter_sd") == std::string::npos);
    std::filesystem::remove(plain);

    const auto file = write_profiles("ttsim-test-sd.yaml", "    parameter_sd: 0.035\n");
    ProfileSet set = ProfileSet::load_file(file);
    CHECK(set.all().begin()->second.parameter_sd == 0.035);
    set.save_file(file);
    CHECK(read(file).find("    parameter_sd: 0.035\n") != std::string::npos);
    CHECK(ProfileSet::load_file(file).all().begin()->second.parameter_sd == 0.035);
    std::filesystem::remove(file);
}

TEST_CASE("parameter_sd: a transferred profile keeps its source's", "[calibration]") {
    ComputeProfile source;
    source.workload = "bert";
    source.gpu = "H100-SXM";
    source.parameter_sd = 0.02;
    CHECK(transfer_profile(source, find_gpu("B200")).parameter_sd == 0.02);
}

TEST_CASE("parameter_sd: a negative value is refused naming file, line and key", "[calibration]") {
    const auto file = write_profiles("ttsim-test-sd-negative.yaml", "    parameter_sd: -0.01\n");
    try {
        ProfileSet::load_file(file);
        FAIL("a negative parameter_sd was accepted");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK(what.find("ttsim-test-sd-negative.yaml") != std::string::npos);
        CHECK(what.find(":8") != std::string::npos);   // the key's line
        CHECK(what.find("parameter_sd") != std::string::npos);
    }
    std::filesystem::remove(file);
}
