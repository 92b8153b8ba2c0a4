#include "tools/cli/args.hpp"

#include <cmath>
#include <ostream>
#include <sstream>

#include "sim/errors.hpp"
#include "sim/text.hpp"
#include "sim/units.hpp"
#include "tools/cli/exit_codes.hpp"

namespace ttsim::cli {

std::string_view flag_name(Field field) {
    switch (field) {
        case Field::workload: return "workload";
        case Field::system: return "system";
        case Field::gpus: return "gpus";
        case Field::global_batch: return "global-batch";
        case Field::batch_per_rank: return "batch-per-rank";
        case Field::tensor_parallel: return "tp";
        case Field::context_parallel: return "cp";
        case Field::layout: return "layout";
        case Field::sharp: return "sharp";
        case Field::nic: return "nic";
        case Field::oversubscription: return "oversubscription";
        case Field::routing: return "routing";
        case Field::min_gpus: return "min-gpus";
        case Field::max_gpus: return "max-gpus";
        case Field::deadline: return "deadline";
        case Field::confidence: return "confidence";
        case Field::margin: return "margin";
        case Field::objective: return "minimise";
        case Field::allocation: return "allocation";
        case Field::profiles: return "profiles";
        case Field::shared_parameters: return "shared";
        case Field::output_dir: return "out";
        case Field::memory_reserve: return "memory-reserve";
        case Field::failure_rates: return "failure-rates";
        case Field::checkpoint_interval: return "checkpoint-interval";
        case Field::storage_bandwidth: return "storage-bandwidth";
        case Field::hot_spares: return "hot-spares";
        case Field::spine_oversubscription: return "spine-oversubscription";
        case Field::superspine_oversubscription: return "superspine-oversubscription";
        case Field::planes: return "planes";
        case Field::switch_ports: return "switch-ports";
        case Field::tiers: return "tiers";
        case Field::rail_optimized: return "rail-optimized";
    }
    throw InternalError("flag_name: a Field without a flag");
}

ArgParser::ArgParser(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)), synopsis_(std::move(synopsis)), description_(std::move(description)) {}

ArgParser& ArgParser::option(std::string name, std::string placeholder, std::string help, std::string default_value) {
    options_.push_back({std::move(name), std::move(placeholder), std::move(help), std::move(default_value)});
    return *this;
}

ArgParser& ArgParser::flag(std::string name, std::string help) {
    options_.push_back({std::move(name), "", std::move(help), ""});
    return *this;
}

ArgParser& ArgParser::positional(std::string name, std::string help, bool required) {
    positional_specs_.emplace_back(std::move(name), std::move(help));
    positional_required_.push_back(required);
    return *this;
}

ArgParser& ArgParser::positional_list(std::string name, std::string help) {
    list_spec_.emplace(std::move(name), std::move(help));
    return *this;
}

const OptionSpec* ArgParser::find(const std::string& name) const {
    for (const auto& spec : options_)
        if (spec.name == name) return &spec;
    return nullptr;
}

void ArgParser::fail(const std::string& name, const std::string& message) const {
    throw InputError(message, SourceLocation{}, name.empty() ? "" : "--" + name);
}

bool ArgParser::parse(const std::vector<std::string>& args, std::ostream& help_out) {
    std::size_t next_positional = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            help_out << help_text();
            return false;
        }
        if (arg.rfind("--", 0) == 0) {
            std::string name = arg.substr(2);
            std::optional<std::string> inline_value;
            if (auto eq = name.find('='); eq != std::string::npos) {
                inline_value = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            const OptionSpec* spec = find(name);
            if (!spec) fail(name, "unknown option for 'ttsim " + command_ + "' (see 'ttsim " + command_ + " --help')");
            if (values_.count(name)) fail(name, "given more than once");
            if (spec->placeholder.empty()) {
                if (inline_value) fail(name, "is a switch and takes no value");
                values_[name] = "true";
                continue;
            }
            if (inline_value) {
                values_[name] = *inline_value;
            } else {
                if (i + 1 >= args.size()) fail(name, "needs a value (" + spec->placeholder + ")");
                values_[name] = args[++i];
            }
            if (values_[name].empty()) fail(name, "value must not be empty");
            // A value may reach a JSON output, which holds UTF-8 only; the output folder never does, and a file
            // system may name it in any bytes.
            if (name != "out" && first_invalid_utf8(values_[name]) != std::string::npos)
                fail(name, "value is not UTF-8 text (set the terminal's or script's encoding to UTF-8)");
            continue;
        }
        if (first_invalid_utf8(arg) != std::string::npos)
            fail("", "argument " + std::to_string(i + 1) + " of 'ttsim " + command_ +
                         "' is not UTF-8 text (set the terminal's or script's encoding to UTF-8)");
        if (next_positional >= positional_specs_.size() && list_spec_) {
            list_values_.push_back(arg);
            continue;
        }
        if (next_positional >= positional_specs_.size())
            fail("", "unexpected argument '" + arg + "' for 'ttsim " + command_ + "'");
        positional_values_[positional_specs_[next_positional++].first] = arg;
    }
    for (std::size_t i = next_positional; i < positional_specs_.size(); ++i)
        if (positional_required_[i])
            fail("", "missing argument " + positional_specs_[i].first + " (see 'ttsim " + command_ + " --help')");
    if (list_spec_ && list_values_.empty())
        fail("", "missing argument " + list_spec_->first + " (see 'ttsim " + command_ + " --help')");
    return true;
}

