#pragma once
/// The vocabulary of a trace: a workload is a sequence of kernel launches; a launch is a grid of
/// CTAs with their resource needs; a CTA is a sequence of tile-level ops (see docs/trace-format.md).
///
/// A box op (load/store) names a 2-D region of global memory: `rows` rows of `row_bytes` bytes,
/// consecutive rows `pitch` bytes apart, starting at byte address `base`. The simulator expands it
/// into 128-byte lines and 32-byte sectors; the trace never does.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memwall {

enum class OpKind : std::uint8_t {
  load = 0,  ///< async global → shared copy of `box`; completes under `tag`
  /// shared/registers → global copy of `box`: posted (drained at the CTA's end); with a nonzero
  /// `tag`, a wait on that tag also waits until it has reached the L2 (a TMA store whose shared
  /// buffer is written again after cp.async.bulk.wait_group)
  store = 1,
  wait = 2,  ///< block until every load issued so far with `tag` has arrived
  /// `amount` FLOPs (or ops) on `unit`; with a nonzero `tag` (trace format version 5)
  /// asynchronous, as wgmma.mma_async: the CTA goes on, and a wait on the tag waits for it
  compute = 3,
  smem = 4,  ///< `amount` bytes of shared-memory traffic (reads + writes)
  barrier = 5,  ///< __syncthreads(): orders the ops around it; no data
  /// registers → global atomic add of `box` (red.global.add; fire and forget, drained at CTA
  /// end): the bytes travel as a store's, and the L2 reads every sector it does not hold before
  /// adding to it. Trace format version 2.
  reduce = 6,
};

/// Whether `kind` moves data from the SM to global memory (a store or a reduction).
constexpr bool writes_global(OpKind kind) {
  return kind == OpKind::store || kind == OpKind::reduce;
}

enum class ComputeUnit : std::uint8_t {
  tensor = 0,  ///< tensor cores (fp16/bf16 matrix products)
  fp32 = 1,  ///< CUDA cores, fp32
  sfu = 2,  ///< special-function units (exp, reciprocal)
  issue = 3,  ///< the SM's warp schedulers: an amount of warp instructions issued (trace v3)
  mma_sync = 4,  ///< tensor cores through warp-level mma.sync, at its own rate (trace v3)
  /// `amount` SM cycles that a warpgroup's chain of dependent instructions takes at least, on no
  /// shared pipe: its issue latency, which its own pipe bookings do not show (trace v5)
  latency = 5,
};

/// A 2-D region of global memory.
struct Box {
  std::uint64_t base = 0;  ///< byte address of the first row
  std::uint32_t rows = 0;  ///< number of rows, > 0
  std::uint32_t row_bytes = 0;  ///< bytes per row, > 0
  std::uint64_t pitch = 0;  ///< bytes from one row's start to the next's (>= row_bytes if rows > 1)

  std::uint64_t bytes() const { return static_cast<std::uint64_t>(rows) * row_bytes; }
  friend bool operator==(const Box&, const Box&) = default;
};

/// One tile-level op of a CTA. Fields not used by a kind are zero.
struct Op {
  OpKind kind = OpKind::barrier;
  ComputeUnit unit = ComputeUnit::tensor;  ///< compute: which pipe
  std::uint8_t tensor = 0;  ///< load/store/reduce: index into WorkloadInfo::tensors
  /// load, store, compute: completion tag (0: untracked / synchronous); wait: the tag waited for
  std::uint16_t tag = 0;
  Box box;  ///< load/store/reduce: the region
  std::uint64_t amount = 0;  ///< compute: FLOPs or ops; smem: bytes

  friend bool operator==(const Op&, const Op&) = default;
};

/// A named tensor in global memory, so every byte can be attributed ("Q", "K", "S", ...).
struct TensorInfo {
  std::string name;
  std::uint64_t base = 0;  ///< byte address
  std::uint64_t bytes = 0;  ///< extent
  friend bool operator==(const TensorInfo&, const TensorInfo&) = default;
};

/// What a workload is: its name ("flash2"), its parameters in a fixed order, its tensors.
struct WorkloadInfo {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  ///< e.g. {"seq", "4096"}, in order
  std::vector<TensorInfo> tensors;
  friend bool operator==(const WorkloadInfo&, const WorkloadInfo&) = default;
};

/// One kernel launch: its grid and what each CTA needs to be resident on an SM.
struct KernelInfo {
  std::string name;  ///< e.g. "qk", "softmax", "pv", "flash2_fwd"
  std::uint64_t ctas = 0;  ///< CTAs in the grid, launched in index order
  std::uint32_t threads_per_cta = 0;
  std::uint64_t smem_bytes_per_cta = 0;  ///< shared memory per CTA
  std::uint32_t registers_per_thread = 0;
  friend bool operator==(const KernelInfo&, const KernelInfo&) = default;
};

}  // namespace memwall
