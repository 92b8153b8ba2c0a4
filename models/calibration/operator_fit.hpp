// Calibration of the operator-level model on the same MLPerf v4.1 results, loss and options as
// the lumped fit (calibration.hpp), selected by SharedFit::operator_model.
//
// Parameters, all searched on their logarithms within physical bounds by one NLopt BOBYQA run:
//  - kernel-class efficiencies (GEMM, convolution, attention: fractions of the dense tensor-core peak at a
//    wave-aligned shape) and the memory efficiency (fraction of HBM bandwidth), shared by every workload and
//    every GPU: the same cuBLAS/cuDNN/flash-attention kernels run on all three families of the data;
//  - the host's cost per eager kernel launch (the CUDA-graph launch is 2x it: one cudaGraphLaunch of a captured
//    segment costs about two kernel launches, a prior), shared;
//  - a speed factor per GPU family besides the reference GPU (H100-SXM = 1): what the roofline of the family's
//    specifications (peak, HBM, SMs) does not explain (kernel maturity on B200, clocks under power caps);
//  - per workload: the fixed cost per optimizer step (data loader, loss scaling, host synchronisation) and, with
//    workload-run-overhead, the cost per run;
//  - the shared options of calibration.hpp that apply (jitter-cv, multi-node, eval-fixed, step-jitter,
//    run-overhead, jitter-nodes, robust, run-logs, config-weights);
//  - with system-speed, a speed factor per software stack (submitter / GPU family) with a log-normal prior of
//    10 % spread around 1 (kSystemSpeedSigma): a stack with few results stays near its family; with
//    release-speed, the same per NGC release on a GPU family where the system name states it;
//  - with eval-step-cost, a fixed cost per step of each workload's evaluation loop (eval_step_seconds).
// Every (workload, GPU) group of the data gets a profile with these values; GPUs without results get a
// transferred one (ProfileSet::find), whose roofline uses the target's own peak, HBM and SM count.
#pragma once

#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/calibration/software_stack.hpp"

namespace ttsim {

// Spread of per-stack speed factors around their family (log-normal sigma), fixed before the option was tried.
inline constexpr double kSystemSpeedSigma = 0.10;

// The speed-offset keys of a result (software_stack.hpp): its stack (system-speed), then its release where its
// system name states it (release-speed), then its round's offset where its round is not the default round (fitted
// only where the data span several rounds).
std::vector<std::string> speed_keys(const CalibrationPoint& point);

CalibrationReport calibrate_operator_points(const std::vector<CalibrationPoint>& points, const std::string& description,
                                            const SharedFit& shared, const ConvergenceLags& convergence_lags = {});

}  // namespace ttsim
