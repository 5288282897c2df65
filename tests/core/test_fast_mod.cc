// FastMod32: the remainder without a division equals operator% for every 32-bit numerator.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "sim/core/fast_mod.h"
#include "sim/core/hash.h"

using namespace memwall;

TEST_CASE("FastMod32 equals % at the edges and on pseudo-random numerators", "[fast_mod]") {
  constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();
  for (const std::uint32_t d :
       {1u, 2u, 3u, 7u, 96u, 480u, 30720u, 65535u, 65536u, 1000003u, kMax / 2, kMax - 1, kMax}) {
    const FastMod32 mod(d);
    for (const std::uint32_t v : {0u, 1u, d - 1, d, d + 1, kMax - 1, kMax}) {
      INFO("d = " << d << ", v = " << v);
      CHECK(mod(v) == v % d);
    }
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const auto v = static_cast<std::uint32_t>(mix64(i * 0x9E3779B9ull + d));
      if (mod(v) != v % d) FAIL("d = " << d << ", v = " << v << ": " << mod(v) << " != " << v % d);
    }
  }
}
