#pragma once
/// The machine-readable report of a run (`--json FILE`): stable keys, base units only (bytes,
/// seconds, bytes/s, FLOPs), integers as integers and doubles as "%.9g", so the same run gives
/// byte-identical text. Keys are listed in docs/simulator.md.

#include <string>
#include <vector>

#include "sim/engine/run_result.h"

namespace memwall {

/// The JSON object of one run (ends with a newline).
std::string run_to_json(const RunResult& result);

/// A JSON array of several runs' objects (ends with a newline).
std::string runs_to_json(const std::vector<RunResult>& results);

/// Stall fractions of `stall` over `sm_count` SMs × `span`: {compute, memory_latency,
/// memory_bandwidth, idle}, summing to 1 (all 0 when span is 0).
StallTime stall_fractions(const StallTime& stall, std::uint32_t sm_count, Tick span);

/// Achieved DRAM bandwidth in bytes/s: (read + write) / time; 0 for a zero time.
double achieved_dram_bandwidth(const TrafficCounters& traffic, Tick time);

}  // namespace memwall
