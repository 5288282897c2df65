#pragma once
/// A trace as text, for people: the workload, its tensors, then each kernel and CTA with its ops.

#include <cstdint>
#include <ostream>

#include "traces/trace_source.h"

namespace memwall {

/// One op as text, e.g. "load Q tag=1 base=0x4000 rows=64 row_bytes=256 pitch=256".
std::string format_op(const Op& op, const WorkloadInfo& workload);

/// Writes the header and the ops of `source` to `out`, stopping after `op_limit` ops (0: all).
/// Returns the number of ops printed.
std::uint64_t dump_trace(TraceSource& source, std::ostream& out, std::uint64_t op_limit);

}  // namespace memwall
