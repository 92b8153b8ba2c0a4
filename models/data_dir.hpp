// Where ttsim's shipped data (MLPerf results, RCP tables, hardware, NCCL and price files) lives.
// Order: the directory given to set_data_dir() if any (the ttsim program passes $TTSIM_DATA_DIR there at
// start-up, for installed binaries or alternative data), otherwise <source root>/models/data, where the source
// root is baked in at build time (TTSIM_SOURCE_DIR). The library itself reads no environment variable.
#pragma once

#include <filesystem>
#include <string_view>

namespace ttsim {

// Points ttsim at another data directory; an empty path restores the default. Call it at start-up, before
// anything reads data: files already loaded once per process (the GPU catalog, NCCL constants, prices) are not
// read again. Thread-safe.
void set_data_dir(std::filesystem::path dir);

// The data directory; it is not checked for existence here (see data_file).
std::filesystem::path data_dir();

// data_dir() / relative_path, checked to exist as a regular file. A missing file is an InputError that names
// the path and says how to point ttsim at another data directory.
std::filesystem::path data_file(std::string_view relative_path);

}  // namespace ttsim
