#include "sim/config.hpp"

#include "sim/text.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "sim/file_reading.hpp"
#include "sim/units.hpp"

namespace ttsim {
namespace {

// Levenshtein distance, for "did you mean" hints on misspelled keys.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string join_path(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

// yaml-cpp 0.7 takes a quoted scalar that is never closed as running to the end of the file (`name: "tiny` then
// more keys: the keys become part of the name, silently). YAML forbids it (PyYAML: "found unexpected end of
// stream"), so every quoted scalar the parser returns must close in the text: a double-quoted one at an unescaped
// '"', a single-quoted one at a ' that is not doubled.
// Each node once: an alias is its anchor's node (the same mark), so a recursive alias or a "billion laughs" of
// aliases is walked in the size of the text, not of its expansion.
void require_closed_quotes(const YAML::Node& node, const std::string& text, std::size_t base,
                           const std::string& source_name, std::unordered_set<long long>& visited) {
    const YAML::Mark mark = node.Mark();
    // A block map starts where its first key does: keyed by position and kind.
    if (mark.pos >= 0 && !visited.insert(static_cast<long long>(mark.pos) * 8 + static_cast<int>(node.Type())).second) return;
    if (node.IsMap()) {
        for (const auto& item : node) {
            require_closed_quotes(item.first, text, base, source_name, visited);
            require_closed_quotes(item.second, text, base, source_name, visited);
        }
        return;
    }
    if (node.IsSequence()) {
        for (const auto& item : node) require_closed_quotes(item, text, base, source_name, visited);
        return;
    }
    if (!node.IsScalar()) return;
    if (mark.pos < 0) return;
    // The mark is where the node's properties start: past an anchor (&name) and a tag (!!str) to the scalar.
    std::size_t start = base + static_cast<std::size_t>(mark.pos);
    while (start < text.size() && (text[start] == '&' || text[start] == '!')) {
        start = text.find_first_of(" \t\r\n", start);
        if (start == std::string::npos) return;
        start = text.find_first_not_of(" \t\r\n", start);
        if (start == std::string::npos) return;
    }
    if (start >= text.size()) return;
    const char quote = text[start];
    if (quote != '"' && quote != '\'') return;
    for (std::size_t i = start + 1; i < text.size(); ++i) {
        if (quote == '"' && text[i] == '\\') {
            ++i;   // an escaped character, a quote included
        } else if (text[i] == quote) {
            if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
                ++i;   // '' is a quote inside a single-quoted scalar
                continue;
            }
            return;
        }
    }
    throw InputError(std::string("YAML syntax error: the ") + (quote == '"' ? "double" : "single") +
                         "-quoted string that starts here is never closed (add its closing " + quote + ")",
                     SourceLocation{source_name, mark.line + 1, mark.column + 1});
}

}  // namespace

