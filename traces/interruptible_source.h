#pragma once
/// A TraceSource that polls for Ctrl-C (SIGINT) and SIGTERM at every kernel and every CTA it hands
/// out, so that a simulation stops during its setup and between kernels, not only every 4096
/// events of the engine's loop (issue 18, finding 10: a short replay interrupted during setup ran
/// on and wrote its output). The poll is a relaxed atomic load.

#include <vector>

#include "sim/core/interrupt.h"
#include "traces/trace_source.h"

namespace memwall {

/// Forwards to `inner`, throwing Interrupted (sim/core/interrupt.h) before each kernel and CTA
/// once a signal has arrived.
class InterruptibleSource final : public WrappingSource {
 public:
  explicit InterruptibleSource(TraceSource& inner) : WrappingSource(inner) {
    throw_if_interrupted();
  }

  bool next_kernel(KernelInfo& kernel) override {
    throw_if_interrupted();
    return WrappingSource::next_kernel(kernel);
  }

  bool next_cta(std::vector<Op>& ops) override {
    throw_if_interrupted();
    return WrappingSource::next_cta(ops);
  }
};

}  // namespace memwall
