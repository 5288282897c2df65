#pragma once
/// The simulator: wires SMs, crossbar, L2 and HBM together and runs a workload (a TraceSource)
/// through them on a deterministic event queue. See docs/simulator.md for the timing model.

#include "sim/engine/run_result.h"
#include "sim/hw/config.h"
#include "traces/trace_source.h"

namespace memwall {

class TimelineSink;

/// Options of one simulation.
struct SimOptions {
  /// Write back and invalidate the whole L2 before every kernel after the first, as Nsight
  /// Compute does by default (--cache-control all). The written-back bytes are reported as
  /// dram_flush_writeback_bytes and counted in no kernel.
  bool flush_l2_between_kernels = false;
  /// The most memory the simulation may take (`--max-memory`); 0 means the default, half the
  /// machine's RAM. The config's fixed structures are checked before anything runs, the record of
  /// fetched sectors as it grows; passing the limit is a UsageError with the figure.
  Bytes max_memory{};
};

/// Simulates every kernel of `source` in order on `config`. Kernels run one after the other; a
/// kernel's CTAs are pulled in index order and placed breadth-first (round-robin over SMs with
/// room), then each freed slot takes the next CTA. Only resident CTAs' ops are held in memory.
/// Writes the timeline to `timeline` when not null (the caller calls Timeline::finish).
/// Throws UsageError when a kernel's CTA fits no SM, Interrupted on SIGINT.
RunResult simulate(const HardwareConfig& config, TraceSource& source,
                   const SimOptions& options = {}, TimelineSink* timeline = nullptr);

}  // namespace memwall
