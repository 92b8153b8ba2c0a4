#include "models/data_dir.hpp"

#include <mutex>
#include <string>

#include "sim/errors.hpp"

#ifndef TTSIM_SOURCE_DIR
#error "TTSIM_SOURCE_DIR must be defined by the build (see CMakeLists.txt)"
#endif

namespace ttsim {
namespace {

struct DataDirOverride {
    std::mutex mutex;
    std::filesystem::path dir;   // empty: the default
};

DataDirOverride& data_dir_override() {
    static DataDirOverride state;
    return state;
}

}  // namespace

void set_data_dir(std::filesystem::path dir) {
    DataDirOverride& state = data_dir_override();
    const std::lock_guard<std::mutex> lock(state.mutex);
    state.dir = std::move(dir);
}

std::filesystem::path data_dir() {
    DataDirOverride& state = data_dir_override();
    {
        const std::lock_guard<std::mutex> lock(state.mutex);
        if (!state.dir.empty()) return state.dir;
    }
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
