// popcount8 and popcount16 (sim/core/bits.h, the memory path's and the L2's bit counts) equal
// std::popcount on every mask they take.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>

#include "sim/core/bits.h"

using namespace memwall;

TEST_CASE("popcount8 and popcount16 count the set bits of every mask they take", "[bits]") {
  for (std::uint32_t m = 0; m < 256; ++m) {
    if (popcount8(m) != static_cast<std::uint32_t>(std::popcount(m)))
      FAIL("popcount8(" << m << ")");
  }
  for (std::uint32_t m = 0; m < 65536; ++m) {
    if (popcount16(m) != static_cast<std::uint32_t>(std::popcount(m)))
      FAIL("popcount16(" << m << ")");
  }
  STATIC_REQUIRE(popcount16(0xFFFFu) == 16);
  STATIC_REQUIRE(popcount8(0xA5u) == 4);
}
