#pragma once
/// The two traffic sources `memwall io` compares, each behind a plain function so that the closed
/// forms (models/closed_forms.h) and the simulator (sim/engine/simulator.h) meet in no one file.

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload_params.h"
#include "sim/hw/config.h"

namespace memwall {

/// Global bytes of a workload, read and written.
struct IoBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
  std::uint64_t total() const { return read + write; }
};

/// The closed form of `params` (resolved first): every global byte the kernels read and write.
IoBytes closed_form_bytes(const WorkloadParams& params);

/// What one simulation of the workload moved.
struct IoSimulated {
  IoBytes l2;  ///< SM → L2 bytes (loads, stores)
  IoBytes dram;  ///< HBM bytes read and written back
  std::uint64_t dram_dirty_at_end = 0;  ///< dirty in L2 at the end, never written back
  double time_s = 0;  ///< simulated time
};

/// Simulates resolved `params` on `config`, flushing the L2 between kernels when `flush_l2`.
IoSimulated simulate_io(const HardwareConfig& config, const WorkloadParams& params,
                        bool flush_l2 = false);

}  // namespace memwall
