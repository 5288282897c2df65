#pragma once
/// What a flash1/flash2 CTA keeps in shared memory and what it spills to global memory when its
/// tiles exceed the per-CTA shared-memory limit and `allow_spill` is set (docs/spill.md).
///
/// Policy: the spilling kernel's working set is the one of FlashAttention's SRAM accounting —
/// the Q tile, the K/V buffers (flash2: `stages` K and V tiles; flash1: one K and one V tile) and
/// the score tile S/P (block_q × block_kv elements). It keeps whole rows in shared memory in that
/// priority order (Q rows first, then K/V rows, the same number in every K and V buffer, then
/// score rows) up to the limit; every other row lives in the CTA's slice of a global scratch
/// tensor "spill". A spilled row is written there once when produced (Q and K/V after their load,
/// S after QKᵀ, P after the softmax) and read back each time it is used (Q and K by QKᵀ, S by the
/// softmax, V and P by PV).

#include <algorithm>
#include <cstdint>

#include "models/workload_params.h"

namespace memwall {

/// The spill layout of one resolved flash1/flash2 workload. Row counts are of full-size tiles
/// (block_q and block_kv clamped to seq); a smaller edge tile spills rows − min(rows, kept).
struct SpillPlan {
  bool active = false;              ///< false: the tiles fit (or no spilling asked): no spill ops
  std::uint64_t limit_bytes = 0;    ///< the shared memory the CTA declares when active
  std::uint64_t q_keep_rows = 0;    ///< Q rows kept in shared memory (of block_q)
  std::uint64_t kv_keep_rows = 0;   ///< rows kept in each K and each V buffer (of block_kv)
  std::uint64_t score_keep_rows = 0;  ///< score-tile rows kept (of block_q, block_kv each)
  std::uint64_t kv_buffers = 0;     ///< K/V buffer pairs: flash2 stages, flash1 1

  // The CTA's scratch slice, in elements of the workload's dtype: [Q | K/V buffers | scores].
  std::uint64_t kv_offset = 0;      ///< first element of K/V buffer pair b: kv_offset + b·2·kv_spill
  std::uint64_t score_offset = 0;   ///< first element of the spilled score rows
  std::uint64_t scratch_elements = 0;  ///< elements of one CTA's slice (the spill tensor's columns)
  std::uint64_t scratch_rows = 0;   ///< CTAs with a slice (the spill tensor's rows)

  /// Spilled rows of a Q tile with `rows` rows.
  std::uint64_t q_spilled(std::uint64_t rows) const { return rows - std::min(rows, q_keep_rows); }
  /// Spilled rows of a K (or V) tile with `cols` rows.
  std::uint64_t kv_spilled(std::uint64_t cols) const { return cols - std::min(cols, kv_keep_rows); }
  /// Spilled rows of a score tile with `rows` rows.
  std::uint64_t score_spilled(std::uint64_t rows) const {
    return rows - std::min(rows, score_keep_rows);
  }
};

/// The shared memory a flash1/flash2 forward CTA needs with its tiles all on chip, in bytes:
/// (block_q + 2·buffers·block_kv)·head_dim·element size, blocks clamped to seq.
std::uint64_t flash_tile_smem_bytes(const WorkloadParams& resolved);

/// The plan of a resolved workload: inactive unless it is flash1/flash2 with allow_spill, a
/// shared-memory limit, and tiles (flash_tile_smem_bytes) over that limit.
SpillPlan spill_plan(const WorkloadParams& resolved);

}  // namespace memwall
