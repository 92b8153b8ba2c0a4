// Reading ttsim's reference data files (models/data/*.yaml). Every value there sits next to its source:
//   tdp: {value: 700W, source: "GLK_H100; NV_DS"}
// and tables carry one source for their columns:
//   ll_max_bw: {one_node: 141GB/s, two_nodes: 45GB/s, more_nodes: 35GB/s, source: "NCCL_2223 llMaxBws"}
// These helpers enforce that shape through the strict loader (sim/config.hpp): a missing or unknown key, an empty
// source or a wrong unit is an InputError naming file:line:column and the key path.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string_view>

#include "sim/config.hpp"

namespace ttsim {

// The `value` of the sourced entry `key` of `parent` ({value, source}, source a non-empty string).
ConfigNode sourced(const ConfigNode& parent, std::string_view key);

// The sourced table `key` of `parent`: a mapping of exactly `columns` plus a non-empty `source`.
ConfigNode sourced_table(const ConfigNode& parent, std::string_view key,
                         std::initializer_list<std::string_view> columns);

// A reference data file, parsed; its top level must hold exactly
// `top_level_keys` (besides `about`, a required one-line description of the file).
ConfigNode load_reference_file(const std::filesystem::path& path, std::initializer_list<std::string_view> top_level_keys);

}  // namespace ttsim
