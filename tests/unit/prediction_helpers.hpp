// Shared by the unit tests that build predictions: a request without the extra 8-GPU reference run, and the
// shipped profiles loaded once.
#pragma once

#include <string>

#include "models/training/predict.hpp"
#include "sim/errors.hpp"

namespace ttsim::test {

inline PredictionRequest prediction_request(const std::string& workload, const std::string& system, int gpus) {
    PredictionRequest r;
    r.workload = workload;
    r.system = system;
    r.gpus = gpus;
    r.compute_efficiency_vs_8gpu = false;
    return r;
}

// The request field an InputError names, or "(none)" when `body` does not throw one.
template <class Body>
std::string error_key(Body body) {
    try {
        body();
    } catch (const InputError& e) {
        return e.field() ? std::string(to_string(*e.field())) : "no field: " + e.key();
    }
    return "(none)";
}

inline const ProfileSet& shipped_profile_set() {
    static const ProfileSet set = ProfileSet::load_dir(ProfileSet::default_dir());
    return set;
}

}  // namespace ttsim::test
