#pragma once
/// The FlashAttention-2 forward kernel (not causal), tiled as the workload tiling contract says:
/// one CTA of 4 warps per (bh, block of Br = block_q query rows), each warp owning Br/4 rows;
/// the Q box is loaded once, then for each block of Bc = block_kv keys the K box and the V box
/// (cp.async, `stages` blocks in flight); online softmax in fp32; at the end the O box (fp16)
/// and the L box (logsumexp of the scaled scores, fp32, natural log) are stored once each.

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
/// is a positive multiple of 8.
void check_flash2_supported(const AttentionShape& shape, const Flash2Blocks& blocks);

/// Launches flash2_fwd on `stream`: O = softmax(scale·Q·Kᵀ)·V per head, L = logsumexp per row.
void launch_flash2_fwd(const AttentionShape& shape, const Flash2Blocks& blocks, const half* q,
                       const half* k, const half* v, half* o, float* l, float scale,
                       cudaStream_t stream);

}  // namespace memwall::cuda