ConfigNode ConfigNode::load_file(const std::string& path) {
    return load_string(read_input_file(path, kYamlInputFile), path);
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& source_name) {
    // yaml-cpp accepts a NUL byte silently in places; refuse binary input outright.
    if (const auto nul = text.find('\0'); nul != std::string::npos) {
        const TextPosition at = position_of(text, nul);
        throw InputError("file contains a NUL byte; not a YAML text file", SourceLocation{source_name, at.line, at.column});
    }
    // YAML is UTF-8 text here (YAML 1.2 section 5.2 allows UTF-16/32 too, which yaml-cpp does not read); a Latin-1
    // byte would otherwise pass into names that the JSON outputs cannot write.
    require_utf8(text, source_name,
                 "not UTF-8 text (a byte that no UTF-8 character starts or continues with; save the file as UTF-8)");
    // One document per file: YAML::Load silently ignores everything after a second '---', and YAML::LoadAll
    // (yaml-cpp 0.7) can loop forever on some malformed input (found by tests/fuzz/fuzz_scenario.cpp), so
    // look for a second document ourselves. Document markers only count at the start of a line.
    {
        bool content = false, ended = false;
        int line = 0;
        for (std::size_t start = 0; start <= text.size();) {
            ++line;
            std::size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            const std::string_view row(text.data() + start, end - start);
            start = end + 1;
            auto marker = [&](std::string_view m) {
                return row.substr(0, 3) == m && (row.size() == 3 || row[3] == ' ' || row[3] == '\t' || row[3] == '\r');
            };
            const auto first = row.find_first_not_of(" \t\r");
            const bool blank = first == std::string_view::npos || row[first] == '#';
            if (marker("---")) {
                const auto rest = row.find_first_not_of(" \t\r", 3);
                if (content || ended)
                    throw InputError("more than one YAML document (a second '---'); a file holds one document",
                                     SourceLocation{source_name, line, 1});
                if (rest != std::string_view::npos && row[rest] != '#') content = true;
            } else if (marker("...")) {
                ended = true;
            } else if (!blank && !(first == 0 && row[0] == '%')) {
                if (ended)
                    throw InputError("content after the end of the YAML document ('...'); a file holds one document",
                                     SourceLocation{source_name, line, 1});
                content = true;
            }
            if (end == text.size()) break;
        }
    }
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError("YAML syntax error: " + e.msg,
                         SourceLocation{source_name, e.mark.line + 1, e.mark.column + 1});
    }
    if (!root || root.IsNull()) throw InputError("empty document", SourceLocation{source_name, 1, 1});
    std::unordered_set<long long> visited;
    // yaml-cpp skips a UTF-8 byte-order mark without counting it in its marks.
    const std::size_t base = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    require_closed_quotes(root, text, base, source_name, visited);
    return ConfigNode(root, source_name, "");
}

