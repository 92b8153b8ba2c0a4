#include "tools/cli/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/errors.hpp"

namespace ttsim::cli {

void ensure_directory(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir, ec))
        throw InputError("cannot create output directory '" + dir + "'" + (ec ? ": " + ec.message() : ""),
                         SourceLocation{}, "--out");
}

void write_file_atomically(const std::string& path, const std::string& content) {
    const std::filesystem::path target(path);
    if (target.has_parent_path()) ensure_directory(target.parent_path().string());
    const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError("cannot write '" + temporary + "'", SourceLocation{}, "--out");
        out << content;
        out.flush();
        if (!out) {
            std::remove(temporary.c_str());
            throw InputError("failed writing '" + temporary + "' (disk full?)", SourceLocation{}, "--out");
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::remove(temporary.c_str());
        throw InputError("cannot move result into place at '" + path + "'", SourceLocation{}, "--out");
    }
}

}  // namespace ttsim::cli
