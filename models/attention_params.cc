#include "models/attention_params.h"

#include <limits>

#include "models/checked_bytes.h"
#include "sim/core/error.h"

namespace memwall {

std::uint64_t check_attention_shape(const WorkloadParams& p) {
  const std::uint64_t s = p.element_size();
  const std::uint64_t bh = checked_mul(p.batch, p.heads, "batch·heads");
  const std::uint64_t qkv = checked_mul({bh, p.seq, p.head_dim, s}, "Q (batch·heads·seq·head_dim)");
  if (p.seq * s > std::numeric_limits<std::uint32_t>::max() / 2 ||
      p.head_dim * s > std::numeric_limits<std::uint32_t>::max() / 2) {
    throw UsageError("seq and head_dim must each be below 2^31 bytes per row");
  }
  return qkv;
}

}  // namespace memwall
