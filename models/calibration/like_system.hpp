// `--like SUBMITTER/SYSTEM`: a prediction for a named system uses that software stack's speed
// offset from the profile set (ProfileSet::stack_speeds, fitted by the operator calibration
// on the rounds' results or on a user-runs file's labels); an unnamed system uses the pooled value, 1.
//
// A stack is a submitter on a GPU family ("NVIDIA/H100-SXM", software_stack.hpp), with its NGC release where a
// set has release offsets: what a user
// types is the submitter and system of a v4.1 result ("NVIDIA/eos_n8_ngc23.04_pytorch", the system giving the
// family), the label of a user-runs row ("MyLab/cluster-a", whose family is the GPU it ran on: the prediction's),
// or the stack itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/compute/compute_profile.hpp"

namespace ttsim {

struct LikeChoice {
    std::string stack;                 // the stack_speeds keys used ("NVIDIA/H100-SXM x ngc24.09/H100-SXM")
    double speed = 1.0;                // kernel times are divided by it
    std::vector<std::string> warnings; // e.g. the stack's family is not the predicted GPU
};

// The stack `like` names, for a prediction on `gpu` (catalog name). InputError without a field or location (the
// front end names its flag): no offsets in the set (saying how to fit them), a malformed name, or a name that
// matches no stack (listing the valid ones).
LikeChoice resolve_like(const ProfileSet& profiles, const std::string& like, const std::string& gpu);

// `profiles` with every `gpu` profile's operator stack speed multiplied by choice.speed.
ProfileSet with_stack_speed(const ProfileSet& profiles, const std::string& gpu, const LikeChoice& choice);

// What `like` did, per GPU family: the choice's warnings and the offset applied.
using LikeNotes = std::map<std::string, std::vector<std::string>>;
// `profiles` with `like` resolved and applied for each of `gpus` (a plan's or a sweep's GPU families), `notes`
// keyed by those GPUs. InputError as resolve_like.
ProfileSet with_like(const ProfileSet& profiles, const std::string& like, const std::vector<std::string>& gpus,
                     LikeNotes& notes);
// `profiles` with round `round`'s software offsets (software_stack.hpp round_offset_key) applied to every profile
// that has one; the default round has none (returned unchanged). InputError (no field: the front end names its
// flag or key) where the set holds no offset of that round. `notes` receives what was applied.
ProfileSet with_round(const ProfileSet& profiles, const std::string& round, const std::string& default_round,
                      std::vector<std::string>& notes);

// Every GPU's notes in one list (a plan's candidates share them).
std::vector<std::string> all_notes(const LikeNotes& notes);

}  // namespace ttsim
