// Result files are never left half-written: content goes to "<path>.tmp-<pid>" and is renamed into place
// (rename(2) is atomic within one file system), so a reader sees the old file or the new one, never a part.
#pragma once

#include <string>

namespace ttsim::cli {

// Writes `content` to `path` atomically. Creates the parent directory if missing. InputError on failure
// (an unwritable --out directory is the user's to fix).
void write_file_atomically(const std::string& path, const std::string& content);

// Creates `dir` (and parents) if needed; InputError naming it if it cannot be created or is not a directory.
void ensure_directory(const std::string& dir);

}  // namespace ttsim::cli
