// Text helpers shared by every name lookup: one rule for what counts as the same name.
#pragma once

#include <string>
#include <string_view>

namespace ttsim {

// The key a name is looked up by: lower case, with '-', '_', ' ' and '.' dropped, so that "H100-SXM",
// "h100_sxm", "All-Reduce", "allreduce", "llama2-70b-lora" and "LLAMA2_70B_LORA" each agree with their spellings.
std::string name_key(std::string_view name);

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629: no overlong forms,
// surrogates or code points above U+10FFFF), or std::string_view::npos when all of it is. Every input that can reach
// an output (scenario and topology files, CSV files, flags) is checked with it, so a Latin-1 name is refused where
// it is written, not found unprintable by the JSON writer after a run.
std::size_t first_invalid_utf8(std::string_view text);

// Line and column (1-based, counting bytes) of the byte at `offset` of `text`.
struct TextPosition {
    int line = 1;
    int column = 1;
};
TextPosition position_of(std::string_view text, std::size_t offset);

// InputError `message` at `source_name`'s line and column of the first byte of `text` that is not UTF-8; nothing
// when all of it is.
void require_utf8(std::string_view text, const std::string& source_name, const std::string& message);

}  // namespace ttsim
