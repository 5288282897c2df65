#pragma once
/// The measured CSV of the real CUDA kernels (traces/measured/*-sweep.csv, docs/cuda.md) read as
/// cases: one case per distinct parameter set, holding its kernels' rows (the "total" rows are
/// dropped; a case's figures are its kernels'). Every figure is in base units (seconds, bytes).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workload_params.h"
#include "sim/core/error.h"

namespace memwall {

/// One measured kernel launch of a case.
struct MeasuredKernel {
  std::string name;  ///< qk, softmax, pv or flash2_fwd
  int line = 0;  ///< 1-based line of its row in the CSV
  double time_s = 0;  ///< CUDA-event median, s
  std::optional<double> ncu_time_s;  ///< gpu__time_duration under ncu (L2 flushed before it), s
  std::optional<double> dram_read_bytes;
  std::optional<double> dram_write_bytes;
  std::optional<double> l2_read_bytes;  ///< lts read sectors from the SMs × 32 (after coalescing)
  std::optional<double> l2_write_bytes;  ///< lts write sectors from the SMs × 32
  std::optional<double> xbar_read_bytes;  ///< L1TEX ← L2 bytes counted at the SMs
  std::optional<double> xbar_write_bytes;  ///< L1TEX → L2 bytes counted at the SMs

  /// True when the row carries every ncu column (time and bytes).
  bool profiled() const {
    return ncu_time_s && dram_read_bytes && dram_write_bytes && l2_read_bytes && l2_write_bytes &&
           xbar_read_bytes && xbar_write_bytes;
  }
};

/// One measured case: a workload's parameters and its kernels in launch order.
struct MeasuredCase {
  WorkloadParams params;  ///< as in the CSV (resolved: every tiling field set)
  std::string label;  ///< "flash2 B=1 H=8 N=512 d=64 Br=128 Bc=128 st=2"
  int line = 0;  ///< line of its first row
  std::vector<MeasuredKernel> kernels;

  /// True when every kernel row is profiled.
  bool profiled() const;
};

/// Reads `path` (the columns of docs/cuda.md; extra columns are ignored). Rows of one case are
/// grouped by their parameter columns, in file order. The shape columns batch, heads, seq and
/// head_dim, and kernel, time_s and the ncu columns, are required; any other parameter column
/// (kMeasuredParamColumns, kMeasuredVariantColumns of studies/measured_join.h) may be missing,
/// which is the parameter's default as on the command line (workload flash2, dtype fp16, the
/// workload's tiling, kv_heads = heads, seq_kv = seq, causal 0, splits 1). Throws UsageError
/// naming the file, the line and the column on a missing column, a malformed number or parameter,
/// or a case whose workload parameters do not resolve.
std::vector<MeasuredCase> read_measured_cases(const std::string& path);

/// A short label for a case's parameters (the tiling fields it uses, and the variant parameters
/// that are not their defaults: "Hkv=8 Nkv=16384 causal ... S=4").
std::string case_label(const WorkloadParams& params);

/// The kernel of `kernels` (the model's simulated or counted kernels, each with a `name`) that
/// measured kernel `k` of case `mc` compares with. Throws UsageError naming `k`'s CSV line when
/// the model has no kernel of that name.
template <class Kernel>
const Kernel& model_kernel(const std::vector<Kernel>& kernels, const MeasuredCase& mc,
                           const MeasuredKernel& k) {
  const auto it = std::find_if(kernels.begin(), kernels.end(),
                               [&](const Kernel& m) { return m.name == k.name; });
  if (it == kernels.end()) {
    throw UsageError("line " + std::to_string(k.line) + ": the model of " + mc.label +
                     " has no kernel \"" + k.name + "\"");
  }
  return *it;
}

}  // namespace memwall
