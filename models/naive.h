#pragma once
/// The naive workload: Algorithm 0 tiled as three launches, qk (S = scale·QKᵀ), softmax (P) and
/// pv (O = PV), S and P materialised in global memory. Its plugin and its closed form
/// (docs/models.md has the kernels, the tiling and the derivation).

#include <cstdint>

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The naive plugin (registered in models/workload_list.h).
const WorkloadPlugin& naive_plugin();

/// The tiled naive kernels (qk, softmax, pv), per head in elements: reads
/// Nd·⌈N/bn⌉ (Q) + Nd·⌈N/bm⌉ (K) + N² (S) + N² (P) + Nd·⌈N/bm⌉ (V), writes N² + N² + Nd.
/// block_k and softmax_rows do not change it. Equals algorithm0_traffic when bm, bn ≥ N.
Traffic naive_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                      std::uint32_t element_bytes, std::uint64_t block_q, std::uint64_t block_kv);

}  // namespace memwall
