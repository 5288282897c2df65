#pragma once
/// A flash forward CTA's tiles against the per-CTA shared-memory limit: their footprint, what
/// fits, and what the CTA keeps in shared memory and spills to global memory when the tiles
/// exceed the limit and `allow_spill` is set (docs/spill.md). Shared by flash1 and flash2, which
/// differ only in their FlashLoop.
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
#include <string>

#include "models/closed_forms.h"
#include "models/param_spec.h"
#include "models/workload_params.h"

namespace memwall {

/// How a flash forward kernel walks its tiles: what its footprint and spill plan depend on.
struct FlashLoop {
  std::uint64_t kv_buffers = 1;  ///< K/V buffer pairs in shared memory: flash2 stages, flash1 1
  /// flash1: one CTA per head, outer loop over K/V blocks (each K/V block loaded once, Q, O, ℓ, m
  /// once per pass); flash2 (false): one CTA per (head, Q block) streaming every K/V block.
  bool kv_outer = false;
};

/// The spill layout of one resolved flash1/flash2 workload. Row counts are of full-size tiles
/// (block_q and block_kv clamped to seq); a smaller edge tile spills rows − min(rows, kept).
struct SpillPlan {
  bool active = false;  ///< false: the tiles fit (or no spilling asked): no spill ops
  std::uint64_t limit_bytes = 0;  ///< the shared memory the CTA declares when active
  std::uint64_t q_keep_rows = 0;  ///< Q rows kept in shared memory (of block_q)
  std::uint64_t kv_keep_rows = 0;  ///< rows kept in each K and each V buffer (of block_kv)
  std::uint64_t score_keep_rows = 0;  ///< score-tile rows kept (of block_q, block_kv each)
  std::uint64_t kv_buffers = 0;  ///< K/V buffer pairs: flash2 stages, flash1 1
  bool kv_outer = false;  ///< the kernel's FlashLoop::kv_outer

  // The CTA's scratch slice, in elements of the workload's dtype: [Q | K/V buffers | scores].
  std::uint64_t kv_offset = 0;  ///< first element of K/V buffer pair b: kv_offset + b·2·kv_spill
  std::uint64_t score_offset = 0;  ///< first element of the spilled score rows
  std::uint64_t scratch_elements = 0;  ///< elements of one CTA's slice (the spill tensor's columns)
  std::uint64_t scratch_rows = 0;  ///< CTAs with a slice (the spill tensor's rows)

  /// Spilled rows of a Q tile with `rows` rows.
  std::uint64_t q_spilled(std::uint64_t rows) const { return rows - std::min(rows, q_keep_rows); }
  /// Spilled rows of a K (or V) tile with `cols` rows.
  std::uint64_t kv_spilled(std::uint64_t cols) const { return cols - std::min(cols, kv_keep_rows); }
  /// Spilled rows of a score tile with `rows` rows.
  std::uint64_t score_spilled(std::uint64_t rows) const {
    return rows - std::min(rows, score_keep_rows);
  }
};

/// The shared memory a flash forward CTA needs with its tiles all on chip, in bytes:
/// (block_q + 2·kv_buffers·block_kv)·head_dim·element size, block_q clamped to the query rows of
/// a head (`q_rows`, 0: seq) and block_kv to seq_kv.
std::uint64_t flash_tile_smem_bytes(const WorkloadParams& resolved, std::uint64_t kv_buffers,
                                    std::uint64_t q_rows = 0);

/// The plan of a flash forward kernel walking `loop`: inactive unless `resolved` has allow_spill,
/// a shared-memory limit, and tiles (flash_tile_smem_bytes) over that limit.
SpillPlan plan_spill(const WorkloadParams& resolved, const FlashLoop& loop);

/// The plan of any resolved workload (its plugin's spill_plan): inactive for one that cannot spill.
SpillPlan spill_plan(const WorkloadParams& resolved);

/// The extra traffic of a spilling workload to its scratch tensor "spill", all heads, in bytes:
/// with SQ, SK, SS the spilled rows of the Q, K (= V) and score tiles summed over the Br row
/// tiles (SQ, SS) or the Bc column tiles (SK) of one head, Tr = ⌈N/Br⌉ and Tc = ⌈N/Bc⌉, per head
/// in elements:
///   flash2 writes d·SQ + 2·Tr·d·SK + 2·N·SS, reads Tc·d·SQ + 2·Tr·d·SK + 2·N·SS;
///   flash1 writes Tc·d·SQ + 2·d·SK + 2·N·SS, reads Tc·d·SQ + 2·Tr·d·SK + 2·N·SS.
/// The 2·N·SS terms are the score tile's round trips (S written and read, P written and read):
/// when no score row fits (SS = N) they are naive attention's 2N² reads and writes of S and P.
/// Zero when the plan is inactive. `resolved` must come from resolve_workload.
TensorTraffic spill_traffic(const WorkloadParams& resolved);

/// `traffic` with the spill entry appended when resolved `p`'s plan is active; else unchanged.
Traffic with_spill_traffic(Traffic traffic, const WorkloadParams& p);

/// For a flash plugin's resolve, after its defaults: drops allow_spill without a limit (nothing
/// to spill against) and checks that an active plan's scratch tensor is representable.
void resolve_spill(WorkloadParams& p, const FlashLoop& loop);

/// How the forward kernel's shared memory adds up, for its error: "(block_q 256 + `kv_factor`
/// block_kv 256)·head_dim 128·2 B", with kv_factor e.g. "2·" (flash1) or "2·2·" (flash2).
std::string flash_smem_formula(const WorkloadParams& resolved, const std::string& kv_factor);

/// What fits the forward kernel under `limit_bytes`: the largest block_kv at this block_q, the
/// largest block_q at this block_kv, then the --allow-spill alternative.
std::string flash_smem_fits(const WorkloadParams& resolved, const FlashLoop& loop,
                            std::uint64_t limit_bytes);

/// Whether allow_spill is set: smem_limit_bytes is listed only then.
inline bool listed_with_spill(const WorkloadParams& p) { return p.allow_spill; }

/// The two parameters of spilling, declared by flash1 and flash2.
inline constexpr ParamSpec kAllowSpillParam{
    .name = "allow_spill",
    .flag = "--allow-spill",
    .type = ParamType::kSwitch,
    .help =
        "Tiles over the shared memory per block (the config's sm.smem_per_block, or --sram) "
        "are kept on chip as far as they fit and the rest spilled to global memory, instead "
        "of rejected (see docs/spill.md)",
    .field = field_of<&WorkloadParams::allow_spill>(),
};
inline constexpr ParamSpec kSmemLimitParam{
    .name = "smem_limit_bytes",
    .type = ParamType::kBytes,
    .unit = "bytes",
    .help =
        "Shared memory per CTA the tiles must fit in, set by the command: --config's "
        "sm.smem_per_block, or --sram with --allow-spill; listed only with allow_spill",
    .default_text = "none (no limit)",
    .min = 1,
    .field = field_of<&WorkloadParams::smem_limit_bytes>(),
    .listed = &listed_with_spill,
};

}  // namespace memwall
