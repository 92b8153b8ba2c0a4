// Two kinds of failure, kept apart on purpose:
//  - InputError: the user's scenario, flag or data is wrong. A reader of a file says where (file:line:column)
//    and which key; library code fed a request says which Field (sim/fields.hpp), and the front end that built
//    the request names it as its user wrote it (a flag, a scenario key). main() turns it into exit code 2 and a
//    one-line message.
//  - InternalError: a bug in ttsim (a broken invariant). main() turns it into exit code 3.
// Library code only throws; it never prints or exits.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "sim/fields.hpp"

namespace ttsim {

struct SourceLocation {
    std::string file;  // empty when the input did not come from a file (e.g. a command-line flag)
    int line = 0;      // 1-based; 0 = unknown
    int column = 0;    // 1-based; 0 = unknown
};

class InputError : public std::runtime_error {
public:
    InputError(const std::string& message, SourceLocation where = {}, std::string key = {})
        : std::runtime_error(format(message, where, key)), message_(message), where_(std::move(where)),
          key_(std::move(key)) {}
    // A request field is wrong; the front end that filled it in names it as its user wrote it
    // (ArgParser::naming_flags, ConfigNode::feeding_keys). Until then, what() names it as the request does.
    InputError(const std::string& message, Field field)
        : std::runtime_error(format(message, {}, std::string(to_string(field)))), message_(message),
          field_(field) {}

    const std::string& message() const { return message_; }
    const SourceLocation& where() const { return where_; }
    const std::string& key() const { return key_; }
    const std::optional<Field>& field() const { return field_; }

private:
    static std::string format(const std::string& message, const SourceLocation& where, const std::string& key) {
        std::string out;
        if (!where.file.empty()) {
            out += where.file;
            if (where.line > 0) out += ":" + std::to_string(where.line);
            if (where.column > 0) out += ":" + std::to_string(where.column);
            out += ": ";
        }
        if (!key.empty()) out += "'" + key + "': ";
        return out + message;
    }
    std::string message_;
    SourceLocation where_;
    std::string key_;
    std::optional<Field> field_;
};

class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& message) : std::logic_error("internal error: " + message) {}
};

// Checks an internal invariant; a failure is a ttsim bug, never a user mistake.
#define TTSIM_ASSERT(cond, msg)                                                                            \
    do {                                                                                                   \
        if (!(cond)) throw ::ttsim::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                                  ": " + (msg));                                           \
    } while (0)

}  // namespace ttsim
