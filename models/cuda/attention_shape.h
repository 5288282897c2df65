#pragma once
/// The shape and block parameters of one attention case, shared by the kernels' launchers, the
/// CPU reference and the memwall-cuda harness. Names follow the workload tiling contract
/// (docs/cuda.md): batch, heads, seq, head_dim, block_q, block_kv, block_k, stages, softmax_rows.

#include <cstdint>

namespace memwall::cuda {

/// Q, O are [batch, heads, seq, head_dim] fp16, row-major; "bh" = batch·heads flattened. K, V
/// are [batch, kv_heads, seq_kv, head_dim]: query head h reads KV head h / (heads / kv_heads)
/// (grouped-query attention; kv_heads 1 is multi-query). kv_heads 0 means heads and seq_kv 0
/// means seq, which with causal false is the plain (unvaried) attention of the naive kernels.
struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int seq = 0;  ///< N (Nq), query tokens
  int head_dim = 0;  ///< d, elements
  int kv_heads = 0;  ///< Hkv; 0: heads
  int seq_kv = 0;  ///< Nkv, key tokens; 0: seq
  /// Causal mask aligned bottom-right: key j is visible to query row i iff j ≤ i + Nkv − Nq.
  bool causal = false;
  /// B·H, the number of independent heads.
  std::int64_t heads_total() const { return static_cast<std::int64_t>(batch) * heads; }
  /// Hkv, kv_heads or heads when unset.
  int kv_heads_or_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  /// Nkv, seq_kv or seq when unset.
  int keys() const { return seq_kv > 0 ? seq_kv : seq; }
  /// G = H / Hkv, query heads per KV head.
  int group() const { return heads / kv_heads_or_heads(); }
  /// Whether any of causal, kv_heads ≠ heads, seq_kv ≠ seq is asked for.
  bool is_variant() const { return causal || kv_heads_or_heads() != heads || keys() != seq; }
  /// Elements of one of Q, K, V, O (unvaried shapes only: all four alike).
  std::int64_t qkv_elements() const { return heads_total() * seq * head_dim; }
  /// Elements of Q or of O.
  std::int64_t q_elements() const { return heads_total() * seq * head_dim; }
  /// Elements of K or of V.
  std::int64_t kv_elements() const {
    return static_cast<std::int64_t>(batch) * kv_heads_or_heads() * keys() * head_dim;
  }
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
/// splits > 1 is split-KV ("Flash-Decoding"): each split covers ⌈Tc / splits⌉ K/V blocks and
/// writes fp32 partials that a combine kernel reduces.
struct Flash2Blocks {
  int block_q = 128;
  int block_kv = 64;
  int stages = 2;
  int splits = 1;
};

/// ⌈a / b⌉ for positive b.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace memwall::cuda
