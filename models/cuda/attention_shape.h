#pragma once
/// The shape and block parameters of one attention case, shared by the kernels' launchers, the
/// CPU reference and the memwall-cuda harness. Names follow the workload tiling contract
/// (docs/cuda.md): batch, heads, seq, head_dim, block_q, block_kv, block_k, stages, softmax_rows.

#include <cstdint>

namespace memwall::cuda {

/// Q, K, V, O are [batch, heads, seq, head_dim] fp16, row-major; "bh" = batch·heads flattened.
struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int seq = 0;       ///< N, tokens
  int head_dim = 0;  ///< d, elements
  /// B·H, the number of independent heads.
  std::int64_t heads_total() const { return static_cast<std::int64_t>(batch) * heads; }
  /// Elements of one of Q, K, V, O.
  std::int64_t qkv_elements() const { return heads_total() * seq * head_dim; }
  /// Elements of naive's S (or P): B·H·N·N.
  std::int64_t score_elements() const { return heads_total() * seq * seq; }
};

/// Block sizes of the naive path: qk tiles block_q × block_kv, pv row block block_q with k chunks
/// of block_k columns, softmax_rows rows of S per softmax CTA (one warp per row).
struct NaiveBlocks {
  int block_q = 128;
  int block_kv = 128;
  int block_k = 64;
  int softmax_rows = 4;
};

/// Block sizes of the FlashAttention-2 forward kernel: Br = block_q, Bc = block_kv, and the
/// number of K/V blocks in flight (stages).
struct Flash2Blocks {
  int block_q = 128;
  int block_kv = 64;
  int stages = 2;
};

/// ⌈a / b⌉ for positive b.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace memwall::cuda
