#pragma once
/// The flash2 workload: FlashAttention-2 forward, one CTA per (head, Q block, split) streaming
/// the K/V blocks it sees; causal, grouped-query, decode and split-KV. Its plugin and its closed
/// form (docs/models.md has the kernel and the derivation).

#include <cstdint>

#include "models/attention_params.h"
#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The flash2 plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash2_plugin();

/// The shape flash2's kernel runs for resolved `p`: attention_shape(p), except in decode with
/// grouped-query heads (seq 1, kv_heads < heads), where FlashAttention-2 packs the G query heads
/// of each K/V head into the rows of one query sequence (heads → kv_heads, seq 1 → G, no mask),
/// so that a Q block reads its K/V head once.
AttentionShape flash2_shape(const WorkloadParams& p);

/// FlashAttention-2's num_splits_heuristic (flash_api.cpp): the fewest eligible split counts
/// (≤ max_splits, num_sms, num_n_blocks) whose wave efficiency is within 85% of the best; 1 when
/// the blocks fill 80% of num_sms already.
std::uint32_t flash2_num_splits_heuristic(std::uint64_t batch_nheads_mblocks, std::uint64_t num_sms,
                                          std::uint64_t num_n_blocks, std::uint64_t max_splits);

/// `--splits auto` for `p` (block_kv resolved): the heuristic as FlashAttention-2 calls it for
/// p.sm_count SMs (two CTAs per SM, its split kernel's blocks of 64 rows and 256/128/64 keys),
/// at most this model's K/V blocks.
std::uint32_t flash2_auto_splits(const WorkloadParams& p);

/// The global traffic of resolved flash2 parameters `p` (spilling aside), per tensor: Q once per
/// (Q block, split with a visible block); K and V once per Q block over the keys its rows see
/// (all Nkv without the mask); O and the fp32 L once; with splits, O_accum and L_accum written by
/// every split CTA and read once by the combine. docs/models.md derives it.
Traffic flash2_traffic(const WorkloadParams& p);

}  // namespace memwall
