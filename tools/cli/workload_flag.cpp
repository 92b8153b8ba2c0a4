#include "tools/cli/workload_flag.hpp"

#include "models/workloads/workload.hpp"
#include "tools/cli/model_flag.hpp"

namespace ttsim::cli {

std::string workload_flag_help() {
    std::string names;
    for (const std::string& name : workload_names()) names += (names.empty() ? "" : ", ") + name;
    return names + "; or a user model's YAML file (*.yaml: a user-model scenario, whose model: is taken, or the model "
                   "mapping itself, as in scenarios/llama3.1-70b.yaml), priced with the operator model at its fastest layout";
}

std::optional<UserModel> user_model_flag(const ArgParser& parser) {
    const std::string value = parser.get("workload");
    if (!names_model_file(value)) {
        try {
            (void)find_workload(value);
        } catch (const InputError& e) {
            parser.fail("workload", e.message() + "; or a user model's YAML file (*.yaml)");
        }
        return std::nullopt;
    }
    try {
        return load_user_model_file(value);
    } catch (const InputError& e) {
        if (e.where().line == 0) parser.fail("workload", e.what());   // the file itself: missing, a folder, too big
        throw;
    }
}

void require_operator_model(const ArgParser& parser, const std::optional<UserModel>& model) {
    if (model && model_flag(parser) != ComputeModel::operator_level)
        parser.fail("model", std::string(kUserModelOperatorOnly));
}

}  // namespace ttsim::cli
