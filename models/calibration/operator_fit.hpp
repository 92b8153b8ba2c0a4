// Calibration of the operator-level model (the default compute model) with the loss and switches of the lumped fit
// (calibration.hpp, fit_loss.hpp).
//
// Parameters, all searched on their logarithms within physical bounds by NLopt BOBYQA, each declared once with its
// meaning, unit, bounds and prior in parameter_table.cpp (build_layout in operator_fit.cpp lays them out):
//  - kernel-class efficiencies (GEMM, convolution, attention: fractions of the dense tensor-core peak at a
//    wave-aligned shape) and the memory efficiency (fraction of HBM bandwidth), shared by every workload and
//    every GPU: the same cuBLAS/cuDNN/flash-attention kernels run on every family of the data;
//  - the host's cost per eager kernel launch (a CUDA-graph launch is 2x it: one cudaGraphLaunch of a captured
//    segment costs about two kernel launches) and the GPU time per kernel beyond its roofline, shared;
//  - a speed factor per GPU family besides the reference GPU (H100-SXM = 1): what the roofline of the family's
//    specifications (peak, HBM, SMs) does not explain (kernel maturity, clocks under power caps);
//  - per workload: the fixed cost per optimizer step (data loader, loss scaling, host synchronisation), searched
//    only where its results run at two or more per-GPU batches, overlapping a step replayed as one CUDA graph; the
//    per-run overhead, measured in the logs (first-segment excess, plus the final asynchronous scoring) where they
//    give it, else searched; with evaluations on the clock, the eager host operations per evaluation sample;
//  - shared: the host cost per kernel of the eager evaluation loops, the share of TP/CP collective time exposed,
//    the relative step-time noise per node;
//  - a speed factor per software stack (submitter / GPU family) with a log-normal prior of 10 % spread around 1
//    (parameter_table.hpp): a stack with few results stays near its family; over several rounds, a speed per
//    (round, workload, GPU family) besides the default round's, with the same prior.
// The fit runs in two stages: every term but the evaluations' host work first, then those and the per-run
// overheads with the rest held. A parameter no fitted result can see (a per-run cost without a time to train, an
// evaluation cost without an evaluation, step-time noise without a multi-node job) is not searched.
// Every (workload, GPU) group of the data gets a profile with these values; GPUs without results get a
// transferred one (ProfileSet::find), whose roofline uses the target's own peak, HBM and SM count.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/calibration/software_stack.hpp"

namespace ttsim {

// The speed-offset keys of a result (software_stack.hpp): its stack, then its round's offset where its round is not
// the default round (fitted only where the data span several rounds).
std::vector<std::string> speed_keys(const CalibrationPoint& point);

// With `held` (a user's runs against the shipped profiles): the global and GPU-family parameters (kernel-class
// efficiencies, launch and per-kernel costs, GPU speeds, TP/CP exposure, step noise) are held at `held`'s values and
// only the workload and software-stack terms are fitted: a few rows cannot tell a GEMM efficiency from their own
// stack's speed, so they move the stack's offset, not the physics every other prediction shares.
CalibrationReport calibrate_operator_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                            const SharedFit& shared, const ConvergenceLags& convergence_lags = {},
                                            const ProfileSet* held = nullptr);

}  // namespace ttsim
