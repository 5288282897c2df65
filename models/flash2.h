#pragma once
/// The flash2 workload: FlashAttention-2 forward (not causal), one CTA per (head, Q block)
/// streaming every K/V block. Its plugin and its closed form (docs/models.md has the kernel and
/// the derivation).

#include <cstdint>

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The flash2 plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash2_plugin();

/// FlashAttention-2 forward, per head: reads Nd (Q) + Nd·⌈N/Br⌉ (K) + Nd·⌈N/Br⌉ (V) elements,
/// writes Nd elements (O) + 4N bytes (L, fp32). Bc and stages do not change it.
Traffic flash2_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                       std::uint32_t element_bytes, std::uint64_t block_q);

}  // namespace memwall
