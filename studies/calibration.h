#pragma once
/// `memwall calibrate`: the simulator against the real kernels measured on a GPU, and a fit of the
/// config's achieved-vs-peak efficiencies to those measurements.
///
/// Every measured kernel is simulated as Nsight Compute ran it: each kernel of a case starts with
/// a flushed L2 (SimOptions::flush_l2_between_kernels; the first kernel of a fresh simulation
/// starts cold anyway). The simulated kernel time (KernelResult::duration, launch overhead
/// included) is compared with ncu_time_s, DRAM bytes (read + write) with dram_*_bytes, and SM → L2
/// bytes (read + write) with the SM-side xbar_*_bytes (docs/calibration.md says why not lts).
///
/// The fit: Levenberg–Marquardt on the residuals log(simulated / measured time) of every kernel of
/// the fit cases, over the logarithms of the chosen parameters (so efficiencies stay positive and
/// overheads non-negative), with forward-difference Jacobians (one simulation sweep per parameter)
/// and each step solved by Eigen (LDLT of JᵀJ + λ·diag(JᵀJ)), shortened so that no parameter
/// changes by more than a factor e in one step. Efficiencies are clamped to [0.01, 1], overheads
/// to [1 ps, 100 us]; a launch overhead below 1 us starts at 1 us, a per-op one below 10 ns at 10 ns.
///
/// Cases are split by a fixed rule: held out when N (seq) is 1024 or 8192 (2 of the 6 sequence
/// lengths of the sweep: a third), fitted otherwise. Only fit cases whose model SM → L2 bytes are
/// within CalibrationOptions::fit_budget_bytes enter the fit's iterations (to keep it fast); every
/// case within eval_budget_bytes (default: all) is simulated with the final values for the
/// reported errors.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/hw/config.h"
#include "studies/calibration_measured.h"

namespace memwall {

/// A parameter the fit may move: an `efficiency.*` key of the config.
enum class FitParam : std::uint8_t {
  tensor,
  mma_sync,
  fp32,
  sfu,
  l2,
  hbm,
  op_overhead,
  launch_overhead,
  pipe_serial,
  l2_capacity  ///< fitted to DRAM bytes (not times), before the others: see run_calibration
};

/// "tensor", "fp32", ... (the key under `efficiency:`).
std::string fit_param_name(FitParam p);
/// Parses a comma list of fit_param_name values; UsageError naming the bad one.
std::vector<FitParam> parse_fit_params(const std::string& list);
/// The parameter's value in `config`: a fraction, or seconds for the overheads.
double fit_param_value(const HardwareConfig& config, FitParam p);
/// Sets the parameter (a fraction, or seconds for the overheads).
void set_fit_param(HardwareConfig& config, FitParam p, double value);

/// Which measured cases a calibration holds out of the fit: those whose parameter `param`
/// (`workload` or a workload parameter: seq, block_q, stages, …) has one of `values`. The default
/// holds out N = 1024 and 8192 (other shapes); `block_kv=64` or `stages=3` hold out kernel
/// variants instead, so that the fit on some tile shapes predicts the others.
struct HoldOutRule {
  std::string param = "seq";
  std::vector<std::string> values = {"1024", "8192"};
};
/// Parses "NAME=V1,V2,…" (UsageError naming what is wrong: no '=', an unknown parameter, an empty
/// value).
HoldOutRule parse_hold_out(const std::string& text);
/// "seq in {1024, 8192}".
std::string hold_out_text(const HoldOutRule& rule);
/// "NAME=V1,V2" (what parse_hold_out reads).
std::string hold_out_flag(const HoldOutRule& rule);
/// Whether `rule` holds `c` out; a case whose workload has no such parameter is not held out.
bool is_held_out(const MeasuredCase& c, const HoldOutRule& rule = {});

/// One simulated kernel beside its measurement.
struct KernelComparison {
  std::size_t case_index = 0;
  std::string kernel;
  int line = 0;  ///< measured row's CSV line
  double sim_time_s = 0;
  double meas_time_s = 0;  ///< ncu_time_s
  double sim_dram = 0;  ///< bytes read + written back during the kernel
  double meas_dram = 0;  ///< dram_read_bytes + dram_write_bytes
  double sim_l2 = 0;  ///< SM → L2 bytes read + written
  double meas_l2 = 0;  ///< xbar_read_bytes + xbar_write_bytes

