#pragma once
/// Deterministic integer hashing for address mapping (L2 slices, HBM channel rotation).

#include <cstdint>

namespace memwall {

/// A 64-bit mix of `x`: splitmix64's increment and finaliser.
constexpr std::uint64_t mix64(std::uint64_t x) {
  std::uint64_t h = x + 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

/// The high 32 bits of `h` mapped onto [0, n) by multiply-shift (n < 2^32).
constexpr std::uint64_t reduce_hash(std::uint64_t h, std::uint64_t n) {
  return ((h >> 32) * n) >> 32;
}

}  // namespace memwall
