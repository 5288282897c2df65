#pragma once
/// The interface a model kernel emits its ops through: one call per tile-level op, appended to the
/// current CTA's op list. The kernel code decides the order; the Recorder only builds `Op`s.

#include <cstdint>
#include <vector>

#include "traces/op.h"

namespace memwall {

class Recorder {
 public:
  /// Appends to `ops` (not cleared); `ops` must outlive the Recorder.
  explicit Recorder(std::vector<Op>& ops) : m_ops(&ops) {}

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
  std::vector<Op>* m_ops;
};

}  // namespace memwall
