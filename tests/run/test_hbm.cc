// The HBM model: channel interleave, bus bandwidth by reservation, row-buffer locality per bank.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/hw/hbm.h"
#include "tests/run/support.h"

using namespace memwall;

namespace {

HardwareConfig config_with_row_penalty(Tick penalty) {
  HardwareConfig c = test::small_config();
  c.hbm.row_miss_penalty = penalty;
  return c;
}

/// Bus ticks of `sectors` sectors on one channel, from the config.
Tick bus_ticks(const HardwareConfig& c, std::uint32_t sectors) {
  const double per_channel = c.hbm.bandwidth.bytes_per_second / c.hbm.channels * c.efficiency.hbm;
  return static_cast<Tick>(std::llround(static_cast<double>(sectors * c.l2.sector_size.count) * 1e12 / per_channel));
}

}  // namespace

TEST_CASE("Addresses are interleaved over the HBM channels every hbm.interleave bytes", "[run][hbm]") {
  const HardwareConfig c = test::small_config();
  const Hbm hbm(c);
  const std::uint64_t il = c.hbm.interleave.count;
  for (std::uint64_t i = 0; i < 3 * c.hbm.channels; ++i) {
    CHECK(hbm.channel_of(i * il) == i % c.hbm.channels);
    CHECK(hbm.channel_of(i * il + il - 1) == i % c.hbm.channels);
  }
}

TEST_CASE("Opening a row costs row_miss_penalty once; later accesses to the open row do not",
          "[run][hbm]") {
  const Tick penalty = 40'000;
  const HardwareConfig c = config_with_row_penalty(penalty);
  Hbm hbm(c);
  const Tick x = bus_ticks(c, 4);
  Tick queue = 0;
  CHECK(hbm.access(0, 4, 0, queue) == penalty + x);
  CHECK(queue == 0);
  // Same channel, same row, later: bus time only.
  const Tick t = 1'000'000;
  CHECK(hbm.access(128, 4, t, queue) == t + x);
  // Same channel and bank, another row (rows are spread over banks: row + banks is the same bank).
  const std::uint64_t row_stride = c.hbm.row_size.count / c.hbm.interleave.count *
                                   c.hbm.interleave.count * c.hbm.channels;  // one row of channel 0
  const std::uint64_t same_bank_other_row = row_stride * Hbm::kBanksPerChannel;
  CHECK(hbm.channel_of(same_bank_other_row) == 0);
  CHECK(hbm.access(same_bank_other_row, 4, 2 * t, queue) == 2 * t + penalty + x);
  CHECK(hbm.row_misses() == 2);
}

TEST_CASE("Row openings in different banks overlap; the bus serialises the transfers", "[run][hbm]") {
  const Tick penalty = 40'000;
  const HardwareConfig c = config_with_row_penalty(penalty);
  Hbm hbm(c);
  const Tick x = bus_ticks(c, 4);
  const std::uint64_t row_stride = c.hbm.row_size.count * c.hbm.channels;  // next row, channel 0
  Tick queue = 0;
  const Tick a = hbm.access(0, 4, 0, queue);
  const Tick b = hbm.access(row_stride, 4, 0, queue);  // another bank of channel 0
  CHECK(a == penalty + x);
  CHECK(b == penalty + 2 * x);
}
