// Which software a result ran, as the speed offsets of a profile set key it (ProfileSet::stack_speeds):
//  - its stack, a submitter on a GPU family ("NVIDIA/H100-SXM"; the operator model's stack speeds, and the labels of
//    a user's runs);
//  - its round's software on its workload and family ("round:5.0/bert/GB200"), where a fit spans several MLPerf
//    rounds: what changed between rounds (framework and library releases, submitters' tuning), relative to the
//    default round, which has no offset. `--round R` prices a prediction with round R's offsets.
// A result's kernels run at the product of the offsets the set holds for its keys (1 for none).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ttsim {

std::string software_stack(const std::string& submitter, const std::string& gpu_family);
// "round:5.0/bert/GB200"; is_round_offset tells such keys from stacks.
std::string round_offset_key(const std::string& round, const std::string& workload, const std::string& gpu_family);
bool is_round_offset(const std::string& key);
// The keys of a result without its round: its stack.
std::vector<std::string> speed_keys(const std::string& submitter, const std::string& gpu_family);
// The product of `stack_speeds` over `keys` (1 where the set holds none of them).
double speed_of(const std::vector<std::string>& keys, const std::map<std::string, double>& stack_speeds);

}  // namespace ttsim
