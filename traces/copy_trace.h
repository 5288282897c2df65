#pragma once
/// Pumps a whole TraceSource into a TraceSink (e.g. a model into a TraceWriter), CTA by CTA.

#include <cstdint>

#include "traces/trace_source.h"

namespace memwall {

/// What copy_trace moved.
struct CopyStats {
  std::uint64_t kernels = 0;
  std::uint64_t ctas = 0;
  std::uint64_t ops = 0;
};

/// Calls sink.begin, then kernel / cta_begin / op* / cta_end for everything `source` yields, then
/// sink.end. Memory stays bounded by one CTA's ops.
CopyStats copy_trace(TraceSource& source, TraceSink& sink);

}  // namespace memwall
