#pragma once
/// A pull-based stream of a workload's kernels and CTAs, in launch order. The simulator consumes
/// this; a trace file (TraceReader) and a model generating on the fly both provide it, so a run
/// from a model and the replay of its trace file see exactly the same ops.

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/core/units.h"
#include "traces/op.h"

namespace memwall {

/// The most ops a CTA's list may hold within `memory` (a list may hold twice its ops).
constexpr std::uint64_t cta_op_limit(Bytes memory) {
  const std::uint64_t ops = memory.count / (2 * sizeof(Op));
  return ops == 0 ? 1 : ops;
}

class TraceSource {
 public:
  virtual ~TraceSource() = default;

  /// The workload's description; valid for the source's lifetime.
  virtual const WorkloadInfo& workload() const = 0;

  /// Advances to the next kernel launch and describes it; false once the workload has no more.
  /// Any CTAs of the previous kernel not yet pulled are skipped.
  virtual bool next_kernel(KernelInfo& kernel) = 0;

  /// Replaces `ops` with the ops of the current kernel's next CTA (in index order); false once the
  /// kernel has no more CTAs. Memory stays bounded by one CTA's ops, and those by the limit below.
  virtual bool next_cta(std::vector<Op>& ops) = 0;

  /// From the next CTA on, a CTA of more than `max_ops` ops is refused with CtaOpLimitError
  /// (traces/recorder.h) before `ops` holds more: a persistent kernel's CTA holds its whole loop
  /// over tiles, which grows with the shape. A source that wraps another derives from
  /// WrappingSource, which forwards the limit.
  virtual void limit_cta_ops(std::uint64_t max_ops) { m_max_cta_ops = max_ops; }

 protected:
  std::uint64_t m_max_cta_ops = std::numeric_limits<std::uint64_t>::max();
};

/// A source that hands out another's kernels and CTAs and adds something on the way (a poll for
/// signals, a progress line). Everything is forwarded; a wrapper overrides what it adds to and
/// calls the base. The CTA op limit always reaches the source that holds the ops (final: a
/// wrapper that kept it would limit nothing).
class WrappingSource : public TraceSource {
 public:
  explicit WrappingSource(TraceSource& inner) : m_inner(inner) {}

  const WorkloadInfo& workload() const override { return m_inner.workload(); }
  bool next_kernel(KernelInfo& kernel) override { return m_inner.next_kernel(kernel); }
  bool next_cta(std::vector<Op>& ops) override { return m_inner.next_cta(ops); }
  void limit_cta_ops(std::uint64_t max_ops) final { m_inner.limit_cta_ops(max_ops); }

 private:
  TraceSource& m_inner;
};

/// The receiving side of a trace: what a model's Recorder writes into (a file writer, a counter,
/// an in-memory buffer). Calls come in the order begin, (kernel, (cta, op*, end_cta)*)*, end.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void begin(const WorkloadInfo& workload) = 0;
  virtual void kernel(const KernelInfo& kernel) = 0;
  virtual void cta_begin() = 0;
  virtual void op(const Op& op) = 0;
  virtual void cta_end() = 0;
  virtual void end() = 0;
};

}  // namespace memwall
