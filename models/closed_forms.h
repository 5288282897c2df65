#pragma once
/// Closed forms of each workload's global-memory traffic: bytes read and written in total and per
/// tensor, as functions of the parameters. They equal, exactly, the sums over the ops the kernels
/// emit (tests/models check it); docs/models.md derives each one.

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload_params.h"

namespace memwall {

/// Global bytes read and written of one tensor.
struct TensorTraffic {
  std::string tensor;  ///< the tensor's name ("Q", "S", "L", ...)
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// Global bytes read and written by a whole workload (all launches, all heads).
struct Traffic {
  std::uint64_t read_bytes = 0;   ///< sum of by_tensor[].read_bytes
  std::uint64_t write_bytes = 0;  ///< sum of by_tensor[].write_bytes
  std::vector<TensorTraffic> by_tensor;  ///< in the workload's tensor order (its WorkloadInfo)

  /// The entry of `tensor`, or nullptr.
  const TensorTraffic* find(const std::string& tensor) const;
};

/// The traffic of any workload; `params` is resolved first (defaults, validation).
Traffic closed_form_traffic(const WorkloadParams& params);

/// Algorithm 0 (standard attention, S and P materialised) for `batch_heads` heads of N×d, element
/// size s: per head reads 3Nd + 2N² elements (Q, K, V, S, P), writes 2N² + Nd (S, P, O).
Traffic algorithm0_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                           std::uint32_t element_bytes);

/// The tiled naive kernels (qk, softmax, pv), per head in elements: reads
/// Nd·⌈N/bn⌉ (Q) + Nd·⌈N/bm⌉ (K) + N² (S) + N² (P) + Nd·⌈N/bm⌉ (V), writes N² + N² + Nd.
/// block_k and softmax_rows do not change it. Equals algorithm0_traffic when bm, bn ≥ N.
Traffic naive_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                      std::uint32_t element_bytes, std::uint64_t block_q, std::uint64_t block_kv);

/// FlashAttention Algorithm 1 with Tc = ⌈N/Bc⌉ passes, per head: reads K, V once (Nd each),
/// Q and O Tc times (Tc·Nd each), ℓ and m Tc times (Tc·N fp32 each); writes O Tc·Nd and ℓ, m
/// Tc·N fp32 each, plus, when `count_init`, the initialisation O = 0, ℓ = 0, m = −∞ (Nd + 2N).
/// The kernels do initialise (a flash1_init launch), so the workload's traffic has count_init.
/// Br does not change the traffic.
Traffic flash1_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                       std::uint32_t element_bytes, std::uint64_t block_kv, bool count_init = true);

/// FlashAttention-2 forward, per head: reads Nd (Q) + Nd·⌈N/Br⌉ (K) + Nd·⌈N/Br⌉ (V) elements,
/// writes Nd elements (O) + 4N bytes (L, fp32). Bc and stages do not change it.
Traffic flash2_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                       std::uint32_t element_bytes, std::uint64_t block_q);

/// The extra traffic of a spilling flash1/flash2 (models/spill.h) to its scratch tensor "spill",
/// all heads, in bytes: with SQ, SK, SS the spilled rows of the Q, K (= V) and score tiles summed
/// over the Br row tiles (SQ, SS) or the Bc column tiles (SK) of one head, Tr = ⌈N/Br⌉ and
/// Tc = ⌈N/Bc⌉, per head in elements:
///   flash2 writes d·SQ + 2·Tr·d·SK + 2·N·SS, reads Tc·d·SQ + 2·Tr·d·SK + 2·N·SS;
///   flash1 writes Tc·d·SQ + 2·d·SK + 2·N·SS, reads Tc·d·SQ + 2·Tr·d·SK + 2·N·SS.
/// The 2·N·SS terms are the score tile's round trips (S written and read, P written and read):
/// when no score row fits (SS = N) they are naive attention's 2N² reads and writes of S and P.
/// Zero when the plan is inactive. `resolved` must come from resolve_workload.
TensorTraffic spill_traffic(const WorkloadParams& resolved);

/// Tiled GEMM C[m×n] = A[m×k]·B[k×n]: reads s·(mk·⌈n/tile_n⌉ + kn·⌈m/tile_m⌉), writes s·mn.
/// tile_k does not change it.
Traffic gemm_traffic(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t element_bytes,
                     std::uint64_t tile_m, std::uint64_t tile_n);

}  // namespace memwall
