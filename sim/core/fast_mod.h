#pragma once
/// Remainder by a divisor fixed at run time, without a division instruction (Lemire, Kaser and
/// Kurz, "Faster remainder by direct computation", 2019): exact for every 32-bit numerator and
/// 32-bit divisor. The L2 takes a remainder on every line access; a 64-bit `div` was a visible
/// share of the simulator's time (docs/performance.md).

#include <cstdint>

namespace memwall {

class FastMod32 {
 public:
  /// A remainder by `divisor`, in [1, 2^32).
  explicit FastMod32(std::uint32_t divisor)
      : m_multiplier(~std::uint64_t{0} / divisor + 1), m_divisor(divisor) {}

  /// `value % divisor`.
  std::uint32_t operator()(std::uint32_t value) const {
    const std::uint64_t low = m_multiplier * value;
    // The high 64 bits of low × divisor, in two 32 × 32-bit halves: (hi·d + (lo·d >> 32)) >> 32
    // is exact and cannot overflow (hi·d <= 2^64 - 2^33 + 1, lo·d >> 32 < 2^32).
    const std::uint64_t d = m_divisor;
    return static_cast<std::uint32_t>(((low >> 32) * d + (((low & 0xFFFFFFFFu) * d) >> 32)) >> 32);
  }

  std::uint32_t divisor() const { return m_divisor; }

 private:
  std::uint64_t m_multiplier;
  std::uint32_t m_divisor;
};

}  // namespace memwall
