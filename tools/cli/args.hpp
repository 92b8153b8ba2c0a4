// Command-line options, each declared once (name, value placeholder, default, help). The same declaration
// parses the arguments strictly (an unknown or repeated flag, a missing value -> InputError naming the flag)
// and prints the subcommand's --help, so the help can never drift from what is accepted.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"

namespace ttsim::cli {

// The flag (without dashes) that sets `field`: the command line's one table of names for library fields.
std::string_view flag_name(Field field);

struct OptionSpec {
    std::string name;         // without dashes: "gpus"
    std::string placeholder;  // "N"; empty for a boolean switch
    std::string help;
    std::string default_value;  // shown in --help; empty = no default
};

class ArgParser {
public:
    ArgParser(std::string command, std::string synopsis, std::string description);
    ArgParser& option(std::string name, std::string placeholder, std::string help, std::string default_value = "");
    ArgParser& flag(std::string name, std::string help);
    ArgParser& positional(std::string name, std::string help, bool required = true);
    // After the positionals: one or more further arguments, all kept (`ttsim merge DIR...`).
    ArgParser& positional_list(std::string name, std::string help);

    // Returns false when --help was asked for (the help text has then been written to `help_out`).
    bool parse(const std::vector<std::string>& args, std::ostream& help_out);
    std::string help_text() const;

    bool has(const std::string& name) const;
    std::string get(const std::string& name) const;  // value or declared default; InputError if neither
    std::optional<std::string> get_optional(const std::string& name) const;
    bool get_flag(const std::string& name) const;
    long long get_int(const std::string& name, long long min, long long max) const;
    double get_double(const std::string& name, double min, double max) const;
    // The value if it is one of `choices`, else InputError naming the flag: "expected a, b or c, got 'x'".
    std::string get_choice(const std::string& name, std::initializer_list<std::string_view> choices) const;
    std::optional<std::string> positional_value(const std::string& name) const;
    const std::vector<std::string>& positional_list_values() const { return list_values_; }

    // The option's value passed through `parse` (e.g. a unit or name parser); an InputError from `parse`
    // is re-thrown naming the flag.
    template <typename Parse>
    auto get_parsed(const std::string& name, Parse parse) const {
        try {
            return parse(get(name));
        } catch (const InputError& e) {
            fail(name, e.message());
        }
    }

    // Runs `body` (library code fed from these options); an InputError it throws that names a Field whose flag
    // (flag_name) this command declares, and that has no file location, is re-thrown naming the flag
    // ("'--gpus': ..."). Other exceptions pass through unchanged.
    template <typename Body>
    auto naming_flags(Body body) const {
        try {
            return body();
        } catch (const InputError& e) {
            rethrow_naming_flag(e);
        }
    }

    // An InputError that names the flag.
    [[noreturn]] void fail(const std::string& name, const std::string& message) const;

private:
    const OptionSpec* find(const std::string& name) const;
    [[noreturn]] void rethrow_naming_flag(const InputError& error) const;
    std::string command_;
    std::string synopsis_;
    std::string description_;
    std::vector<OptionSpec> options_;
    std::vector<std::pair<std::string, std::string>> positional_specs_;
    std::vector<bool> positional_required_;
    std::map<std::string, std::string> values_;
    std::map<std::string, std::string> positional_values_;
    std::optional<std::pair<std::string, std::string>> list_spec_;   // positional_list's name and help
    std::vector<std::string> list_values_;
};

}  // namespace ttsim::cli
