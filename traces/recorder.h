#pragma once
/// The interface a model kernel emits its ops through: one call per tile-level op, appended to the
/// current CTA's op list. The kernel code decides the order; the Recorder only builds `Op`s.

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/core/error.h"
#include "traces/op.h"

namespace memwall {

/// A CTA with more ops than its source may hand out (TraceSource::limit_cta_ops): thrown before
/// the list passes the limit, so that a shape whose CTAs hold more ops than the run may keep in
/// memory is refused instead of allocated. The engine says which kernel, CTA and budget.
class CtaOpLimitError : public UsageError {
 public:
  explicit CtaOpLimitError(std::uint64_t limit);
  std::uint64_t limit() const { return m_limit; }
  /// Why a CTA holds so many ops and what to change: the end of every message that reports it.
  static constexpr const char* kAdvice =
      "A CTA holds its whole loop as ops (a persistent kernel's tiles: --gemm wgmma, flash3; its "
      "K/V or Q blocks at a long sequence), which grows with the shape: use a smaller shape, a "
      "larger --max-memory, or --gemm mma_sync (naive, gemm: one CTA per tile)";

 private:
  std::uint64_t m_limit;
};

class Recorder {
 public:
  /// Appends to `ops` (not cleared); `ops` must outlive the Recorder. Throws CtaOpLimitError
  /// rather than grow `ops` past `max_ops` ops.
  explicit Recorder(std::vector<Op>& ops,
                    std::uint64_t max_ops = std::numeric_limits<std::uint64_t>::max())
      : m_ops(&ops), m_max_ops(max_ops) {}

  /// Async global → shared copy of `box` of tensor `tensor`, completing under `tag`.
  void load(std::uint8_t tensor, const Box& box, std::uint16_t tag);
  /// Copy of `box` of tensor `tensor` to global memory; posted, and with a nonzero `tag` waited
  /// for (until it reaches the L2) by wait(tag).
  void store(std::uint8_t tensor, const Box& box, std::uint16_t tag = 0);
  /// Atomic add of `box` into tensor `tensor` in global memory (red.global.add).
  void reduce(std::uint8_t tensor, const Box& box);
  /// Waits for every load (and tagged store) issued so far under `tag`.
  void wait(std::uint16_t tag);
  /// `amount` FLOPs (or ops) on `unit`; nothing is emitted for 0. With a nonzero `tag` it is
  /// asynchronous (wgmma.mma_async): the CTA goes on at once, and wait(tag) waits for it.
  void compute(ComputeUnit unit, std::uint64_t amount, std::uint16_t tag = 0);
  /// `bytes` of shared-memory traffic; nothing is emitted for 0.
  void smem(std::uint64_t bytes, std::uint16_t tag = 0);
  /// __syncthreads().
  void barrier();

 private:
  void append(const Op& op);

  std::vector<Op>* m_ops;
  std::uint64_t m_max_ops;
};

}  // namespace memwall
