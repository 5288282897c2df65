// Occupancy: how many CTAs of a kernel are resident on one SM, and which limit decides it.
// Expected counts are computed here from the SM's limits, with registers allocated per warp in
// whole units of sm.register_alloc_unit, warps of sm.warp_size threads.

#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/hw/sm.h"

namespace memwall {
namespace {

SmConfig h200_like() {
  SmConfig sm;
  sm.count = 132;
  sm.smem_per_sm = Bytes{228 * 1024};
  sm.smem_per_block = Bytes{227 * 1024};
  sm.max_threads_per_sm = 2048;
  sm.max_threads_per_block = 1024;
  sm.registers_per_sm = 65536;
  sm.max_ctas_per_sm = 32;
  return sm;
}

/// CTAs the register file holds: whole allocation units per warp, whole warps per CTA.
std::uint64_t ctas_by_registers(const SmConfig& sm, std::uint64_t regs_per_thread,
                                std::uint64_t threads) {
  const std::uint64_t unit = sm.register_alloc_unit;
  const std::uint64_t per_warp = (regs_per_thread * sm.warp_size + unit - 1) / unit * unit;
  const std::uint64_t warps = (threads + sm.warp_size - 1) / sm.warp_size;
  return sm.registers_per_sm / (per_warp * warps);
}

}  // namespace

TEST_CASE("Registers are allocated per warp in whole units", "[occupancy]") {
  const SmConfig sm = h200_like();
  // 33 registers round up to 40 per thread: 6 CTAs of 256 threads, where 33 exactly would give 7.
  REQUIRE(sm.registers_per_sm / (33 * 256) == 7);
  const Occupancy o = occupancy(sm, CtaResources{0, 256, 33}, "k");
  CHECK(o.ctas_per_sm == ctas_by_registers(sm, 33, 256));
  CHECK(o.ctas_per_sm == 6);
  CHECK(o.limited_by == OccupancyLimit::kRegisters);
  // The compiled naive pv at d = 128 (131 registers, 256 threads) fits once per SM.
  CHECK(occupancy(sm, CtaResources{64 * 1024, 256, 131}, "pv").ctas_per_sm == 1);
  // A CTA of 48 threads holds two whole warps of registers.
  CHECK(occupancy(sm, CtaResources{0, 48, 255}, "k").ctas_per_sm == ctas_by_registers(sm, 255, 48));
}

TEST_CASE("The tightest limit decides occupancy and is named", "[occupancy]") {
  const SmConfig sm = h200_like();
  const Occupancy by_smem = occupancy(sm, CtaResources{80 * 1024, 128, 168}, "flash2");
  CHECK(by_smem.ctas_per_sm == sm.smem_per_sm.count / (80 * 1024));
  CHECK(by_smem.limited_by == OccupancyLimit::kSharedMemory);
  // 1024 threads of 16 registers: the registers would allow 4, the threads allow 2.
  REQUIRE(ctas_by_registers(sm, 16, 1024) > sm.max_threads_per_sm / 1024);
  const Occupancy by_threads = occupancy(sm, CtaResources{0, 1024, 16}, "k");
  CHECK(by_threads.ctas_per_sm == sm.max_threads_per_sm / 1024);
  CHECK(by_threads.limited_by == OccupancyLimit::kThreads);
  CHECK(occupancy(sm, CtaResources{0, 32, 32}, "k").limited_by == OccupancyLimit::kMaxCtas);
}

TEST_CASE("A CTA whose rounded registers exceed the SM's is rejected by name", "[occupancy]") {
  const SmConfig sm = h200_like();
  // 255 registers round up to 256 per thread: 256 threads need exactly the 65536 there are...
  CHECK(occupancy(sm, CtaResources{0, 256, 255}, "k").ctas_per_sm == 1);
  // ...and 257 threads need a ninth warp, which does not fit.
  REQUIRE_THROWS_AS(occupancy(sm, CtaResources{0, 257, 255}, "big"), UsageError);
  REQUIRE_THROWS_WITH(occupancy(sm, CtaResources{0, 257, 255}, "big"),
                      Catch::Contains("kernel \"big\"") && Catch::Contains("sm.registers_per_sm"));
}

TEST_CASE("The warp size and the register allocation unit come from the config", "[occupancy]") {
  SmConfig sm = h200_like();
  // A chip with 64-thread warps and 512-register units: a 256-thread CTA of 33 registers is 4
  // warps of round_up(33 x 64, 512) = 2560 registers, so 65536 / 10240 = 6 CTAs.
  sm.warp_size = 64;
  sm.register_alloc_unit = 512;
  const Occupancy o = occupancy(sm, CtaResources{0, 256, 33}, "k");
  CHECK(o.ctas_per_sm == ctas_by_registers(sm, 33, 256));
  CHECK(o.ctas_per_sm == 6);
  CHECK(o.limited_by == OccupancyLimit::kRegisters);
}

}  // namespace memwall
