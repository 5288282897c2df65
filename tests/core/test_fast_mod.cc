// FastMod32 and FastDiv64: the remainder and the quotient without a division equal operator% and
// operator/ (FastDiv64 within the numerator range its constructor accepts, which it checks).
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>

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

TEST_CASE("FastDiv64 equals / up to its largest numerator, and refuses a range it cannot divide",
          "[fast_mod]") {
  // The HBM's use: interleave blocks below 2^48 by at most 1024 channels.
  constexpr std::uint64_t kBlocks = std::uint64_t{1} << 48;
  for (const std::uint64_t d :
       std::initializer_list<std::uint64_t>{1, 2, 3, 80, 96, 97, 1000, 1023, 1024}) {
    const FastDiv64 div(d, kBlocks);
    for (const std::uint64_t v : std::initializer_list<std::uint64_t>{
             0, 1, d - 1, d, d + 1, 2 * d - 1, kBlocks - 1, kBlocks}) {
      INFO("d = " << d << ", v = " << v);
      CHECK(div(v) == v / d);
    }
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const std::uint64_t v = mix64(i + d) % (kBlocks + 1);
      if (div(v) != v / d) FAIL("d = " << d << ", v = " << v << ": " << div(v) << " != " << v / d);
    }
  }
  // Where n·d reaches 2^64 the multiply-shift can be off by one: such a pair is refused.
  CHECK_THROWS_AS(FastDiv64(3, std::numeric_limits<std::uint64_t>::max() / 2), std::domain_error);
  CHECK_THROWS_AS(FastDiv64(0, 1), std::domain_error);
  CHECK_NOTHROW(FastDiv64(1, std::numeric_limits<std::uint64_t>::max()));
}
