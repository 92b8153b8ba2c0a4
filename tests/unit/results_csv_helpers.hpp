// Shared by the tests of a user's MLPerf-format results CSV (`calibrate --data`): the shipped CSV's header and
// first row, with some fields changed, written to a scratch file.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/mlperf/results.hpp"

namespace ttsim::test {

// Writes the shipped v4.1_results.csv header and its first row, with `changes` (column -> value) applied, to
// `path`; returns the path. Every field is quoted, so values may hold commas and quotes.
inline std::string write_results_row(const std::string& path, const std::map<std::string, std::string>& changes) {
    static const std::vector<std::vector<std::string>> shipped = [] {
        std::ifstream in(std::string(TTSIM_SOURCE_DIR) + "/models/data/mlperf/v4.1_results.csv");
        std::stringstream text;
        text << in.rdbuf();
        return parse_csv(text.str(), "shipped");
    }();
    const std::vector<std::string>& header = shipped.at(0);
    std::vector<std::string> row = shipped.at(1);
    for (const auto& [column, value] : changes) {
        const auto at = std::find(header.begin(), header.end(), column);
        REQUIRE(at != header.end());
        row[static_cast<std::size_t>(at - header.begin())] = value;
    }
    auto line = [](const std::vector<std::string>& fields) {
        std::string out;
        for (const std::string& field : fields) {
            std::string quoted = "\"";
            for (char c : field) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
            out += (out.empty() ? "" : ",") + quoted + "\"";
        }
        return out + "\n";
    };
    std::ofstream(path) << line(header) << line(row);
    return path;
}

}  // namespace ttsim::test
