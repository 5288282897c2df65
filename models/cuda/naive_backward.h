#pragma once
/// Standard attention's backward pass, unfused, in the kernels the naive-bwd workload models
/// (models/naive_bwd.cc), box for box, launched in its order:
///   dv: dV = Pᵀ·dO, one CTA per (bh, block of block_q keys), over the queries in chunks of
///       block_k (P box and dO box per chunk, two chunks in flight), 8 warps 4 × 2;
///   dp: dP = dO·Vᵀ, one CTA per (bh, block_q × block_kv tile): naive's qk kernel with scale 1;
///   softmax_bwd: dS = P∘(dP − rowsum(P∘dP)), softmax_rows rows per CTA, one warp per row, the
///       rows of P and dP through shared memory;
///   dq: dQ = scale·dS·K, one CTA per (bh, block of block_q queries), over the keys in chunks;
///   dk: dK = scale·dSᵀ·Q, as dv.
/// Not causal (P from naive's forward kernels, which take no mask), kv_heads = heads, the blocks
/// of naive's kernels (block_q = block_kv 128 or 64, block_k 64).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

/// The backward's tensors (device pointers, fp16): inputs Q, K, V, dO and the forward's P; the
/// intermediates dP and dS ([B·H·N][N]); outputs dQ, dK, dV.
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
};

/// The five launches, in order.
enum class NaiveBwdPart { kAll, kDv, kDp, kSoftmaxBwd, kDq, kDk };

/// Throws UsageError unless naive's kernels take `shape` and `blocks` and the backward can run
/// them (not causal, kv_heads = heads, softmax_rows rows of P and dP in 227 KiB).
void check_naive_bwd_supported(const AttentionShape& shape, const NaiveBlocks& blocks);

/// Launches the backward pass (or one of its launches) on `stream`.
void launch_naive_bwd(const AttentionShape& shape, const NaiveBlocks& blocks,
                      const NaiveBwdTensors& t, float scale, cudaStream_t stream,
                      NaiveBwdPart part = NaiveBwdPart::kAll);

}  // namespace memwall::cuda
