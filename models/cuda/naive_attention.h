#pragma once
/// Naive attention as three kernels, tiled exactly as the workload tiling contract says:
///   qk      S = scale·Q·Kᵀ   tiles block_q × block_kv of S, the whole head dim per tile
///   softmax P = softmax(S)   softmax_rows rows per CTA, one warp per row; each row read once
///                            through shared memory, or, when softmax_rows·seq·2 bytes exceed
///                            227 KiB, streamed twice from global memory in 1024-key chunks
///   pv      O = P·V          block_q rows per CTA, k chunks of block_k columns of P
/// fp16 in and out, fp32 accumulation on the tensor cores (mma.sync m16n8k16).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

/// Throws UsageError unless the three kernels are instantiated for these blocks and shape:
/// head_dim ∈ {64, 128}; (block_q, block_kv) ∈ {(128,128), (64,64)}; block_k = 64;
/// softmax_rows ∈ 1..8; seq a positive multiple of 8 (16-byte rows).
void check_naive_supported(const AttentionShape& shape, const NaiveBlocks& blocks);

/// Launches qk on `stream`: S[bh, i, j] = scale · Σ_k Q[bh, i, k]·K[bh, j, k], stored as fp16.
void launch_naive_qk(const AttentionShape& shape, const NaiveBlocks& blocks, const half* q,
                     const half* k, half* s, float scale, cudaStream_t stream);

/// Launches softmax on `stream`: P[bh, i, :] = softmax(S[bh, i, :]), stored as fp16. Rows whose
/// softmax_rows·seq·2 bytes fit in 227 KiB are kept in shared memory (naive_softmax_kernel),
/// longer ones streamed (naive_softmax_stream_kernel), as the model's softmax_chunk default does.
void launch_naive_softmax(const AttentionShape& shape, const NaiveBlocks& blocks, const half* s,
                          half* p, cudaStream_t stream);

/// Whether launch_naive_softmax keeps the rows in shared memory (softmax_rows·seq·2 ≤ 227 KiB).
bool naive_softmax_in_smem(const AttentionShape& shape, const NaiveBlocks& blocks);

/// Launches the streaming softmax on `stream` whatever the row length (the harness compares it
/// with the shared-memory one on the same S).
void launch_naive_softmax_streamed(const AttentionShape& shape, const NaiveBlocks& blocks,
                                   const half* s, half* p, cudaStream_t stream);

/// Launches pv on `stream`: O[bh, i, :] = Σ_j P[bh, i, j]·V[bh, j, :], stored as fp16.
void launch_naive_pv(const AttentionShape& shape, const NaiveBlocks& blocks, const half* p,
                     const half* v, half* o, cudaStream_t stream);

}  // namespace memwall::cuda
