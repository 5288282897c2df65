#pragma once
/// Load for load: the SM → L2 bytes of the model's ops, kernel by kernel, against what Nsight
/// Compute counted on the real kernels. No timing is simulated: the bytes are counted straight
/// from the ops (each box row in whole 32-byte sectors, as the hardware moves them).
///
/// Checked: the model's reads against the SM-side crossbar read bytes (xbar_read_bytes) and its
/// writes against the lts write sectors × 32 (l2_write_bytes). Reported, not checked: the lts read
/// sectors × 32 (l2_read_bytes) over the model's reads, which is below 1 where the H200 merges
/// identical reads of CTAs running together before they reach the L2 slices (docs/cuda.md).

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload_params.h"
#include "studies/calibration_measured.h"

namespace memwall {

/// SM → L2 bytes of one kernel launch, counted in whole sectors.
struct KernelSectorBytes {
  std::string name;
  std::uint64_t read_bytes = 0;  ///< load boxes: Σ rows × sectors spanned by a row × sector bytes
  std::uint64_t write_bytes = 0;  ///< store boxes, likewise
};

/// Counts the sector bytes of every kernel of `params` (resolved first) from the model's ops.
/// `sector_bytes` > 0 (UsageError otherwise).
std::vector<KernelSectorBytes> count_sector_bytes(const WorkloadParams& params,
                                                  std::uint64_t sector_bytes = 32);

/// One profiled kernel: model bytes against the three measured counters.
struct LoadCheckRow {
  std::size_t case_index = 0;  ///< into the cases given to run_load_check
  std::string kernel;
  int line = 0;  ///< the measured row's CSV line
  double model_read = 0;  ///< bytes
  double model_write = 0;  ///< bytes
  double xbar_read = 0;  ///< measured, bytes
  double lts_read = 0;  ///< measured l2_read_bytes
  double lts_write = 0;  ///< measured l2_write_bytes
  double read_error = 0;  ///< model_read / xbar_read − 1
  double write_error = 0;  ///< model_write / lts_write − 1 (0 when both are 0)
  double coalescing = 0;  ///< lts_read / model_read (1 when model_read is 0)
  bool pass = false;  ///< |read_error| and |write_error| within the tolerance
};

/// lts read / model read over one group of kernels (one workload's kernel).
struct CoalescingSummary {
  std::string workload;
  std::string kernel;
  std::size_t rows = 0;
  double min_ratio = 0;
  double mean_ratio = 0;
  double max_ratio = 0;
  std::string min_label;  ///< case with the smallest ratio
};

/// The check over every profiled kernel of `cases`.
struct LoadCheck {
  double tolerance = 0.02;
  std::vector<LoadCheckRow> rows;  ///< in case order, then kernel order
  std::vector<CoalescingSummary> summary;  ///< sorted by workload, then kernel
  std::size_t skipped = 0;  ///< kernel rows without ncu data
  std::size_t failures() const;
};

/// Counts and compares every profiled kernel of `cases` (`threads` ≥ 1 cases in parallel; the
/// result does not depend on it). Throws UsageError when a case's kernels differ from the model's.
LoadCheck run_load_check(const std::vector<MeasuredCase>& cases, double tolerance = 0.02,
                         unsigned threads = 1);

/// The text report: every row whose check fails (or every row with `all_rows`), the coalescing
/// table per workload and kernel, and a one-line verdict.
std::string load_check_to_text(const LoadCheck& check, const std::vector<MeasuredCase>& cases,
                               bool all_rows);

}  // namespace memwall
