// All the mistakes of one input in one run. A reader that can go on after a mistake (the next section of a
// scenario does not need the one that failed) runs each section through `attempt`; `throw_if_any` then throws
// them together as one InputError, one mistake a line, each with its file:line:column and key. A reader that
// cannot go on (a section others depend on failed) skips what depends on it: a cascade of follow-on errors
// would bury the real one. At most kMaxInputErrors are listed; past that, a count.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/errors.hpp"

namespace ttsim {

inline constexpr std::size_t kMaxInputErrors = 20;

class InputErrors {
public:
    // Runs `body`; an InputError it throws is kept and false returned (true: it succeeded).
    template <typename Body>
    bool attempt(Body&& body) {
        try {
            body();
            return true;
        } catch (const InputError& e) {
            errors_.push_back(e);
            return false;
        }
    }
    bool empty() const { return errors_.empty(); }
    std::size_t size() const { return errors_.size(); }

    // Nothing, or the one error as it was, or all of them as one InputError: "3 mistakes in FILE:" then one
    // indented line each ("FILE:line:col: 'key': message").
    void throw_if_any() const {
        if (errors_.empty()) return;
        if (errors_.size() == 1) throw errors_.front();
        const std::string& file = errors_.front().where().file;
        std::string text = std::to_string(errors_.size()) + " mistakes" + (file.empty() ? "" : " in " + file) + ":";
        for (std::size_t i = 0; i < errors_.size() && i < kMaxInputErrors; ++i) text += "\n  " + std::string(errors_[i].what());
        if (errors_.size() > kMaxInputErrors)
            text += "\n  (and " + std::to_string(errors_.size() - kMaxInputErrors) + " more)";
        throw InputError(text);
    }

private:
    std::vector<InputError> errors_;
};

}  // namespace ttsim
