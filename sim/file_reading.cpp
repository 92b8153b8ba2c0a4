#include "sim/file_reading.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "sim/errors.hpp"

namespace ttsim {

bool path_exists(const std::filesystem::path& path) noexcept {
    std::error_code ignored;
    return std::filesystem::exists(path, ignored);
}

bool regular_file_exists(const std::filesystem::path& path) noexcept {
    std::error_code ignored;
    return std::filesystem::is_regular_file(path, ignored);
}

std::string read_input_file(const std::string& path, const InputFileKind& kind) {
    const SourceLocation at{path, 0, 0};
    std::error_code ec;   // every check with an error_code: a name the OS refuses is "no such file", not a throw
    const auto status = std::filesystem::status(path, ec);
    // A missing file and a name the OS refuses (too long) are "no such file"; anything else (a parent folder
    // without permission) says what the OS said.
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::filename_too_long &&
        ec != std::errc::not_a_directory)
        throw InputError("cannot open file: " + ec.message(), at);
    if (ec || !std::filesystem::exists(status)) throw InputError("cannot open file: no such file", at);
    if (std::filesystem::is_directory(status))
        throw InputError(std::string("is a directory, not ") + kind.expected, at);
    if (!std::filesystem::is_regular_file(status))
        throw InputError(std::string("is not a regular file (a device or pipe?); expected ") + kind.expected, at);
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kind.max_bytes)
        throw InputError("file is " + std::to_string(size) + " bytes; " + kind.limit_text, at);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot open file", at);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace ttsim
