// Two kinds of failure, kept apart on purpose:
//  - InputError: the user's scenario, flag or data is wrong. Carries where (file:line:column) and which key.
//    main() turns it into exit code 2 and a one-line message.
//  - InternalError: a bug in ttsim (a broken invariant). main() turns it into exit code 3.
// Library code only throws; it never prints or exits.
#pragma once

#include <stdexcept>
#include <string>

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

    const std::string& message() const { return message_; }
    const SourceLocation& where() const { return where_; }
    const std::string& key() const { return key_; }

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
