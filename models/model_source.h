#pragma once
/// A TraceSource that generates a model's ops on the fly, CTA by CTA, in constant memory: what
/// `memwall run --workload ...` simulates without a trace file. Replaying the trace file written
/// from the same parameters yields exactly the same kernels and ops.

#include <memory>

#include "models/workload_params.h"
#include "traces/trace_source.h"

namespace memwall {

/// Resolves `params` (defaults, validation: UsageError on bad parameters) and returns a source of
/// its kernels and CTAs in launch order.
std::unique_ptr<TraceSource> make_model_source(const WorkloadParams& params);

}  // namespace memwall
