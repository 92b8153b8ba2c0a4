#include "models/reference_data.hpp"

#include <string>
#include <vector>

namespace ttsim {
namespace {

void require_source(const ConfigNode& entry) {
    // A value without a citation cannot be checked or updated later; refuse it like a missing value.
    const ConfigNode source = entry.required("source");
    if (source.as_string().find_first_not_of(" \t") == std::string::npos) source.fail("source must not be blank");
}

}  // namespace

ConfigNode sourced(const ConfigNode& parent, std::string_view key) {
    const ConfigNode entry = parent.required(key);
    if (!entry.is_map()) entry.fail("expected {value: ..., source: ...}");
    entry.check_keys({"value", "source"});
    require_source(entry);
    return entry.required("value");
}

ConfigNode sourced_table(const ConfigNode& parent, std::string_view key,
                         std::initializer_list<std::string_view> columns) {
    const ConfigNode table = parent.required(key);
    std::vector<std::string> allowed(columns.begin(), columns.end());
    allowed.emplace_back("source");
    table.check_keys(allowed);
    require_source(table);
    for (std::string_view column : columns) table.required(column);   // every column present
    return table;
}

ConfigNode load_reference_file(const std::filesystem::path& path, std::initializer_list<std::string_view> top_level_keys) {
    const ConfigNode root = ConfigNode::load_file(path.string());
    std::vector<std::string> allowed(top_level_keys.begin(), top_level_keys.end());
    allowed.emplace_back("about");
    root.check_keys(allowed);
    for (const std::string& key : allowed) root.required(key);
    return root;
}

}  // namespace ttsim
