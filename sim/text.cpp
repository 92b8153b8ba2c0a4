#include "sim/text.hpp"

#include <cctype>

#include "sim/errors.hpp"

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

std::size_t first_invalid_utf8(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char lead = byte(i);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        // Sequence length and the range of the second byte (RFC 3629 section 4's table).
        std::size_t length = 0;
        unsigned char low = 0x80, high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) low = 0xA0;    // no overlong 3-byte forms
            if (lead == 0xED) high = 0x9F;   // no UTF-16 surrogates
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) low = 0x90;    // no overlong 4-byte forms
            if (lead == 0xF4) high = 0x8F;   // nothing above U+10FFFF
        } else {
            return i;
        }
        if (i + length > text.size()) return i;
        if (byte(i + 1) < low || byte(i + 1) > high) return i;
        for (std::size_t k = 2; k < length; ++k)
            if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
        i += length;
    }
    return std::string_view::npos;
}

TextPosition position_of(std::string_view text, std::size_t offset) {
    TextPosition p;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++p.line;
            p.column = 1;
        } else {
            ++p.column;
        }
    }
    return p;
}

void require_utf8(std::string_view text, const std::string& source_name, const std::string& message) {
    if (const auto bad = first_invalid_utf8(text); bad != std::string_view::npos) {
        const TextPosition at = position_of(text, bad);
        throw InputError(message, SourceLocation{source_name, at.line, at.column});
    }
}

}  // namespace ttsim
