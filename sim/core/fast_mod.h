#pragma once
/// Remainder by a divisor fixed at run time, without a division instruction (Lemire, Kaser and
/// Kurz, "Faster remainder by direct computation", 2019): exact for every 32-bit numerator and
/// 32-bit divisor. The L2 takes a remainder on every line access; a 64-bit `div` was a visible
/// share of the simulator's time (docs/performance.md).

#include <cstdint>
#include <stdexcept>
#include <string>

namespace memwall {

/// The 128-bit product the fast divisions take the high half of (a GCC and Clang extension).
__extension__ typedef unsigned __int128 FastDivProduct;

class FastMod32 {
 public:
  /// A remainder by `divisor`, in [1, 2^32).
  explicit FastMod32(std::uint32_t divisor)
      : m_multiplier(~std::uint64_t{0} / divisor + 1), m_divisor(divisor) {}

  /// `value % divisor`: the high 64 bits of (multiplier · value mod 2^64) × divisor.
  std::uint32_t operator()(std::uint32_t value) const {
    const std::uint64_t low = m_multiplier * value;
    return static_cast<std::uint32_t>((static_cast<FastDivProduct>(low) * m_divisor) >> 64);
  }

  std::uint32_t divisor() const { return m_divisor; }

 private:
  std::uint64_t m_multiplier;
  std::uint32_t m_divisor;
};

/// Quotient by a divisor fixed at run time, without a division instruction: ⌊n · M / 2^64⌋ with
/// M = ⌊2^64 / d⌋ + 1. M·d = 2^64 + e with 0 < e <= d, so n·M / 2^64 = n/d + n·e / (d·2^64), and
/// the floor is exact whenever n·e < 2^64, which n·d < 2^64 guarantees: the caller states the
/// largest numerator and the constructor refuses a pair that could fail. (The HBM maps every
/// access's address to its channel with a division by the channel count.)
class FastDiv64 {
 public:
  /// Quotients by `divisor` (>= 1) of numerators up to `max_numerator`; throws std::domain_error
  /// if max_numerator · divisor could reach 2^64.
  FastDiv64(std::uint64_t divisor, std::uint64_t max_numerator);

  /// `value / divisor`, for value <= the constructor's max_numerator.
  std::uint64_t operator()(std::uint64_t value) const {
    if (m_divisor == 1) return value;
    return static_cast<std::uint64_t>((static_cast<FastDivProduct>(value) * m_multiplier) >> 64);
  }

  std::uint64_t divisor() const { return m_divisor; }

 private:
  std::uint64_t m_multiplier;
  std::uint64_t m_divisor;
};

inline FastDiv64::FastDiv64(std::uint64_t divisor, std::uint64_t max_numerator)
    : m_multiplier(divisor <= 1 ? 0 : ~std::uint64_t{0} / divisor + 1), m_divisor(divisor) {
  if (divisor == 0 || (max_numerator != 0 && divisor > ~std::uint64_t{0} / max_numerator)) {
    throw std::domain_error("FastDiv64: numerators up to " + std::to_string(max_numerator) +
                            " by " + std::to_string(divisor) + " are beyond its exact range");
  }
}

}  // namespace memwall
