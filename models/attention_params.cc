#include "models/attention_params.h"

#include <limits>
#include <string>

#include "models/checked_bytes.h"
#include "sim/core/error.h"

namespace memwall {

std::uint64_t check_attention_shape(WorkloadParams& p) {
  if (!p.kv_heads) p.kv_heads = p.heads;
  if (!p.seq_kv) p.seq_kv = p.seq;
  if (*p.kv_heads > p.heads || p.heads % *p.kv_heads != 0) {
    throw UsageError(
        "heads (" + std::to_string(p.heads) + ") must be a multiple of kv_heads (" +
        std::to_string(*p.kv_heads) +
        "): in grouped-query attention each K/V head serves heads/kv_heads query heads");
  }
  if (p.causal && p.seq > *p.seq_kv) {
    throw UsageError(
        "causal needs seq <= seq_kv (the mask is aligned bottom-right: query row i "
        "sees keys j <= i + seq_kv - seq), got seq " +
        std::to_string(p.seq) + " and seq_kv " + std::to_string(*p.seq_kv));
  }
  const std::uint64_t s = p.element_size();
  checked_mul({p.batch, *p.kv_heads, *p.seq_kv, p.head_dim, s},
              "K (batch·kv_heads·seq_kv·head_dim)");
  const std::uint64_t bh = checked_mul(p.batch, p.heads, "batch·heads");
  const std::uint64_t qkv = checked_mul({bh, p.seq, p.head_dim, s}, "Q (batch·heads·seq·head_dim)");
  if (p.seq * s > std::numeric_limits<std::uint32_t>::max() / 2 ||
      *p.seq_kv * s > std::numeric_limits<std::uint32_t>::max() / 2 ||
      p.head_dim * s > std::numeric_limits<std::uint32_t>::max() / 2) {
    throw UsageError("seq, seq_kv and head_dim must each be below 2^31 bytes per row");
  }
  return qkv;
}

AttentionShape attention_shape(const WorkloadParams& p) {
  return {.batch_heads = p.batch_heads(),
          .group = p.group_size(),
          .nq = p.seq,
          .nkv = p.kv_seq(),
          .d = p.head_dim,
          .causal = p.causal};
}

}  // namespace memwall
