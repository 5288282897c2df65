#pragma once
/// The gemm workload: C = A·B (A m×k, B k×n), one CTA per output tile. Its plugin and its closed
/// form (docs/models.md has the kernel and the derivation).

#include <cstdint>

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The gemm plugin (registered in models/workload_list.h).
const WorkloadPlugin& gemm_plugin();

/// Tiled GEMM C[m×n] = A[m×k]·B[k×n]: reads s·(mk·⌈n/tile_n⌉ + kn·⌈m/tile_m⌉), writes s·mn.
/// tile_k does not change it.
Traffic gemm_traffic(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t element_bytes,
                     std::uint64_t tile_m, std::uint64_t tile_n);

}  // namespace memwall
