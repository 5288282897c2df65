#pragma once
/// Bit counts on the hot path without a library call: the build targets baseline x86-64 (no
/// `-mpopcnt`), where `std::popcount` compiles to a call to libgcc's `__popcountdi2`.

#include <array>
#include <cstdint>

namespace memwall {

namespace bits_detail {
/// Set bits of each byte value.
inline constexpr auto kBitsOfByte = [] {
  std::array<std::uint8_t, 256> bits{};
  for (std::size_t v = 0; v < bits.size(); ++v) {
    bits[v] = static_cast<std::uint8_t>((v & 1) + bits[v >> 1]);
  }
  return bits;
}();
}  // namespace bits_detail

/// Set bits of a mask of at most 8 bits (a line's sector mask: kMaxSectorsPerLine): one load
/// from a 256-byte table.
constexpr std::uint32_t popcount8(std::uint32_t m) { return bits_detail::kBitsOfByte[m & 0xFFu]; }

/// Set bits of a mask of at most 16 bits (a 16-way set's way mask): two loads from the table.
constexpr std::uint32_t popcount16(std::uint32_t m) {
  return bits_detail::kBitsOfByte[m & 0xFFu] + bits_detail::kBitsOfByte[(m >> 8) & 0xFFu];
}

}  // namespace memwall
