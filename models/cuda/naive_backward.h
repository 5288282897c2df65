#pragma once
/// Standard attention's backward pass, unfused, in the kernels the naive-bwd workload models
/// (models/naive_bwd.cc), box for box, launched in its order:
///   dv: dV = Pᵀ·dO, one CTA per (bh, block of block_q keys), over the queries in chunks of
///       block_k (P box and dO box per chunk, two chunks in flight), 8 warps 4 × 2;
///   dp: dP = dO·Vᵀ, one CTA per (bh, block_q × block_kv tile): naive's qk kernel with scale 1
///       (with groups naive_bwd_qk_kernel, the same kernel reading V of K/V head bh / G);
///   softmax_bwd: dS = P∘(dP − rowsum(P∘dP)), softmax_rows rows per CTA, one warp per row, the
///       rows of P and dP through shared memory;
///   dq: dQ = scale·dS·K, one CTA per (bh, block of block_q queries), over the keys in chunks
///       (K of K/V head bh / G);
///   dk: dK = scale·dSᵀ·Q, as dv;
///   sum_dkv, with grouped-query heads only (G = heads / kv_heads > 1): dv and dk write dV and
///       dK per query head into dV_expanded and dK_expanded, and one CTA of 4 warps per (K/V
///       head, block of block_q keys) sums each group's, dK then dV.
/// The causal mask (Nq = Nkv: the diagonal) is in P alone, which is 0 where it hides a key: the
/// backward's launches load and store every tile whatever the mask, as the model's do, and dS =
/// P∘(…) is 0 there. seq_kv ≠ seq is not taken. The blocks of naive's kernels (block_q =
/// block_kv 128 or 64, block_k 64).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

/// The backward's tensors (device pointers, fp16): inputs Q, K, V, dO ([B·H·N][d] and
/// [B·Hkv·N][d]) and the forward's P; the intermediates dP and dS ([B·H·N][N]); outputs dQ, dK,
/// dV; with grouped-query heads the scratch dK_expanded and dV_expanded ([B·H·N][d]).
struct NaiveBwdTensors {
  const half* q;
  const half* k;
  const half* v;
  const half* d_o;
  const half* p;
  half* dp;
  half* ds;
  half* dq;
  half* dk;
  half* dv;
  half* dk_expanded = nullptr;
  half* dv_expanded = nullptr;
};

/// The launches, in order (kSumDkv only with groups).
enum class NaiveBwdPart { kAll, kDv, kDp, kSoftmaxBwd, kDq, kDk, kSumDkv };

/// Throws UsageError unless naive's kernels take `shape` and `blocks` and the backward can run
/// them (kv_heads dividing heads, seq_kv = seq, softmax_rows rows of P and dP in 227 KiB).
void check_naive_bwd_supported(const AttentionShape& shape, const NaiveBlocks& blocks);

/// Launches the forward's P that the backward takes (the model's prepare_inputs, none of its
/// launches) on `stream`: S = scale·Q·Kᵀ per query head over its K/V head's keys, written whole
/// into `s` ([B·H·N][N], scratch) by naive's qk kernel (naive_bwd_qk_kernel with groups), then
/// P = softmax(S) by naive's softmax kernel, or with the causal mask by
/// naive_masked_softmax_kernel, which applies it as naive's softmax does in the model: P = 0 at
/// the keys a row does not see.
void launch_naive_bwd_forward(const AttentionShape& shape, const NaiveBlocks& blocks, const half* q,
                              const half* k, half* s, half* p, float scale, cudaStream_t stream);

/// Launches the backward pass (or one of its launches) on `stream`.
void launch_naive_bwd(const AttentionShape& shape, const NaiveBlocks& blocks,
                      const NaiveBwdTensors& t, float scale, cudaStream_t stream,
                      NaiveBwdPart part = NaiveBwdPart::kAll);

}  // namespace memwall::cuda
