// libFuzzer target: the scenario loader. Text goes through ConfigNode::load_string and then through the same
// validation `ttsim run` does for a `scenario: collective` file (read_cluster, read_collective_section, the
// output section) or a `sweep` / `scaling-study` / `plan` file (read_sweep_scenario, read_plan_scenario), or — when the document has no `scenario:` key — through the YAML topology loader
// (load_topology, which builds and checks connectivity). Only InputError may come out; any other exception,
// a crash, a sanitizer report or a hang is a finding.
//
// Nothing is simulated. To keep each input fast, documents whose whole numbers are large enough to build big
// clusters (above kMaxFuzzCount, and small enough that a range check would not refuse them anyway) are
// skipped: that is the resource guard's job in the real program (sim/resource_guard.hpp), and big-but-valid
// clusters are exercised by the unit tests, not here. `topology_file` is validated (existence), and loaded only
// when the collective names an algorithm or protocol (the applicability check of read_collective_scenario).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/planning/sweep_config.hpp"
#include "sim/config.hpp"
#include "sim/errors.hpp"
#include "tools/cli/cluster_spec.hpp"
#include "tools/cli/collective_sweep.hpp"
#include "topologies/yaml_topology.hpp"

namespace {

constexpr long long kMaxFuzzCount = 16;
constexpr long long kRangeCheckedAbove = 1'000'000;  // every count key the loaders read is capped at <= 10^6

// True when some scalar is a whole number in (kMaxFuzzCount, kRangeCheckedAbove], or a range "x[a-b]" spans
// more than kMaxFuzzCount: such inputs may legitimately build a cluster too large for a fuzzing iteration.
bool too_big(const YAML::Node& node, int depth = 0) {
    if (depth > 64) return true;  // pathological nesting: yaml-cpp's own recursion is not what we test
    if (node.IsScalar()) {
        const std::string& s = node.Scalar();
        if (s.size() > 32) return false;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (end != s.c_str() && *end == '\0' && v > kMaxFuzzCount && v <= kRangeCheckedAbove) return true;
        return false;
    }
    if (node.IsSequence() || node.IsMap()) {
        for (const auto& item : node) {
            if (node.IsMap()) {
                if (too_big(item.first, depth + 1) || too_big(item.second, depth + 1)) return true;
            } else if (too_big(item, depth + 1)) {
                return true;
            }
        }
    }
    return false;
}

void validate_collective(const ttsim::ConfigNode& root) {
    using namespace ttsim::cli;
    const CollectiveSweepSpec spec = read_collective_scenario(root);
    (void)spec.cluster.describe(true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 64 * 1024) return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const ttsim::ConfigNode root = ttsim::ConfigNode::load_string(text, "fuzz.yaml");
        if (too_big(root.raw())) return 0;
        if (root.is_map() && root.has("scenario")) {
            const std::string kind = root.required("scenario").as_string();
            if (kind == "collective") validate_collective(root);
            else if (kind == "sweep" || kind == "scaling-study") (void)ttsim::planning::read_sweep_scenario(root);
            else if (kind == "plan") (void)ttsim::planning::read_plan_scenario(root);
        } else {
            (void)ttsim::load_topology(root);
        }
    } catch (const ttsim::InputError&) {
    }
    // Anything else escapes: libFuzzer reports an uncaught exception as a crash with the input.
    return 0;
}
