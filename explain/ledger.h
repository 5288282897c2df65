#pragma once
/// The online-softmax ledger: one row of attention scores streamed tile by tile, as a
/// FlashAttention kernel sees it, with the running max m, the running sum ℓ and the rescale
/// factor exp(m_old − m_new) recorded per tile.
///
/// Each score s_j comes with a value v_j (a one-dimensional V), so the row's result is the
/// attention output o = Σ_j softmax(s)_j · v_j. The streamed result is compared with the
/// all-at-once softmax, and so is the same stream with the rescale step left out.

#include <cstdint>
#include <string>
#include <vector>

namespace memwall::explain {

/// Parameters of one ledger run.
struct LedgerOptions {
  std::uint64_t row_len = 0;  ///< scores in the row, in [1, kMaxLedgerRowLen]
  std::uint64_t tile = 0;  ///< scores per tile, >= 1; a tile larger than the row is clipped
  std::uint64_t seed = 1;  ///< seed of the score and value generator
  bool late_max = false;  ///< put the row's maximum, far above the rest, in the last tile
};

/// Largest accepted row (16 Mi scores, 256 MiB of doubles for scores and values).
inline constexpr std::uint64_t kMaxLedgerRowLen = std::uint64_t{1} << 24;
/// Standard deviation of the scores (a scaled normal), large enough that exp() spans decades.
inline constexpr double kLedgerScoreScale = 4.0;
/// With late_max, how far the planted maximum sits above every other score.
inline constexpr double kLedgerLateMaxGap = 12.0;

/// The ledger after one tile.
struct LedgerStep {
  std::uint64_t tile_index = 0;
  std::uint64_t begin = 0;  ///< first score of the tile (index into the row)
  std::uint64_t end = 0;  ///< one past the last score of the tile
  double tile_max = 0;  ///< largest score in this tile
  double m_old = 0;  ///< running max before the tile (−inf before the first tile)
  double m_new = 0;  ///< running max after the tile
  double rescale = 0;  ///< exp(m_old − m_new), applied to ℓ and o (0 for the first tile)
  double l = 0;  ///< running sum ℓ = Σ_{j seen} exp(s_j − m_new)
  double l_no_rescale = 0;  ///< the same sum when the rescale step is skipped
};

/// Everything the ledger computed.
struct LedgerResult {
  LedgerOptions options;
  std::vector<double> scores;  ///< the row s_0 … s_{L−1}
  std::vector<double> values;  ///< the values v_0 … v_{L−1}, uniform in [−1, 1)
  std::vector<LedgerStep> steps;  ///< one per tile, in streaming order
  std::uint64_t argmax = 0;  ///< index of the row's maximum score
  double reference_max = 0;  ///< max_j s_j, all at once
  double reference_sum = 0;  ///< Σ_j exp(s_j − max), all at once
  double reference_output = 0;  ///< Σ_j softmax(s)_j · v_j, all at once
  double online_output = 0;  ///< o / ℓ from the rescaled stream
  double no_rescale_output = 0;  ///< o / ℓ from the stream without rescale
  double online_error = 0;  ///< max abs difference from the reference, over o and every p_j
  double no_rescale_error = 0;  ///< the same, for the stream without rescale
};

/// Streams the row and fills the ledger. Throws UsageError when row_len or tile is 0 or
/// row_len exceeds kMaxLedgerRowLen. Deterministic per options.
LedgerResult run_ledger(const LedgerOptions& options);

/// The ledger as a readable table, with the comparison lines at the end.
std::string format_ledger(const LedgerResult& result);

}  // namespace memwall::explain
