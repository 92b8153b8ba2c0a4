// Text helpers shared by every name lookup: one rule for what counts as the same name.
#pragma once

#include <string>
#include <string_view>

namespace ttsim {

// The key a name is looked up by: lower case, with '-', '_', ' ' and '.' dropped, so that "H100-SXM",
// "h100_sxm", "All-Reduce", "allreduce", "llama2-70b-lora" and "LLAMA2_70B_LORA" each agree with their spellings.
std::string name_key(std::string_view name);

}  // namespace ttsim