std::string ArgParser::help_text() const {
    std::ostringstream out;
    out << "usage: ttsim " << command_ << " " << synopsis_ << "\n\n" << description_ << "\n";
    if (!positional_specs_.empty() || list_spec_) {
        out << "\narguments:\n";
        for (const auto& [name, help] : positional_specs_) out << "  " << name << "\n      " << help << "\n";
        if (list_spec_) out << "  " << list_spec_->first << "...\n      " << list_spec_->second << "\n";
    }
    out << "\noptions:\n";
    for (const auto& spec : options_) {
        out << "  --" << spec.name;
        if (!spec.placeholder.empty()) out << " " << spec.placeholder;
        out << "\n      " << spec.help;
        if (!spec.default_value.empty()) out << " (default: " << spec.default_value << ")";
        out << "\n";
    }
    out << "  --help\n      show this help and exit\n";
    out << "\n" << kExitCodesHelp;
    return out.str();
}

bool ArgParser::has(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> ArgParser::get_optional(const std::string& name) const {
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    const OptionSpec* spec = find(name);
    if (!spec) throw InternalError("option --" + name + " was never declared");
    if (!spec->default_value.empty()) return spec->default_value;
    return std::nullopt;
}

std::string ArgParser::get(const std::string& name) const {
    auto value = get_optional(name);
    if (!value) fail(name, "is required");
    return *value;
}

bool ArgParser::get_flag(const std::string& name) const {
    if (!find(name)) throw InternalError("switch --" + name + " was never declared");
    return values_.count(name) > 0;
}

long long ArgParser::get_int(const std::string& name, long long min, long long max) const {
    const std::string text = get(name);
    long long value = 0;
    std::size_t used = 0;
    try {
        value = std::stoll(text, &used, 10);
    } catch (const std::out_of_range&) {
        // A whole number, only too large for any count here.
        fail(name, "value " + text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    } catch (const std::exception&) {
        fail(name, "expected a whole number, got '" + text + "'");
    }
    if (used != text.size()) fail(name, "expected a whole number, got '" + text + "'");
    if (value < min || value > max)
        fail(name, "value " + text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return value;
}

double ArgParser::get_double(const std::string& name, double min, double max) const {
    const std::string text = get(name);
    const double value = get_parsed(name, [](const std::string& s) { return units::parse_number(s); });
    if (value < min || value > max) {
        std::ostringstream message;
        message << "value " << text << " is out of range [" << min << ", " << max << "]";
        fail(name, message.str());
    }
    return value;
}

std::string ArgParser::get_choice(const std::string& name, std::initializer_list<std::string_view> choices) const {
    const std::string text = get(name);
    std::string expected;
    std::size_t i = 0;
    for (const std::string_view choice : choices) {
        if (text == choice) return text;
        expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choice);
        ++i;
    }
    fail(name, "expected " + expected + ", got '" + text + "'");
}

void ArgParser::rethrow_naming_flag(const InputError& error) const {
    if (error.field() && error.where().file.empty())
        if (const std::string name(flag_name(*error.field())); find(name)) fail(name, error.message());
    throw error;
}

std::optional<std::string> ArgParser::positional_value(const std::string& name) const {
    if (auto it = positional_values_.find(name); it != positional_values_.end()) return it->second;
    return std::nullopt;
}

}  // namespace ttsim::cli
