#pragma once
/// The parameters every attention workload (naive, flash1, flash2) shares — the shape B, H, N, d,
/// the key/value heads and length of grouped-query attention and decode, the causal mask — the
/// checks on them that do not depend on the tiling, and AttentionShape, the index arithmetic
/// every kernel body shares (which K/V head a query head reads, which keys a query row sees).

#include <algorithm>
#include <cstdint>

#include "models/param_spec.h"
#include "models/workload_params.h"

namespace memwall {

inline constexpr ParamSpec kBatchParam{
    .name = "batch",
    .flag = "--batch",
    .type = ParamType::kCount,
    .unit = "sequences",
    .help = "Batch size B",
    .min = 1,
    .field = field_of<&WorkloadParams::batch>(),
};
inline constexpr ParamSpec kHeadsParam{
    .name = "heads",
    .flag = "--heads",
    .type = ParamType::kCount,
    .unit = "heads",
    .help = "Heads H",
    .min = 1,
    .field = field_of<&WorkloadParams::heads>(),
};
inline constexpr ParamSpec kSeqParam{
    .name = "seq",
    .flag = "--seq",
    .type = ParamType::kCount,
    .unit = "tokens",
    .help = "Sequence length N (tokens per head)",
    .min = 1,
    .field = field_of<&WorkloadParams::seq>(),
};
inline constexpr ParamSpec kHeadDimParam{
    .name = "head_dim",
    .flag = "--head-dim",
    .type = ParamType::kCount,
    .unit = "elements",
    .help = "Head dimension d",
    .min = 1,
    .field = field_of<&WorkloadParams::head_dim>(),
};

inline bool listed_kv_heads(const WorkloadParams& p) { return p.kv_heads != p.heads; }
inline bool listed_seq_kv(const WorkloadParams& p) { return p.seq_kv != p.seq; }

inline constexpr ParamSpec kKvHeadsParam{
    .name = "kv_heads",
    .flag = "--kv-heads",
    .type = ParamType::kCount,
    .unit = "heads",
    .help =
        "Key/value heads Hkv (grouped-query attention: heads/kv_heads query heads share each "
        "K/V head; 1 is multi-query); heads must be a multiple",
    .default_text = "heads",
    .min = 1,
    .field = field_of<&WorkloadParams::kv_heads>(),
    .listed = &listed_kv_heads,
};
inline constexpr ParamSpec kSeqKvParam{
    .name = "seq_kv",
    .flag = "--seq-kv",
    .type = ParamType::kCount,
    .unit = "tokens",
    .help = "Key/value length Nkv when it differs from seq (decode: --seq 1 --seq-kv 65536)",
    .default_text = "seq",
    .min = 1,
    .field = field_of<&WorkloadParams::seq_kv>(),
    .listed = &listed_seq_kv,
};
inline constexpr ParamSpec kCausalParam{
    .name = "causal",
    .flag = "--causal",
    .type = ParamType::kSwitch,
    .help =
        "Causal mask, aligned bottom-right as FlashAttention-2 >= 2.1 does: query row i sees "
        "keys j <= i + seq_kv - seq (needs seq <= seq_kv)",
    .field = field_of<&WorkloadParams::causal>(),
};

/// Resolves and checks what the attention shape alone must satisfy: kv_heads (default heads)
/// divides heads, seq_kv defaults to seq, a causal mask has seq <= seq_kv, B·H·N·d·s and every
/// row (N·s, d·s bytes) are representable. Returns the bytes of Q ([B, H, Nq, d]). UsageError
/// naming the parameters otherwise.
std::uint64_t check_attention_shape(WorkloadParams& p);

/// The index arithmetic of attention with grouped-query heads, a key length of its own and a
/// bottom-right causal mask. Rows of Q and O are bh·nq + i (bh = b·H + h over the query heads);
/// rows of K and V are kv_head(bh)·nkv + j.
struct AttentionShape {
  std::uint64_t batch_heads = 1;  ///< B·H, query heads
  std::uint64_t group = 1;  ///< G = H / Hkv, query heads per K/V head
  std::uint64_t nq = 1;  ///< query rows per head
  std::uint64_t nkv = 1;  ///< keys per K/V head
  std::uint64_t d = 1;  ///< head dim
  bool causal = false;

  /// The K/V head (b·Hkv + h/G) that query head bh = b·H + h reads.
  std::uint64_t kv_head(std::uint64_t bh) const { return bh / group; }
  /// B·Hkv.
  std::uint64_t kv_batch_heads() const { return batch_heads / group; }
  /// Keys query row i sees: [0, keys_visible(i)); every row sees at least one.
  std::uint64_t keys_visible(std::uint64_t i) const {
    return causal ? std::min(nkv, i + (nkv - nq) + 1) : nkv;
  }
  /// K/V blocks of `bc` keys that any of rows [r0, r0 + rows) sees.
  std::uint64_t blocks_visible(std::uint64_t r0, std::uint64_t rows, std::uint64_t bc) const {
    return ceil_div(keys_visible(r0 + rows - 1), bc);
  }
  /// The first Q block of `br` rows with a row that sees key c0: 0 without the mask; with it,
  /// the first whose last row, min((m+1)·br, nq) − 1, sees c0, i.e. min((m+1)·br, nq) > c0 −
  /// (nkv − nq). The last row of all sees every key, so some block always does.
  std::uint64_t first_q_block(std::uint64_t br, std::uint64_t c0) const {
    const std::uint64_t offset = nkv - nq;
    return !causal || c0 <= offset ? 0 : (c0 - offset) / br;
  }
  /// Whether the block of keys [c0, c0 + cols) holds a key that row r0 (the first of a tile)
  /// does not see: the blocks the causal diagonal crosses, masked element by element.
  bool block_masked(std::uint64_t r0, std::uint64_t c0, std::uint64_t cols) const {
    return causal && c0 + cols > keys_visible(r0);
  }
};

/// The shape of resolved attention parameters `p`, as stored.
AttentionShape attention_shape(const WorkloadParams& p);

}  // namespace memwall
