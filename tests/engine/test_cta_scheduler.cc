// The CTA scheduler on its own: where the first wave goes, and which slot a finished CTA frees.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/engine/cta_scheduler.h"

using namespace memwall;

TEST_CASE("The first wave is placed breadth-first: one CTA per SM per pass, lowest slot first",
          "[cta_scheduler]") {
  CtaScheduler s(3);
  s.begin_kernel(2);
  CHECK(s.slot_count() == 6);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> placed;
  s.first_wave([&](std::uint32_t sm, std::uint32_t slot) {
    placed.emplace_back(sm, slot);
    return true;
  });
  CHECK(placed == std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                      {0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}});
  for (std::uint32_t sm = 0; sm < 3; ++sm) CHECK_FALSE(s.has_free_slot(sm));
  CHECK(s.slot_id(2, 1) == 5);
}

TEST_CASE("A grid smaller than the chip stops the first wave where it runs out",
          "[cta_scheduler]") {
  CtaScheduler s(4);
  s.begin_kernel(3);
  int left = 5;  // CTAs in the grid
  std::vector<std::uint32_t> sms;
  s.first_wave([&](std::uint32_t sm, std::uint32_t) {
    if (left == 0) return false;
    --left;
    sms.push_back(sm);
    return true;
  });
  CHECK(sms == std::vector<std::uint32_t>{0, 1, 2, 3, 0});
  // The refused slot stays free: SM 1 still has two, SM 0 one.
  CHECK(s.has_free_slot(1));
  CHECK(s.next_slot(0) == 2);
  CHECK(s.next_slot(1) == 1);
}

TEST_CASE("A finished CTA's slot is the next one its SM gives out", "[cta_scheduler]") {
  CtaScheduler s(2);
  s.begin_kernel(4);
  s.first_wave([](std::uint32_t, std::uint32_t) { return true; });
  s.release(1, 2);
  REQUIRE(s.has_free_slot(1));
  CHECK(s.next_slot(1) == 2);
  s.take_slot(1);
  CHECK_FALSE(s.has_free_slot(1));
  // A new kernel frees every slot again, with its own slot count.
  s.begin_kernel(1);
  CHECK(s.slot_count() == 2);
  CHECK(s.next_slot(0) == 0);
}
