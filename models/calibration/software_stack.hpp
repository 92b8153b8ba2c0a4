// Which software a result ran, as the speed offsets of a profile set key it (ProfileSet::stack_speeds):
//  - its stack, a submitter on a GPU family ("NVIDIA/H100-SXM"; system-speed, and the labels of a user's runs);
//  - its NGC container release on the family ("ngc24.04/H100-SXM"; release-speed), where the system name states it
//    as a token, as NVIDIA's and Lambda's do ("eos_n8_ngc24.09_nemo"). The results' `framework` column names
//    releases too, but per system and often several ("NVIDIA Release 24.09 MxNet, pytorch, dgl and 23.09 pytorch"),
//    not per benchmark, so it is not read.
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
// "" where `system` has no token ngcYY.MM (separated by '_' or the name's ends).
std::string software_release(const std::string& system, const std::string& gpu_family);
// "round:5.0/bert/GB200"; is_round_offset tells such keys from stacks and releases.
std::string round_offset_key(const std::string& round, const std::string& workload, const std::string& gpu_family);
bool is_round_offset(const std::string& key);
// The non-empty keys of a result: its stack, then its release.
std::vector<std::string> speed_keys(const std::string& submitter, const std::string& system, const std::string& gpu_family);
// The product of `stack_speeds` over `keys` (1 where the set holds none of them).
double speed_of(const std::vector<std::string>& keys, const std::map<std::string, double>& stack_speeds);

}  // namespace ttsim
