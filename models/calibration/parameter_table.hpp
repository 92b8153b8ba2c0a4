// The operator model's fitted parameters, declared once: what each means, its unit, what it is shared by, its
// physical bounds and its prior (centre and width, from public measurements), and, after a fit, what the data
// determined (the Laplace approximation at the fit's optimum).
//
// Every parameter is searched on its logarithm within [lower, upper], starting at the prior's centre. The prior is
// log-normal: log(value) ~ N(log(centre), log_sd^2). The fit's objective is the data loss (fit_loss.hpp, squared or
// soft-L1 log errors, scale kRobustScale) plus every searched parameter's prior written in the loss's units
// (prior_penalty: z^2 x kRobustScale^2 with z = (log value - log centre) / log_sd; for the software offsets, random
// effects of the submitter and release populations, the heavy-tailed 2 (sqrt(1 + z^2) - 1) x kRobustScale^2): the
// objective is then -2 kRobustScale^2 x the log posterior, a Gaussian likelihood of sd kRobustScale per log error,
// and the fit is the posterior mode.
// The bounds stay as the physics' hard limits.
//
// Identifiability (the Laplace approximation): at the fit's optimum x (log values), the Hessian H of the objective
// by central differences; the posterior precision of the log-parameters is H / (2 kRobustScale^2), each eigenvalue
// at least the weakest prior's precision (the loss is piecewise smooth, max() of roofs, and can bend a difference
// quotient below the priors' curvature that every direction has). Its inverse is the
// parameter covariance. A parameter whose posterior sd is under half its prior sd was determined by the data; one
// above 0.9 of it stayed at its prior; one within a step of a bound sits on it (the Gaussian reading does not hold
// there, and the bound, not the data, placed it).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ttsim {

// What a parameter is shared by.
enum class ParamScope { global, gpu_family, workload, software_stack, round };
std::string_view to_string(ParamScope scope);

struct ParamSpec {
    std::string_view kind;      // "gemm efficiency", "speed" (with the owner's name before it), ...
    ParamScope scope;
    std::string_view meaning;   // the physics, in a phrase
    std::string_view unit;
    double lower, upper;        // physical bounds
    double centre;              // prior centre, and the search's start
    double log_sd;              // prior width: standard deviation of the log
    std::string_view source;    // where the centre and width come from
};

// The table, in the order the fit lays its dimensions out.
const std::vector<ParamSpec>& operator_parameter_specs();
// One row by kind and scope; throws (a bug) for an unknown one.
const ParamSpec& operator_parameter_spec(std::string_view kind, ParamScope scope);

// One parameter's prior in the fit's objective, at log value `log_value` (the module comment's units).
double prior_penalty(const ParamSpec& spec, double log_value);
// The random effects' location: the stack offsets of one GPU family are that family's submitters, drawn around
// it, so their robust location (the M-estimate of the heavy-tailed prior: sum of psi(z) = 0, psi(z) =
// z / sqrt(1 + z^2)) is the family's own speed, 1; the family's common speed is the physics' (efficiencies, the
// family's speed). Without it a fit that sees one submitter on a family is free to put that submitter's whole
// distance from the priors into its offset, and every submitter the fit has not seen inherits the priors' physics.
// Returns the penalty on the stacks' log values `log_values` (all of scope software_stack): (mean psi / tolerance)^2
// x kRobustScale^2, tolerance kStackLocationTolerance sigmas.
double stack_location_penalty(const std::vector<double>& log_values);
inline constexpr double kStackLocationTolerance = 0.05;

// The table as Markdown (docs/calibration.md carries it, and a unit test checks that it is this one).
std::string format_parameter_table();

// What the data said about one fitted parameter.
struct ParameterEstimate {
    std::string name;           // as the fit's description writes it ("bert fixed step seconds")
    const ParamSpec* spec = nullptr;
    double value = 0;
    double prior_log_sd = 0, posterior_log_sd = 0;
    enum class Status { determined, partly, prior, at_bound } status = Status::prior;
};
std::string_view to_string(ParameterEstimate::Status status);

// The Laplace approximation of the module comment: `loss` is the fit's objective (data and priors) over the full log-parameter
// vector, `x` its optimum; `names` and `specs` one per dimension. Returns the estimates and, in `covariance`
// (row-major, n x n, log units; 0 rows and columns for parameters at a bound), the posterior covariance.
std::vector<ParameterEstimate> laplace_estimates(const std::function<double(const std::vector<double>&)>& loss,
                                                 const std::vector<double>& x, const std::vector<std::string>& names,
                                                 const std::vector<const ParamSpec*>& specs,
                                                 std::vector<double>* covariance = nullptr);

// The identifiability report: one line per parameter (value, prior and posterior sd as factors, status), then
// a count of each status.
std::string format_identifiability(const std::vector<ParameterEstimate>& estimates);

}  // namespace ttsim
