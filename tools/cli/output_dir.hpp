// `--out DIR`, with one meaning for every command: a folder that receives results.csv, results.json and, where
// they apply, trace.json and plots. The folder is checked when the flags are read (an existing regular file, or
// a path under one, is refused naming --out: exit 2, nothing written) but created only when the first file is
// written, after the run; a command that fails (or is interrupted before it writes) leaves no empty or partial
// folder behind: on an error the files written through this object are removed again, and so is the folder
// when this object created it.
#pragma once

#include <string>
#include <vector>

namespace ttsim::cli {

class OutputDir {
public:
    // InputError naming `flag` when `dir` cannot become a results folder: an existing file that is not a folder,
    // or a missing folder whose nearest existing ancestor is not a writable folder. Creates nothing.
    explicit OutputDir(std::string dir, std::string flag = "--out");
    ~OutputDir();   // without keep(): undoes what was written (see above)
    OutputDir(const OutputDir&) = delete;
    OutputDir& operator=(const OutputDir&) = delete;

    const std::string& path() const { return dir_; }
    // DIR/name, written atomically (atomic_file.hpp); creates the folder first if needed.
    void write(const std::string& name, const std::string& content);
    // Creates the folder (if needed) for a writer that puts files there itself (gnuplot's plots); returns it.
    const std::string& create();
    // The command succeeded (or ended as designed, e.g. an interrupted sweep writing its finished rows): keep.
    void keep() { keep_ = true; }

private:
    std::string dir_, flag_;
    std::string top_missing_;   // the outermost folder of dir_ that did not exist when checked ("" = none)
    bool created_ = false, keep_ = false;
    std::vector<std::string> written_;
};

}  // namespace ttsim::cli
