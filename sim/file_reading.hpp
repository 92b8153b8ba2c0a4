// Reading a whole input file the user named, refusing what would never end or would exhaust memory: a directory
// (reads as empty), /dev/zero, /dev/urandom or a FIFO (read forever), or a file far larger than any input of its
// kind. One place for the checks, so each reader (YAML, CSV, shard files) refuses the same things the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ttsim {

struct InputFileKind {
    const char* expected;     // what the file should be, for the messages: "a YAML file"
    std::uintmax_t max_bytes; // the largest such input accepted
    const char* limit_text;   // the limit as the message says it: "a YAML scenario or topology is at most 16MiB"
};

// The file's bytes, or InputError located at the file: no such file, a directory, not a regular file, larger than
// `kind.max_bytes`, or unreadable.
std::string read_input_file(const std::string& path, const InputFileKind& kind);

// Whether a path the user named exists / is a regular file. Never throws: a name the OS refuses (longer than
// 255 bytes: ENAMETOOLONG, which std::filesystem's throwing overloads raise) or cannot look at is "no", so the
// caller's own "not found" message answers it (CI's fuzz_scenario found the throwing form at def82d3).
bool path_exists(const std::filesystem::path& path) noexcept;
bool regular_file_exists(const std::filesystem::path& path) noexcept;

}  // namespace ttsim
