#include "models/data_dir.hpp"

#include <cstdlib>
#include <string>

#include "sim/errors.hpp"

#ifndef TTSIM_SOURCE_DIR
#error "TTSIM_SOURCE_DIR must be defined by the build (see CMakeLists.txt)"
#endif

namespace ttsim {

std::filesystem::path data_dir() {
    // Read on every call (no cached global): tests and tools may set the variable at run time.
    if (const char* override_dir = std::getenv("TTSIM_DATA_DIR"); override_dir != nullptr && *override_dir != '\0')
        return std::filesystem::path(override_dir);
    return std::filesystem::path(TTSIM_SOURCE_DIR) / "models" / "data";
}

std::filesystem::path data_file(std::string_view relative_path) {
    std::filesystem::path path = data_dir() / std::filesystem::path(std::string(relative_path));
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(path, ignored))
        throw InputError("data file not found: " + path.string() +
                         " (set TTSIM_DATA_DIR to the folder that holds ttsim's models/data files)");
    return path;
}

}  // namespace ttsim
