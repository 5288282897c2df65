// The HBM model: channel interleave, bus bandwidth by reservation, row-buffer locality per bank.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/hw/hbm.h"
#include "tests/support/engine.h"

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
  return static_cast<Tick>(
      std::llround(static_cast<double>(sectors * c.l2.sector_size.count) * 1e12 / per_channel));
}

}  // namespace

/// The first address of interleave block `index` of round `round` (a round is `channels`
/// consecutive interleave blocks).
std::uint64_t block_address(const HardwareConfig& c, std::uint64_t round, std::uint64_t index) {
  return (round * c.hbm.channels + index) * c.hbm.interleave.count;
}

/// The address in round `round` whose interleave block is on `channel`.
std::uint64_t address_on_channel(const HardwareConfig& c, const Hbm& hbm, std::uint64_t round,
                                 std::uint32_t channel) {
  for (std::uint64_t i = 0; i < c.hbm.channels; ++i) {
    if (hbm.channel_of(block_address(c, round, i)) == channel) return block_address(c, round, i);
  }
  FAIL("round " << round << " has no block on channel " << channel);
  return 0;
}

TEST_CASE("Each round of hbm.channels interleave blocks covers every channel once", "[run][hbm]") {
  for (const std::uint32_t channels : {4u, 96u}) {
    HardwareConfig c = test::small_config();
    c.hbm.channels = channels;
    const Hbm hbm(c);
    const std::uint64_t il = c.hbm.interleave.count;
    bool rotated = false;
    for (std::uint64_t round = 0; round < 64; ++round) {
      std::vector<int> seen(channels, 0);
      for (std::uint64_t i = 0; i < channels; ++i) {
        const std::uint64_t a = block_address(c, round, i);
        const std::uint32_t ch = hbm.channel_of(a);
        REQUIRE(ch < channels);
        CHECK(hbm.channel_of(a + il - 1) == ch);  // a block never straddles channels
        ++seen[ch];
        // Within a round consecutive blocks take consecutive channels (mod channels).
        if (i > 0) CHECK(ch == (hbm.channel_of(a - il) + 1) % channels);
      }
      for (const int n : seen) CHECK(n == 1);
      if (hbm.channel_of(block_address(c, round, 0)) != 0) rotated = true;
    }
    CHECK(rotated);  // the rounds are rotated, not all starting at channel 0
  }
}

TEST_CASE("A stride of whole interleave blocks does not camp on a few channels", "[run][hbm]") {
  // 96 channels, 256 B interleave, rows of a 4 KiB pitch (as the columns of a P box of naive's
  // pv): a plain modulo interleave puts every row on 96 / gcd(96, 16) = 6 channels.
  HardwareConfig c = test::small_config();
  c.hbm.channels = 96;
  const Hbm hbm(c);
  const std::uint64_t pitch = 16 * c.hbm.interleave.count;
  std::vector<int> used(c.hbm.channels, 0);
  for (std::uint64_t row = 0; row < 128; ++row) used[hbm.channel_of(row * pitch)] = 1;
  int distinct = 0;
  for (const int u : used) distinct += u;
  CHECK(distinct >= 48);
}

TEST_CASE("Opening a row costs row_miss_penalty once; later accesses to the open row do not",
          "[run][hbm]") {
  const Tick penalty = 40'000;
  const HardwareConfig c = config_with_row_penalty(penalty);
  Hbm hbm(c);
  const Tick x = bus_ticks(c, 4);
  Tick queue = 0;
  const std::uint32_t ch = hbm.channel_of(0);
  CHECK(hbm.access(HbmOp::kRead, 0, 4, 0, queue) == penalty + x);
  CHECK(queue == 0);
  // Same channel, same row, later: bus time only.
  const Tick t = 1'000'000;
  CHECK(hbm.access(HbmOp::kRead, 128, 4, t, queue) == t + x);
  // Same channel and bank, another row: a channel's row holds row_size / interleave rounds, and
  // rows are spread over the banks (row + banks is the same bank).
  const std::uint64_t rounds_per_row = c.hbm.row_size.count / c.hbm.interleave.count;
  const std::uint64_t same_bank_other_row =
      address_on_channel(c, hbm, rounds_per_row * hbm.banks_per_channel(), ch);
  CHECK(hbm.access(HbmOp::kRead, same_bank_other_row, 4, 2 * t, queue) == 2 * t + penalty + x);
  CHECK(hbm.row_misses() == 2);
}

TEST_CASE("Row openings in different banks overlap; the bus serialises the transfers",
          "[run][hbm]") {
  const Tick penalty = 40'000;
  const HardwareConfig c = config_with_row_penalty(penalty);
  Hbm hbm(c);
  const Tick x = bus_ticks(c, 4);
  // The next row of the same channel: another bank.
  const std::uint64_t next_row =
      address_on_channel(c, hbm, c.hbm.row_size.count / c.hbm.interleave.count, hbm.channel_of(0));
  Tick queue = 0;
  const Tick a = hbm.access(HbmOp::kRead, 0, 4, 0, queue);
  const Tick b = hbm.access(HbmOp::kRead, next_row, 4, 0, queue);
  CHECK(a == penalty + x);
  CHECK(b == penalty + 2 * x);
}
