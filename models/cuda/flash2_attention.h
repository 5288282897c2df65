#pragma once
/// The FlashAttention-2 forward kernel, tiled as the workload tiling contract says: one CTA of 4
/// warps per (bh, block of Br = block_q query rows), each warp owning Br/4 rows; the Q box is
/// loaded once, then for each block of Bc = block_kv keys the K box and the V box (cp.async,
/// `stages` blocks in flight); online softmax in fp32; at the end the O box (fp16) and the L box
/// (logsumexp of the scaled scores, fp32, natural log) are stored once each.
///
/// The variants (flash2_fwd_variant_kernel, at the default blocks only): K/V of KV head bh / G
/// (GQA, MQA), Nq ≠ Nkv, the causal mask aligned bottom-right (K/V blocks past a Q block's last
/// visible key are not loaded; blocks the diagonal crosses are masked element-wise), decode
/// packing (Nq = 1, G > 1: the G query heads of a KV head are the rows of one Q block) and
/// split-KV: CTA m + Tr·(s + S·bh) covers the K/V blocks [s·⌈Tc/S⌉, (s+1)·⌈Tc/S⌉) that it can
/// see and stores fp32 O_accum / L_accum boxes, which flash2_combine_kernel (one CTA per (bh,
/// 512/d rows)) reduces to O and L.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

/// The (head_dim, block_q, block_kv, stages) combinations that are instantiated.
struct Flash2Variant {
  int head_dim;
  int block_q;
  int block_kv;
  int stages;
};

/// Every instantiated variant, in a fixed order.
const std::vector<Flash2Variant>& flash2_variants();

/// Throws UsageError unless a kernel is instantiated for this head_dim and these blocks, and seq
/// is a positive multiple of 8 (unvaried); for the variants, unless the blocks are the default
/// ones, kv_heads divides heads, causal has seq ≤ seq_kv and splits is 1 … ⌈seq_kv / block_kv⌉.
void check_flash2_supported(const AttentionShape& shape, const Flash2Blocks& blocks);

/// The fp32 scratch of a split launch: O_accum [S][B·H·Nq][d] and L_accum [S][B·H·Nq].
struct Flash2Workspace {
  float* o_accum = nullptr;
  float* l_accum = nullptr;
};

/// The rows the kernels see after decode packing (Nq = 1 and G > 1: heads = Hkv, seq = G,
/// group 1); otherwise heads, seq and group as given.
struct Flash2Packing {
  bool packed = false;
  int heads = 0;  ///< heads per batch the kernels see
  int seq = 0;  ///< query rows per head the kernels see
  int group = 1;  ///< query heads (as seen) per KV head
};

/// The packing of `shape` (see Flash2Packing).
Flash2Packing flash2_packing(const AttentionShape& shape);

/// Whether `shape` and `blocks` need the variant kernel (any of causal, kv_heads, seq_kv, splits).
bool flash2_uses_variant_kernel(const AttentionShape& shape, const Flash2Blocks& blocks);

/// Elements of O_accum and of L_accum that a launch needs (0 when splits is 1).
std::int64_t flash2_o_accum_elements(const AttentionShape& shape, const Flash2Blocks& blocks);
std::int64_t flash2_l_accum_elements(const AttentionShape& shape, const Flash2Blocks& blocks);

/// Which kernels of a split launch to launch: both, the split forward only, the combine only.
enum class Flash2Part { kAll, kForward, kCombine };

/// Launches flash2_fwd on `stream` (and, split, flash2_combine): O = softmax(scale·Q·Kᵀ)·V per
/// head, L = logsumexp per row. `workspace` and `part` are used only when blocks.splits > 1.
void launch_flash2_fwd(const AttentionShape& shape, const Flash2Blocks& blocks, const half* q,
                       const half* k, const half* v, half* o, float* l, float scale,
                       cudaStream_t stream, const Flash2Workspace& workspace = {},
                       Flash2Part part = Flash2Part::kAll);

}  // namespace memwall::cuda
