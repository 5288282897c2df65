#pragma once
/// The CPU race: naive attention (materialises the N×N scores) against tiled attention with the
/// online softmax (one tile of scores at a time), both in double, both with plain loops and
/// every working buffer drawn from a CountingAllocator, so their memory is counted exactly.
///
/// A CPU has no HBM/SRAM split: whatever speed gap this shows comes from caches and allocation,
/// and it is smaller than on a GPU, where the naive kernel's score matrix round-trips through HBM.

#include <cstdint>
#include <string>
#include <vector>

#include "explain/counting_allocator.h"

namespace memwall::explain {

/// Attention inputs: Q, K, V row-major, each seq × head_dim.
struct AttentionInputs {
  std::uint64_t seq = 0;  ///< N, rows of Q, K and V
  std::uint64_t head_dim = 0;  ///< d, columns
  std::vector<double> q, k, v;
};

/// Q, K and V filled with standard normals from `seed` (deterministic). Not counted: both
/// implementations read the same inputs.
AttentionInputs make_attention_inputs(std::uint64_t seq, std::uint64_t head_dim,
                                      std::uint64_t seed);

/// One implementation's output and what its buffers requested.
struct AttentionRun {
  std::vector<double> output;  ///< O, seq × head_dim, row-major
  AllocationCounter memory;  ///< every byte its working buffers (and O) requested
};

/// softmax(Q Kᵀ / √d) V with the full N×N score matrix S (softmax in place). Its buffers:
/// S (N²·8 bytes) and O (N·d·8 bytes).
AttentionRun naive_attention(const AttentionInputs& in);

/// The same with FlashAttention-2's loop order: query blocks of Br = min(tile, N) rows, key/value
/// blocks of Bc = min(tile, N) rows, running max and sum per row. Its buffers: one score tile
/// (Br·Bc·8), m and ℓ (2·Br·8) and O (N·d·8). Throws UsageError if tile is 0.
AttentionRun tiled_attention(const AttentionInputs& in, std::uint64_t tile);

/// Exact bytes naive_attention requests: (N² + N·d)·8.
std::uint64_t naive_attention_bytes(std::uint64_t seq, std::uint64_t head_dim);
/// Exact bytes tiled_attention requests: (Br·Bc + 2·Br + N·d)·8 with Br = Bc = min(tile, N).
std::uint64_t tiled_attention_bytes(std::uint64_t seq, std::uint64_t head_dim, std::uint64_t tile);

/// Largest element-wise |a − b|; the vectors must have the same size.
double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b);

/// Parameters of a race.
struct RaceOptions {
  std::vector<std::uint64_t> seqs;  ///< N values, each in [1, kMaxRaceSeq]; one result row each
  std::uint64_t head_dim = 64;  ///< d, in [1, 1024]
  std::uint64_t tile = 64;  ///< tiled implementation's block size, >= 1
  std::uint64_t repeat = 5;  ///< timed runs per implementation (after one warm-up), >= 1
  std::uint64_t seed = 1;  ///< input generator seed
};

/// Largest N accepted (the naive score matrix is then 2 GiB).
inline constexpr std::uint64_t kMaxRaceSeq = 16384;
/// Largest acceptable max abs difference between the two outputs.
inline constexpr double kRaceTolerance = 1e-10;

/// One row of the race: one N.
struct RaceRow {
  std::uint64_t seq = 0;
  double naive_seconds = 0;  ///< median wall-clock of `repeat` runs
  double tiled_seconds = 0;  ///< median wall-clock of `repeat` runs
  AllocationCounter naive_memory;
  AllocationCounter tiled_memory;
  double max_abs_diff = 0;  ///< between the two outputs
  bool agree = false;  ///< max_abs_diff <= kRaceTolerance
};

/// Runs the race for each N in order. Throws UsageError on bad options.
std::vector<RaceRow> run_race(const RaceOptions& options);

/// The rows as a readable table, with the verdict per row and the CPU caveat.
std::string format_race(const RaceOptions& options, const std::vector<RaceRow>& rows);

}  // namespace memwall::explain
