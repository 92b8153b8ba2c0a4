// How often a long job checkpoints, and what a checkpoint and a restart cost.
//
// Young (1974) and Daly (2006) give the interval tau (work between two checkpoints) that minimises the expected
// wall time of a job failing at exponential times with mean M, each checkpoint blocking it for delta:
//
//   Young:  tau = sqrt(2 delta M)
//   Daly:   tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))] - delta,  delta < 2M
//           tau = M,                                                                        delta >= 2M
//
// Daly's is the higher-order expansion of the exact optimum (J. T. Daly, "A higher order estimate of the optimum
// checkpoint interval for restart dumps", FGCS 22, 2006); Young's is its first term. Daly's expected wall time of
// a job of W seconds of work, restarting in R seconds after each failure (failures may strike a restart too):
//
//   T(tau) = M e^(R/M) (e^((tau + delta)/M) - 1) W / tau
//
// which the Monte Carlo (run_simulation.hpp) reproduces and tests hold it to.
#pragma once

namespace ttsim::reliability {

double young_interval_seconds(double checkpoint_seconds, double mttf_seconds);
double daly_interval_seconds(double checkpoint_seconds, double mttf_seconds);
// Daly's expected wall time above (seconds); infinite where it overflows.
double daly_expected_wall_seconds(double work_seconds, double interval_seconds, double checkpoint_seconds,
                                  double restart_seconds, double mttf_seconds);

// The model's state a checkpoint holds once (bytes): every parameter's weight and the trainable ones' optimizer
// state (ReliabilityData's bytes per parameter).
double checkpoint_bytes(double total_parameters, double trainable_parameters, double weights_bytes_per_parameter,
                        double optimizer_bytes_per_parameter);
// Seconds to move `bytes` to or from storage: the file system's rate, or the job's hosts' own storage links where
// those are slower (a small job cannot use a 2 TB/s file system through one host's 100 GB/s).
double storage_seconds(double bytes, double storage_bytes_per_s, double hosts, double host_storage_bytes_per_s);

}  // namespace ttsim::reliability
