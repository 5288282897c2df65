#pragma once
/// Global-memory traffic summed over a trace's ops: bytes loaded and stored, per kernel and per
/// tensor, plus op and CTA counts. Counts what the ops say (a box's rows × row_bytes), no caches.

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_source.h"

namespace memwall {

/// Bytes loaded from and stored to one tensor.
struct TensorCount {
  std::string tensor;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// Bytes loaded and stored by one kernel launch.
struct KernelCount {
  std::string name;
  std::uint64_t ctas = 0;
  std::uint64_t ops = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// A whole trace's traffic.
struct TraceCounts {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t ctas = 0;
  std::uint64_t ops = 0;
  std::vector<TensorCount> by_tensor;  ///< in the workload's tensor order
  std::vector<KernelCount> kernels;  ///< in launch order
};

/// Pulls every kernel and CTA of `source` (from its current position) and sums the traffic.
TraceCounts count_traffic(TraceSource& source);

}  // namespace memwall