  double time_error() const { return sim_time_s / meas_time_s - 1.0; }
  double dram_error() const { return meas_dram > 0 ? sim_dram / meas_dram - 1.0 : 0.0; }
  double l2_error() const { return meas_l2 > 0 ? sim_l2 / meas_l2 - 1.0 : 0.0; }
};

/// Simulates the cases `which` (indices into `cases`; only profiled kernels are compared) on
/// `config`, `threads` cases at a time. Rows come in the order of `which`, then kernel order; the
/// result does not depend on `threads`. Throws UsageError when a case's kernels differ from the
/// model's.
std::vector<KernelComparison> compare_cases(const HardwareConfig& config,
                                            const std::vector<MeasuredCase>& cases,
                                            const std::vector<std::size_t>& which,
                                            unsigned threads);

/// Errors over a set of rows, as fractions (0.05 is 5%).
struct ErrorMetrics {
  std::size_t rows = 0;
  double time_mape = 0;  ///< mean |sim/meas − 1| of kernel times
  double time_max_error = 0;  ///< largest |sim/meas − 1| of kernel times
  double time_correlation = 0;  ///< Pearson r of log(sim time) against log(measured time)
  double dram_mape = 0;  ///< over rows whose measured DRAM bytes are > 0
  double dram_max_error = 0;
  double l2_mape = 0;  ///< SM → L2 bytes against xbar bytes
  double l2_max_error = 0;
  std::size_t time_worst = 0;  ///< index into the rows of the largest time error
  std::size_t dram_worst = 0;  ///< index into the rows of the largest DRAM error
};

/// The metrics of `rows` (zeros when empty).
ErrorMetrics error_metrics(const std::vector<KernelComparison>& rows);

/// What `run_calibration` is asked to do.
struct CalibrationOptions {
  std::vector<FitParam> params = {
      FitParam::l2_capacity, FitParam::mma_sync,        FitParam::fp32,       FitParam::sfu,
      FitParam::hbm,         FitParam::launch_overhead, FitParam::pipe_serial};
  std::uint64_t fit_budget_bytes =
      1ull << 30;  ///< fit cases above this (model SM→L2) skip the iterations
  /// Cases above this (model SM→L2 bytes) are not simulated at all (counted in skipped_cases).
  std::uint64_t eval_budget_bytes = ~0ull;
  unsigned max_iterations = 8;  ///< Levenberg–Marquardt steps accepted at most
  HoldOutRule hold_out;  ///< the cases left out of the fit
  unsigned threads = 1;  ///< cases simulated in parallel
  /// Progress lines (one per iteration) go here when set.
  void (*progress)(const std::string& line) = nullptr;
};

/// One fitted parameter.
struct FittedParam {
  FitParam param;
  double initial = 0;  ///< fraction, or seconds
  double value = 0;
};

/// The outcome of a calibration.
struct CalibrationResult {
  std::string measured_path;
  HardwareConfig calibrated;  ///< the base config with the fitted values
  std::vector<FittedParam> fitted;
  std::vector<std::size_t> fit_cases;  ///< profiled cases, not held out
  std::vector<std::size_t> iter_cases;  ///< the fit cases within the budget (the iterations' set)
  std::vector<std::size_t> heldout_cases;  ///< profiled cases held out
  std::vector<std::size_t> small_heldout_cases;  ///< held out with N ≤ 1024: the CI subset
  HoldOutRule hold_out;  ///< the rule that chose heldout_cases
  std::size_t unprofiled_cases = 0;  ///< cases without ncu data (not compared)
  std::size_t skipped_cases = 0;  ///< profiled cases above the evaluation budget
  std::uint64_t eval_budget_bytes = ~0ull;
  std::vector<KernelComparison> fit_rows;  ///< final values, every fit case
  std::vector<KernelComparison> heldout_rows;  ///< final values, every held-out case
  ErrorMetrics before_fit;  ///< the base config on the iterations' set
  ErrorMetrics fit;  ///< final values, fit cases
  ErrorMetrics heldout;  ///< final values, held-out cases
  ErrorMetrics small_heldout;  ///< final values, held-out cases with N ≤ 1024
  unsigned iterations = 0;  ///< accepted steps
  unsigned evaluations = 0;  ///< simulation sweeps over the iterations' set
  unsigned capacity_evaluations = 0;  ///< of which for l2_capacity (0 when not fitted)
  double capacity_dram_mape = 0;  ///< DRAM MAPE of the iterations' set at the fitted l2_capacity
  double initial_cost = 0;  ///< ½Σ log-residual² on the iterations' set, base config
  double final_cost = 0;
  bool evaluated_only = false;  ///< from evaluate_config: `calibrated` is the config as given
};

/// `memwall calibrate --evaluate`: every profiled case of `cases` (within the evaluation budget)
/// simulated on `config` as it is, split into the fit and held-out sets as run_calibration splits
/// them, without fitting anything. `calibrated` is `config`; fitted, before_fit and the costs are
/// empty. calibration_to_text shows the rows and summaries without a fit section.
CalibrationResult evaluate_config(const HardwareConfig& config,
                                  const std::vector<MeasuredCase>& cases,
                                  const std::string& measured_path,
                                  const CalibrationOptions& options);

/// Fits `options.params` of `base` to the measured `cases` and evaluates every profiled case.
/// l2_capacity, when asked for, is fitted first and alone, to the DRAM bytes: the value in
/// 1.00, 0.95, …, 0.25 with the least DRAM MAPE over the iterations' set, refined in steps of
/// 0.01 within ±0.04 of it (a tie keeps the value tried first); the other parameters are then fitted to
/// the times with that capacity.
CalibrationResult run_calibration(const HardwareConfig& base,
                                  const std::vector<MeasuredCase>& cases,
                                  const std::string& measured_path,
                                  const CalibrationOptions& options);

/// The held-out cases with N ≤ 1024 that are profiled (the CI subset, under the default rule), in
/// file order.
std::vector<std::size_t> small_heldout_cases(const std::vector<MeasuredCase>& cases,
                                             const HoldOutRule& rule = {});

/// What a calibrated file at `output` writes after `extends:` for base `config`: the preset id
/// when the base is a preset, otherwise the base's path relative to the output's folder.
std::string calibrated_extends(const std::string& config, const std::string& output);
/// Now, as the calibrated file's `date (UTC)`: "2026-12-01T18:52:07Z".
std::string calibration_date_utc();
/// The `memwall calibrate` command that reproduces a calibrated file (the thread count does not
/// change the result), as its `command:` comment records it.
std::string calibrate_command_line(const std::string& config, const std::string& measured,
                                   const std::string& output, const std::string& params,
                                   const std::string& fit_budget, const std::string& eval_budget,
                                   const std::string& hold_out, unsigned max_iterations);

/// The calibrated YAML: `extends: BASE` and the fitted `efficiency:` keys only, its sources in
/// comments (measured file, `date`, `command`, fit figures).
std::string calibrated_yaml(const CalibrationResult& result, const std::string& base_extends,
                            const std::string& date, const std::string& command);

/// The JSON document: measured, config, params, fit/heldout/heldout_small metrics, rows.
std::string calibration_to_json(const CalibrationResult& result,
                                const std::vector<MeasuredCase>& cases);

/// The text report: fitted values, the per-kernel error table, and the summaries.
std::string calibration_to_text(const CalibrationResult& result,
                                const std::vector<MeasuredCase>& cases);

}  // namespace memwall
