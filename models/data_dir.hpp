// Where ttsim's shipped data (MLPerf results, RCP tables, hardware parameters) lives.
// Order: the environment variable TTSIM_DATA_DIR if set and non-empty (for installed binaries or alternative
// data), otherwise <source root>/models/data, where the source root is baked in at build time (TTSIM_SOURCE_DIR).
#pragma once

#include <filesystem>
#include <string_view>

namespace ttsim {

// The data directory; it is not checked for existence here (see data_file).
std::filesystem::path data_dir();

// data_dir() / relative_path, checked to exist as a regular file. A missing file is an InputError that names
// the path and says how to point ttsim at another data directory.
std::filesystem::path data_file(std::string_view relative_path);

}  // namespace ttsim
