#pragma once
/// FlashAttention-2's backward pass (Algorithm 2 of the FA2 paper) in the kernels the flash2-bwd
/// workload models (models/flash2_bwd.cc), box for box:
///   1. flash2_bwd_dot_do_o: one CTA of 4 warps per (bh, Q block of Br rows): D = rowsum(dO∘O)
///      (fp32) and the block's rows of the fp32 dQ accumulator cleared;
///   2. flash2_bwd: one CTA of 8 warps per (bh, K/V block of Bc = 128 rows), looping over the Q
///      blocks that see it (from the first the causal mask lets see it), the next block's Q, dO,
///      L and D prefetched; recomputes P = exp(scale·Q·Kᵀ − L), keeps dV += Pᵀ·dO and
///      dK += dSᵀ·Q on chip (warp w owns K/V rows 16w … 16w + 15), writes dSᵀ to shared memory
///      and adds dS·K into the accumulator with atomic adds (float2, sm_90); stores dK (scaled)
///      and dV once;
///   3. flash2_bwd_convert_dq: one CTA of 4 warps per (bh, Q block): dQ = scale·accumulator, fp16;
///   4. with grouped-query heads (G = heads / kv_heads > 1), flash2_bwd_sum_dkv: the main kernel
///      reads the K/V head bh / G and writes its dK, dV per query head into dK_expanded and
///      dV_expanded; one CTA of 8 warps per (K/V head, block of Bc keys) sums each group's, dK
///      over the G query heads (one head's box loaded, waited for and added at a time), then dV.
/// Br is 128 at head_dim 64 and 64 at head_dim 128 (the model's defaults).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

/// Q blocks per head (Br rows) and K/V blocks per head (Bc rows) of the backward kernels.
struct Flash2BwdBlocks {
  int block_q = 128;
  int block_kv = 128;
};

/// The blocks the kernels are instantiated for at `head_dim` (64 or 128; throws UsageError for
/// another, for kv_heads not dividing heads, or for causal with seq > seq_kv).
Flash2BwdBlocks flash2_bwd_blocks(const AttentionShape& shape);

/// The backward pass's tensors (device pointers): inputs Q, K, V, O, dO (fp16), L (fp32, natural
/// log, [B·H][Nq]); scratch D ([B·H][Nq]) and dQ_accum ([B·H·Nq][d]) in fp32; outputs dQ, dK, dV
/// ([B·Hkv·Nkv][d]); with groups the scratch dK_expanded, dV_expanded ([B·H·Nkv][d], fp16).
struct Flash2BwdTensors {
  const half* q;
  const half* k;
  const half* v;
  const half* o;
  const half* d_o;
  const float* l;
  float* d;
  float* dq_accum;
  half* dq;
  half* dk;
  half* dv;
  half* dk_expanded = nullptr;
  half* dv_expanded = nullptr;
};

/// Which of the launches to run (kAll: all in order; kSumDkv only with groups).
enum class Flash2BwdPart { kAll, kDotDoO, kBackward, kConvertDq, kSumDkv };

/// Launches the backward pass (or one part of it) on `stream`.
void launch_flash2_bwd(const AttentionShape& shape, const Flash2BwdTensors& t, float scale,
                       cudaStream_t stream, Flash2BwdPart part = Flash2BwdPart::kAll);

}  // namespace memwall::cuda
