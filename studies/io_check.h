#pragma once
/// `memwall io`: Theorem 2 of FlashAttention (and Hong–Kung for matmul) checked three ways. For
/// every point of a sweep of shapes and SRAM sizes it sets the closed form of the workload's
/// global traffic beside the simulated traffic (SM → L2 and HBM) and, where a measured CSV has the
/// point, the measured bytes; then it fits traffic ≈ c·N^e and ≈ c·M^e on log-log axes (Eigen
/// least squares) and prints each fitted exponent beside the one the theory predicts.
///
/// SRAM size M (axis "sram_bytes", elements = bytes / element size) sets the tiling when the
/// blocks are not given: flash1 Bc = ⌈M/4d⌉, Br = min(⌈M/4d⌉, d) (Algorithm 1); flash2
/// Br = Bc = ⌈M/4d⌉; gemm square tiles T = the largest with T² + 2·T·tile_k <= M, rounded down to
/// whole 32-byte sectors per row (a multiple of 16 fp16 elements) when that leaves one. The config's
/// shared memory is raised to at least 4·M bytes so that such a tiling fits a CTA.
/// For gemm the "seq" axis is the size of a square product: m = n = k = seq.
///
/// Ideal mode (`--ideal`) is FlashAttention's two-level model: no cache between SRAM and HBM, so
/// every global access goes to HBM, and one processor. The simulator has no L2-bypass option, so
/// it is made with config overrides: an L2 of a single line (l2.slices = l2.partitions = l2.ways =
/// 1, l2.size = l2.line_size) and one SM running one CTA at a time (sm.count = 1,
/// sm.max_ctas_per_sm = 1; with several SMs, two CTAs touching one line back to back would share
/// it). A line is then reused only by two back-to-back accesses to it, which the tile loops never
/// make; the HBM bytes (reads + write-backs + dirty at the end) then equal the closed form, and
/// each point says whether they do. Its simulated time is not meaningful.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload_params.h"
#include "sim/hw/config.h"
#include "studies/io_fit.h"
#include "studies/io_traffic.h"
#include "studies/sweep_csv.h"
#include "studies/sweep_plan.h"

namespace memwall {

/// How `run_io` simulates.
struct IoOptions {
  std::string config;  ///< config path or preset name
  std::vector<std::string> sets;  ///< fixed --set overrides, applied first
  bool ideal = false;  ///< the two-level model (one SM, single-line L2)
  bool flush_l2 = false;  ///< flush the L2 between kernels (as Nsight Compute measures)
  unsigned threads = 1;  ///< points simulated in parallel
  bool progress = false;  ///< a progress line of the points on stderr (on a terminal only)
};

/// One point: its parameters and its three kinds of traffic.
struct IoPoint {
  SweepPoint axes;  ///< the sweep's values (workload, seq, sram_bytes, ...)
  FlatRow params;  ///< resolved workload parameters (WorkloadParams::named), then sram_bytes
  IoBytes closed_form;  ///< models/closed_forms.h
  IoSimulated sim;  ///< the simulator
  bool ideal = false;  ///< simulated in ideal mode
  std::optional<FlatRow> measured;  ///< the *_bytes cells of the matching measured row
  std::string measured_where;  ///< "FILE:LINE" of that row

  /// HBM bytes as the metric `sim_dram_bytes`: reads + write-backs, plus in ideal mode what is
  /// still dirty at the end (in the two-level model it is written too).
  std::uint64_t sim_dram_bytes() const;
  /// dram_read_bytes + dram_write_bytes of the measured row, when it has both.
  std::optional<double> measured_dram_bytes() const;
  /// l2_read_bytes + l2_write_bytes (SM → L2) of the measured row, when it has both.
  std::optional<double> measured_l2_bytes() const;
};

/// One fitted exponent.
struct IoFit {
  std::string over;  ///< "seq" or "sram"
  std::string metric;  ///< closed_form_bytes, sim_l2_bytes, sim_dram_bytes, measured_l2_bytes,
      ///< measured_dram_bytes
  FlatRow group;  ///< the other axes' values, fixed within the fit
  PowerFit fit;
  double expected = 0;  ///< the exponent the theory predicts
  std::vector<double> x;  ///< the fitted points: N or M (bytes)
  std::vector<double> y;  ///< the metric at each x, bytes
};

/// What `memwall io` reports.
struct IoReport {
  std::string workload;
  std::string config;
  bool ideal = false;
  std::vector<std::string> ideal_overrides;
  std::vector<IoPoint> points;
  std::vector<IoFit> fits;
};

/// The overrides of ideal mode for `base`: one SM, one CTA at a time, a single-line L2.
std::vector<std::string> ideal_overrides(const HardwareConfig& base);

/// The exponent of traffic in N (`over` = "seq") or in M ("sram") that Theorem 2 (attention) or
/// Hong–Kung (gemm) predicts, as the workload's plugin declares it (WorkloadPlugin::io_exponent):
/// naive and naive-bwd 2 and 0; flash1, flash2, flash2-bwd 2 and −1; gemm 3 and −1/2.
double expected_exponent(WorkloadKind workload, std::string_view over);

/// The resolved parameters of a point on `config` (SRAM rules above; smem limit of the config).
WorkloadParams io_params(const SweepPoint& point, const HardwareConfig& config);

/// Runs every point of `plan` (axis "workload" first) and fits. `measured`, when given, is joined
/// on the columns workload, batch, heads, seq, head_dim, dtype, block_q, block_kv, block_k, stages,
/// softmax_rows that it has, and on kv_heads, seq_kv, causal, splits, where a missing column or
/// an empty cell is the default (studies/measured_join.h); when it has a "kernel" column only its
/// "total" rows (the whole workload) are used. Throws UsageError when two measured rows match one
/// point, or naming the file, line and column for a malformed variant cell.
IoReport run_io(const SweepPlan& plan, const IoOptions& options, const CsvTable* measured);

/// The JSON document: workload, config, ideal, ideal_overrides, points, fits (ends in "\n").
std::string io_to_json(const IoReport& report);
/// The text report: a table of points, then a table of fits.
std::string io_to_text(const IoReport& report);

}  // namespace memwall
