// What a fit must satisfy before its profiles are written: the physics any reading of them has to allow.
//
// 1. Ranges. Every fitted quantity within its physical range: kernel-class efficiencies in (0, 1] (the pricing
//    holds a kernel at its roof where a family's or a stack's speed would take it past: operator_step.cpp
//    roof_over_speed); launch costs > 0;
//    host costs, overheads and the step-time spread >= 0; the exposed share of TP/CP traffic in [0, 1].
// 2. Compute at scale. At a fixed per-GPU batch (a published layout with only its data parallelism changed: the
//    same TP, CP, PP, micro batch, micro steps and recipe), the compute part of a step (Prediction::compute_ms
//    less its exposed TP/CP communication, per sample per GPU) at 16, 32 and 64 GPUs is no longer than at 8,
//    except for the straggler stretch of a step-time spread of at most kMaxStepCv:
//        compute(N) <= compute(8) x (1 + kMaxStepCv x (sigma_N - sigma_8)),
//    sigma_N = E[max of N standard normals] over the GPUs (or the nodes, ComputeProfile::step_jitter_per_node).
// 3. Speedup bounds. The fitted 8 -> 64 GPU speedup S = TTT(8) / TTT(64) at that batch lies between
//      ideal:               S_ideal = max(steps(8) / steps(64) x t(8) / (t(8) - o(8) + o(64)),
//                                         8 x evaluations(8) / evaluations(64))
//                           (every part of the work split over 8x the GPUs, a step as long as at 8 GPUs, t(8),
//                           less what a distributed optimizer's smaller shard saves, o(8) - o(64)), and
//      communication-bound: S_comm  = (steps(8) c(8) + E(8)) / (steps(64) (c(64) + comm(64)) + n_E(64) e(8))
//                           (each 64-GPU step pays its compute c(64) and all of its communication comm(64),
//                           data-parallel and TP/CP, nothing hidden; each of its n_E(64) evaluations takes as
//                           long as one at 8 GPUs, e(8); E(8) = the 8-GPU run's evaluation minutes).
//    A fixed per-step host cost only raises S above S_comm (it adds more to the 8-GPU run's steps than to the
//    64-GPU run's). The per-run overhead is left out of both: a fit that puts a run's time into a cost that does
//    not shrink with the GPU count, until a workload stops speeding up, is what the lower bound catches.
// A cell (workload, GPU) that breaks a rule names the fit results most likely behind it: its results with the
// largest |log(predicted / published)|. `ttsim calibrate` refuses such a fit (exit 2) and writes nothing.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"

namespace ttsim {

// The largest per-GPU (per-node) step-time coefficient of variation rule 2 allows for: about twice the largest a fit
// of published results has given (the lumped fit of RetinaNet's v4.1 H100 results at 4-64 GPUs: 2.3 % per node);
// a judgement, not a measured bound.
inline constexpr double kMaxStepCv = 0.05;

struct SanityViolation {
    std::string rule;                        // "range", "compute at scale", "speedup"
    std::string workload, gpu;               // the cell; workload "" for a GPU family's shared parameter
    std::string detail;                      // what broke, with the numbers
    std::vector<PointError> likely_outliers; // the cell's fit results with the largest |log error| (up to 3)
};

struct FitSanity {
    std::vector<SanityViolation> violations;
    std::vector<std::string> unchecked;      // cells rules 2 and 3 could not price, and why
    bool ok() const { return violations.empty(); }
};

// Rule 1 on one profile (no outliers attached).
std::vector<SanityViolation> range_violations(const ComputeProfile& profile);

// The 8, 16, 32 and 64-GPU predictions of a (workload, GPU) profile at one per-GPU batch, on the GPU's preset
// system: its published 8-GPU layout (or, where the convergence data do not reach 8x its batch, its 64-GPU one)
// with only the data parallelism changed.
struct ScalingSeries {
    std::vector<Prediction> predictions;     // at 8, 16, 32, 64 GPUs
    std::vector<double> straggler_sigmas;    // sigma_N of rule 2, per prediction
};
// InputError where the workload cannot run at those counts at one per-GPU batch (convergence data, memory).
ScalingSeries scaling_series(const ComputeProfile& profile);
// Rules 2 and 3 on a series priced with `profile`.
std::vector<SanityViolation> scaling_violations(const ComputeProfile& profile, const ScalingSeries& series);

// Every rule on every calibrated (not transferred) profile of `profiles`; `fitted` (the fit's results) supplies
// each violation's likely outliers.
FitSanity check_fit_sanity(const ProfileSet& profiles, const std::vector<PointError>& fitted);

// The violations, each with its likely outliers, as lines for the error message.
std::string format_fit_sanity(const FitSanity& sanity);

}  // namespace ttsim
