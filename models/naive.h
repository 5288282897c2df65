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

/// The tiled naive kernels (qk, softmax, pv) of resolved `p`, per query head in elements: reads
/// Nq·d·⌈Nkv/bn⌉ (Q) + Nkv·d·⌈Nq/bm⌉ (K, its K/V head's) + Nq·Nkv (S; twice when the softmax
/// streams its rows, softmax_chunk > 0) + Nq·Nkv (P) + Nkv·d·⌈Nq/bm⌉ (V), writes Nq·Nkv (S) +
/// Nq·Nkv (P) + Nq·d (O). block_k, softmax_rows, the chunk width and the causal mask (applied
/// in the softmax, S and P dense) do not change it. Equals algorithm0_traffic when bm, bn ≥
/// N = Nq = Nkv and the rows are not streamed.
Traffic naive_traffic(const WorkloadParams& resolved);

}  // namespace memwall