SourceLocation ConfigNode::location() const {
    const YAML::Mark mark = node_.Mark();
    if (mark.line < 0) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

void ConfigNode::fail(const std::string& message) const { throw InputError(message, location(), path_); }

void ConfigNode::rethrow_at_key(const InputError& error, const ConfigNode& fallback) const {
    if (!error.where().file.empty() || !error.key().empty()) throw error;
    if (error.field())
        if (const std::string_view key = scenario_key(*error.field()); !key.empty() && has(key))
            required(key).fail(error.message());
    fallback.fail(error.message());
}

std::string_view scenario_key(Field field) {
    switch (field) {
        case Field::workload: return "workload";
        case Field::system: return "system";
        case Field::gpus: return "gpus";
        case Field::global_batch: return "global";   // batch: {global: N}
        case Field::batch_per_rank: return "per_rank";   // batch: {per_rank: N}
        case Field::layout: return "layout";
        case Field::sharp: return "sharp";
        case Field::nic: return "nic";
        case Field::oversubscription: return "oversubscription";
        case Field::routing: return "routing";
        case Field::min_gpus: return "from";   // gpus: {from, to}
        case Field::max_gpus: return "to";
        case Field::deadline: return "deadline";
        case Field::confidence: return "confidence";
        case Field::margin: return "margin";
        case Field::objective: return "minimise";
        case Field::allocation: return "allocation";
        case Field::memory_reserve: return "memory_reserve";
        case Field::failure_rates: return "failure_rates";   // reliability: {failure_rates, ...}
        case Field::checkpoint_interval: return "checkpoint_interval";
        case Field::storage_bandwidth: return "storage_bandwidth";
        case Field::hot_spares: return "hot_spares";
        case Field::spine_oversubscription: return "spine_oversubscription";
        case Field::superspine_oversubscription: return "superspine_oversubscription";
        case Field::planes: return "planes";
        case Field::switch_ports: return "switch_ports";
        case Field::tiers: return "tiers";
        case Field::rail_optimized: return "rail_optimized";
        // Set by flags only: no scenario key names them.
        case Field::tensor_parallel:
        case Field::context_parallel:
        case Field::profiles:
        case Field::shared_parameters:
        case Field::output_dir: return {};
    }
    return {};
}

bool ConfigNode::is_map() const { return node_.IsMap(); }
bool ConfigNode::is_sequence() const { return node_.IsSequence(); }
bool ConfigNode::is_scalar() const { return node_.IsScalar(); }

bool ConfigNode::has(std::string_view key) const {
    if (!node_.IsMap()) return false;
    for (const auto& entry : node_)
        if (entry.first.IsScalar() && entry.first.Scalar() == key) return true;
    return false;
}

std::optional<ConfigNode> ConfigNode::optional(std::string_view key) const {
    if (!node_.IsMap()) fail("expected a mapping (key: value pairs)");
    for (const auto& entry : node_) {
        if (entry.first.IsScalar() && entry.first.Scalar() == key) {
            if (entry.second.IsNull())
                ConfigNode(entry.first, file_, join_path(path_, key)).fail("has no value");
            return ConfigNode(entry.second, file_, join_path(path_, key));
        }
    }
    return std::nullopt;
}

ConfigNode ConfigNode::required(std::string_view key) const {
    auto child = optional(key);
    if (!child) fail("missing required key '" + std::string(key) + "'");
    return *child;
}

std::vector<std::string> ConfigNode::keys() const {
    if (!node_.IsMap()) fail("expected a mapping (key: value pairs)");
    std::vector<std::string> out;
    for (const auto& entry : node_) {
        if (!entry.first.IsScalar()) ConfigNode(entry.first, file_, path_).fail("keys must be plain names");
        // yaml-cpp keeps both of a duplicate key, and a map read by its keys would take one silently.
        if (std::find(out.begin(), out.end(), entry.first.Scalar()) != out.end())
            ConfigNode(entry.first, file_, join_path(path_, entry.first.Scalar())).fail("duplicate key");
        out.push_back(entry.first.Scalar());
    }
    return out;
}

void ConfigNode::check_keys(std::initializer_list<std::string_view> allowed) const {
    check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::check_keys(const std::vector<std::string>& allowed) const {
    InputErrors errors;
    check_keys(allowed, errors);
    errors.throw_if_any();
}

void ConfigNode::check_keys(const std::vector<std::string>& allowed, InputErrors& errors) const {
    if (!node_.IsMap()) {
        errors.attempt([&] { fail("expected a mapping (key: value pairs)"); });
        return;
    }
    std::vector<std::string> seen;
    for (const auto& entry : node_) errors.attempt([&] {
        ConfigNode key_node(entry.first, file_, path_);
        if (!entry.first.IsScalar()) key_node.fail("keys must be plain names");
        const std::string& key = entry.first.Scalar();
        key_node.path_ = join_path(path_, key);
        // yaml-cpp keeps duplicate keys; a duplicate is almost always a mistake, so refuse it.
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) key_node.fail("duplicate key");
        seen.push_back(key);
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) return;
        std::string message = "unknown key";
        std::size_t best = 3;
        std::string suggestion;
        for (const auto& candidate : allowed) {
            const std::size_t d = edit_distance(key, candidate);
            if (d < best) { best = d; suggestion = candidate; }
        }
        if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
        else {
            message += "; allowed keys:";
            for (const auto& candidate : allowed) message += " " + candidate;
        }
        key_node.fail(message);
    });
}

std::vector<ConfigNode> ConfigNode::items() const {
    if (!node_.IsSequence()) fail("expected a list");
    std::vector<ConfigNode> out;
    std::size_t index = 0;
    for (const auto& item : node_) {
        out.push_back(ConfigNode(item, file_, path_ + "[" + std::to_string(index) + "]"));
        ++index;
    }
    return out;
}

std::string ConfigNode::scalar_text() const {
    if (!node_.IsScalar()) fail(node_.IsMap() ? "expected a single value, found a mapping"
                                              : node_.IsSequence() ? "expected a single value, found a list"
                                                                   : "expected a value");
    return node_.Scalar();
}

std::string ConfigNode::as_string() const {
    std::string text = scalar_text();
    if (text.empty()) fail("must not be empty");
    return text;
}

std::string ConfigNode::as_choice(std::initializer_list<std::string_view> choices) const {
    return as_choice(std::span<const std::string_view>(choices.begin(), choices.size()));
}

