// Strict reading of YAML configuration: every value knows its file, line, column and key path, so each
// error names them; unknown keys are rejected (with a "did you mean" hint); quantities carry units.
//
// Usage:
//   ConfigNode root = ConfigNode::load_file("scenarios/x.yaml");
//   root.check_keys({"name", "system", "collective"});          // unknown key -> InputError
//   std::string system = root.required("system").as_string();
//   double bw = root.required("link").required("bandwidth").as_bandwidth();   // bytes/s
//   int gpus = root.optional("gpus") ? root.optional("gpus")->as_int(1, 1 << 24) : 8;
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/errors.hpp"
#include "sim/file_reading.hpp"
#include "sim/input_errors.hpp"
#include "sim/physical_range.hpp"
#include "sim/time.hpp"

namespace ttsim {

// Scenarios and topologies are a few kilobytes; 16 MiB of YAML is no input of ttsim's.
inline constexpr InputFileKind kYamlInputFile{"a YAML file", 16u << 20, "a YAML scenario or topology is at most 16MiB"};

class ConfigNode {
public:
    // Parses a file; syntax errors become InputError with file:line:column. Missing file -> InputError.
    static ConfigNode load_file(const std::string& path);
    // Parses text; `source_name` stands in for the file name in messages.
    static ConfigNode load_string(const std::string& text, const std::string& source_name);

    // Mapping access. `required` fails with "missing key"; `optional` returns nullopt when absent.
    ConfigNode required(std::string_view key) const;
    std::optional<ConfigNode> optional(std::string_view key) const;
    bool has(std::string_view key) const;
    // Rejects any key of this mapping not in `allowed` (also fails if this node is not a mapping).
    void check_keys(std::initializer_list<std::string_view> allowed) const;
    void check_keys(const std::vector<std::string>& allowed) const;
    // The same, keeping one error per unknown or duplicate key in `errors` instead of throwing the first (a reader
    // that reports every mistake of a file in one run: sim/input_errors.hpp).
    void check_keys(const std::vector<std::string>& allowed, InputErrors& errors) const;
    std::vector<std::string> keys() const;  // in file order

    // Sequence access (fails if not a sequence).
    std::vector<ConfigNode> items() const;

    bool is_map() const;
    bool is_sequence() const;
    bool is_scalar() const;

    // Scalars. Each checks the type and the range and fails with location and key path.
    std::string as_string() const;
    std::string as_choice(std::initializer_list<std::string_view> choices) const;
    std::string as_choice(std::span<const std::string_view> choices) const;
    bool as_bool() const;
    std::int64_t as_int(std::int64_t min, std::int64_t max) const;
    double as_double(double min, double max) const;       // finite plain number in [min, max]
    std::uint64_t as_bytes() const;                         // "8GiB"
    double as_bandwidth() const;                            // "400Gb/s" -> bytes/s
    SimTime as_time() const;                                // "1.5us"
    double as_time_seconds() const;                         // "90min" -> seconds
    double as_power() const;                                // "700W" -> watts
    // The same, refused at this node unless inside a hardware figure's physical range (sim/physical_range.hpp).
    double as_bandwidth(const PhysicalRange& range) const;
    SimTime as_time(const PhysicalRange& range) const;      // range in seconds
    double as_power(const PhysicalRange& range) const;
    double as_flop_rate() const;                            // "989.4TFLOP/s" -> FLOP/s
    double as_number_in_unit(std::string_view unit) const;  // "6.6us" with unit "us" -> 6.6 (no conversion)

    // Throws InputError pointing at this node.
    [[noreturn]] void fail(const std::string& message) const;

    // Runs `body`, a library call fed from this node's value, and re-throws its InputError at this node, unless
    // the error already says where it is (a file location, or a key of its own: TTSIM_MAX_GPUS names itself).
    template <typename Body>
    auto feeding(Body body) const {
        try {
            return body();
        } catch (const InputError& e) {
            rethrow_at_key(e, *this);
        }
    }
    // The same for a library call fed from several keys of this mapping: the error is re-thrown at the key
    // holding the Field it names (scenario_key), when this mapping has that key, else at `fallback`.
    template <typename Body>
    auto feeding_keys(const ConfigNode& fallback, Body body) const {
        try {
            return body();
        } catch (const InputError& e) {
            rethrow_at_key(e, fallback);
        }
    }

    const std::string& path() const { return path_; }  // key path, e.g. "collective.sizes[2]"
    SourceLocation location() const;
    const YAML::Node& raw() const { return node_; }

private:
    ConfigNode(YAML::Node node, std::string file, std::string path) : node_(std::move(node)),
        file_(std::move(file)), path_(std::move(path)) {}
    std::string scalar_text() const;
    void require_plain_number(const std::string& text, std::string_view what, bool parses) const;
    [[noreturn]] void rethrow_at_key(const InputError& error, const ConfigNode& fallback) const;
    YAML::Node node_;
    std::string file_;
    std::string path_;
};

// The scenario key that sets `field` (the YAML front end's one table of names), or empty when no scenario
// sets it.
std::string_view scenario_key(Field field);

}  // namespace ttsim
