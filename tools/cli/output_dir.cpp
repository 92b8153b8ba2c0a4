#include "tools/cli/output_dir.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "sim/errors.hpp"
#include "tools/cli/atomic_file.hpp"

namespace ttsim::cli {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& flag, const std::string& message) {
    throw InputError(message, SourceLocation{}, flag);
}

}  // namespace

OutputDir::OutputDir(std::string dir, std::string flag) : dir_(std::move(dir)), flag_(std::move(flag)) {
    // "DIR/" and "DIR" are the same folder (`collective --out DIR/` used to be taken for a file name).
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
    std::error_code ec;
    const fs::file_status status = fs::status(dir_, ec);
    if (fs::exists(status)) {
        if (fs::is_regular_file(status))
            refuse(flag_, "'" + dir_ + "' is a file; --out names a folder, which receives the result files");
        if (!fs::is_directory(status)) refuse(flag_, "'" + dir_ + "' exists and is not a folder");
        if (::access(dir_.c_str(), W_OK | X_OK) != 0) refuse(flag_, "cannot write into folder '" + dir_ + "'");
        return;
    }
    // Missing: it will be created, so its nearest existing ancestor must be a folder we may write into.
    fs::path ancestor = fs::path(dir_).parent_path();
    top_missing_ = dir_;
    while (!ancestor.empty() && !fs::exists(ancestor, ec)) {
        top_missing_ = ancestor.string();
        ancestor = ancestor.parent_path();
    }
    if (ancestor.empty()) ancestor = ".";
    if (!fs::is_directory(ancestor, ec))
        refuse(flag_, "cannot create output folder '" + dir_ + "': '" + ancestor.string() + "' is not a folder");
    if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
        refuse(flag_, "cannot create output folder '" + dir_ + "': '" + ancestor.string() + "' is not writable");
}

const std::string& OutputDir::create() {
    std::error_code ec;
    if (!created_ && !top_missing_.empty() && !fs::exists(dir_, ec)) {
        ensure_directory(dir_);
        created_ = true;
    }
    return dir_;
}

void OutputDir::write(const std::string& name, const std::string& content) {
    create();
    write_file_atomically(dir_ + "/" + name, content);
    written_.push_back(dir_ + "/" + name);
}

OutputDir::~OutputDir() {
    if (keep_) return;
    std::error_code ec;   // best effort while an error is on its way out: never throw from here
    if (created_) {
        fs::remove_all(top_missing_, ec);   // made by this run (parents included): all in it is this run's
        return;
    }
    for (const std::string& file : written_) fs::remove(file, ec);
}

}  // namespace ttsim::cli