std::string ConfigNode::as_choice(std::span<const std::string_view> choices) const {
    std::string text = as_string();
    for (auto choice : choices)
        if (text == choice) return text;
    std::string message = "'" + text + "' is not one of:";
    for (auto choice : choices) message += " " + std::string(choice);
    fail(message);
}

bool ConfigNode::as_bool() const {
    const std::string text = scalar_text();
    if (text == "true" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "no" || text == "off") return false;
    fail("expected true or false, got '" + text + "'");
}

// A quoted scalar ("4096") is a string in YAML, whatever it spells: a number is written plain, so a quoted one is
// refused rather than read as if it were not quoted (yaml-cpp tags quoted scalars "!", plain ones "?"). The advice
// to drop the quotes only where the text is a number.
void ConfigNode::require_plain_number(const std::string& text, std::string_view what, bool parses) const {
    if (node_.Tag() == "!")
        fail("expected " + std::string(what) + ", got the quoted string \"" + text + "\"" +
             (parses ? " (write it without quotes)" : ""));
}

std::int64_t ConfigNode::as_int(std::int64_t min, std::int64_t max) const {
    const std::string text = scalar_text();
    require_plain_number(text, "a whole number", [&] {
        try {
            std::size_t used = 0;
            (void)std::stoll(text, &used, 10);
            return used == text.size();
        } catch (const std::exception&) {
            return false;
        }
    }());
    std::int64_t value = 0;
    std::size_t used = 0;
    try {
        value = std::stoll(text, &used, 10);
    } catch (const std::exception&) {
        fail("expected a whole number, got '" + text + "'");
    }
    if (used != text.size()) fail("expected a whole number, got '" + text + "'");
    if (value < min || value > max)
        fail("value " + text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return value;
}

double ConfigNode::as_double(double min, double max) const {
    const std::string text = scalar_text();
    require_plain_number(text, "a number", [&] {
        try {
            (void)units::parse_number(text);
            return true;
        } catch (const InputError&) {
            return false;
        }
    }());
    const double value = feeding([&] { return units::parse_number(text); });
    if (value < min || value > max) {
        // {:g}: the default stream format of a double (6 significant digits), as the message always had.
        fail(fmt::format("value {} is out of range [{:g}, {:g}]", text, min, max));
    }
    return value;
}

// Unit-carrying scalars: the unit parser's message is kept, and the location and key are added (a scalar_text
// failure is already at this node).
std::uint64_t ConfigNode::as_bytes() const {
    return feeding([&] { return units::parse_bytes(scalar_text()); });
}
double ConfigNode::as_bandwidth() const {
    return feeding([&] { return units::parse_bandwidth(scalar_text()); });
}
SimTime ConfigNode::as_time() const {
    return feeding([&] { return units::parse_time(scalar_text()); });
}
double ConfigNode::as_time_seconds() const {
    return feeding([&] { return units::parse_time_seconds(scalar_text()); });
}
namespace {
// `value`, read from `node`, unless it lies outside `range`: then InputError at the node, with the range.
double in_physical_range(const ConfigNode& node, double value, const PhysicalRange& range) {
    if (!(value >= range.min && value <= range.max))
        node.fail("'" + node.as_string() + "' is outside the physical range " + range.text);
    return value;
}
}  // namespace

double ConfigNode::as_bandwidth(const PhysicalRange& range) const { return in_physical_range(*this, as_bandwidth(), range); }
SimTime ConfigNode::as_time(const PhysicalRange& range) const {
    const SimTime time = as_time();
    (void)in_physical_range(*this, time.seconds(), range);
    return time;
}
double ConfigNode::as_power(const PhysicalRange& range) const { return in_physical_range(*this, as_power(), range); }

double ConfigNode::as_power() const {
    return feeding([&] { return units::parse_power(scalar_text()); });
}
double ConfigNode::as_flop_rate() const {
    return feeding([&] { return units::parse_flop_rate(scalar_text()); });
}
double ConfigNode::as_number_in_unit(std::string_view unit) const {
    return feeding([&] { return units::parse_number_in_unit(scalar_text(), unit); });
}

}  // namespace ttsim
