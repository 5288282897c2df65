#pragma once
/// A portable, seeded random source for the explainer experiments.
///
/// std::mt19937_64's sequence is fixed by the standard, but std::uniform_real_distribution and
/// std::normal_distribution are not: they differ between standard libraries. This wraps the
/// engine with its own transforms, so the same seed gives the same numbers everywhere.

#include <cstdint>
#include <random>

namespace memwall::explain {

/// Deterministic uniform and normal draws from std::mt19937_64 seeded with `seed`.
class Random {
 public:
  explicit Random(std::uint64_t seed) : m_engine(seed) {}

  /// Uniform in [0, 1), 53 random bits.
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal (mean 0, standard deviation 1), by the Box–Muller transform.
  double normal();

 private:
  std::mt19937_64 m_engine;
  bool m_has_spare = false;
  double m_spare = 0.0;
};

}  // namespace memwall::explain
