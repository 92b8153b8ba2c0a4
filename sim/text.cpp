#include "sim/text.hpp"

#include <cctype>

namespace ttsim {

std::string name_key(std::string_view name) {
    std::string key;
    key.reserve(name.size());
    for (const char c : name) {
        if (c == '-' || c == '_' || c == ' ' || c == '.') continue;
        key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return key;
}

}  // namespace ttsim
