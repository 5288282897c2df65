#pragma once
/// The cases memwall-cuda runs: one attention workload at one shape with one set of block sizes.
/// Cases come from a built-in sweep (check, sweep, profile) or from `--case key=value,...`
/// specs; their CSV columns use the workload parameter names of the tiling contract.

#include <cstdint>
#include <string>
#include <vector>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

enum class Workload { kNaive, kFlash2 };

/// One case. For naive, `naive` holds the blocks; for flash2, `flash2`.
struct HarnessCase {
  Workload workload = Workload::kFlash2;
  AttentionShape shape;
  NaiveBlocks naive;
  Flash2Blocks flash2;
};

/// "naive" or "flash2".
std::string workload_name(Workload workload);

/// The contract's default blocks for flash2: 128×128 for head_dim ≤ 64, 128×64 above; stages 2.
Flash2Blocks default_flash2_blocks(int head_dim);

/// Parses "workload=flash2,batch=1,heads=8,seq=4096,head_dim=128,block_q=128,..." (keys of the
/// contract; unspecified blocks take the contract's defaults). Throws UsageError naming the spec
/// and the bad key or value.
HarnessCase parse_case(const std::string& spec);

/// FlashAttention-2's num_splits_heuristic: 1 when batch_nheads_mblocks CTAs fill 0.8 of
/// num_sms (FA2 passes 2·SMs), else the fewest eligible splits (up to min(max_splits, num_sms,
/// num_n_blocks)) whose wave efficiency is at least 0.85 of the best.
int fa2_num_splits_heuristic(int batch_nheads_mblocks, int num_sms, int num_n_blocks,
                             int max_splits);

/// The split count FlashAttention-2 picks for `shape` on `sms` SMs: block_n 256 / 128 / 64 for
/// head_dim ≤ 64 / ≤ 128 / above, m blocks of 64 packed query rows, heuristic(batch·packed
/// heads·m blocks, 2·sms, ⌈Nkv / block_n⌉, 128).
int fa2_decode_splits(const AttentionShape& shape, int sms);

/// A built-in list: "check" (small shapes, every instantiated variant, partial blocks),
/// "sweep" (the measured H200 sweep: N 512…16384, d 64 and 128, B·H 1·8 and 4·16),
/// "profile" (the sweep without naive at B·H = 64 for N ≥ 8192, for ncu), "variants-check"
/// (small causal / GQA / decode / split-KV shapes) and "variants" (the measured H200 variants).
/// Throws UsageError for another name.
std::vector<HarnessCase> builtin_cases(const std::string& name);

/// The CSV header of the parameter columns, comma-separated, without a trailing comma:
/// workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows,
/// causal,kv_heads,seq_kv,splits (the last four empty for naive; kv_heads and seq_kv resolved)
std::string case_csv_header();

/// The parameter columns of `c` in header order; columns that do not apply are empty.
std::string case_csv_columns(const HarnessCase& c);

/// The kernels a case launches, in launch order: qk, softmax, pv or flash2_fwd (and
/// flash2_combine when split).
std::vector<std::string> case_kernels(const HarnessCase& c);

}  // namespace memwall::cuda
