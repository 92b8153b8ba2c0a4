#include "models/calibration/software_stack.hpp"

namespace ttsim {

std::string software_stack(const std::string& submitter, const std::string& gpu_family) {
    return submitter + "/" + gpu_family;
}

std::string round_offset_key(const std::string& round, const std::string& workload, const std::string& gpu_family) {
    return "round:" + round + "/" + workload + "/" + gpu_family;
}

bool is_round_offset(const std::string& key) { return key.rfind("round:", 0) == 0; }

std::vector<std::string> speed_keys(const std::string& submitter, const std::string& gpu_family) {
    return {software_stack(submitter, gpu_family)};
}

double speed_of(const std::vector<std::string>& keys, const std::map<std::string, double>& stack_speeds) {
    double speed = 1.0;
    for (const std::string& key : keys)
        if (const auto found = stack_speeds.find(key); found != stack_speeds.end()) speed *= found->second;
    return speed;
}

}  // namespace ttsim
