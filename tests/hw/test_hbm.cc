// The HBM model: channel interleave, bus bandwidth by reservation, row-buffer locality per bank,
// reads and writes at their own rates.
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

/// Bus ticks of `sectors` sectors on one channel, from the config: a read's, or (with `fraction`
/// hbm.write_rate or hbm.mixed_write_rate) a write's.
Tick bus_ticks(const HardwareConfig& c, std::uint32_t sectors, double fraction = 1.0) {
  const double per_channel =
      c.hbm.bandwidth.bytes_per_second / c.hbm.channels * c.efficiency.hbm * fraction;
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
  CHECK(hbm.access<HbmOp::kRead>(0, 4, 0, queue) == penalty + x);
  CHECK(queue == 0);
  // Same channel, same row, later: bus time only.
  const Tick t = 1'000'000;
  CHECK(hbm.access<HbmOp::kRead>(128, 4, t, queue) == t + x);
  // Same channel and bank, another row: a channel's row holds row_size / interleave rounds, and
  // rows are spread over the banks (row + banks is the same bank).
  const std::uint64_t rounds_per_row = c.hbm.row_size.count / c.hbm.interleave.count;
  const std::uint64_t same_bank_other_row =
      address_on_channel(c, hbm, rounds_per_row * hbm.banks_per_channel(), ch);
  CHECK(hbm.access<HbmOp::kRead>(same_bank_other_row, 4, 2 * t, queue) == 2 * t + penalty + x);
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
  const Tick a = hbm.access<HbmOp::kRead>(0, 4, 0, queue);
  const Tick b = hbm.access<HbmOp::kRead>(next_row, 4, 0, queue);
  CHECK(a == penalty + x);
  CHECK(b == penalty + 2 * x);
}

TEST_CASE("Writes move at hbm.write_rate alone and at hbm.mixed_write_rate after a read",
          "[run][hbm]") {
  HardwareConfig c = config_with_row_penalty(0);
  c.efficiency.hbm = 0.9;
  c.hbm.write_rate = 0.8;
  c.hbm.mixed_write_rate = 0.6;
  c.hbm.mix_window = 500'000;
  const Tick read = bus_ticks(c, 4);
  const Tick alone = bus_ticks(c, 4, c.hbm.write_rate);
  const Tick mixed = bus_ticks(c, 4, c.hbm.mixed_write_rate);
  REQUIRE(read < alone);
  REQUIRE(alone < mixed);
  Hbm hbm(c);
  const std::uint32_t ch = hbm.channel_of(0);
  const std::uint64_t same_row = 128;  // the second line of the first interleave block
  Tick queue = 0;
  // A channel that has served no read writes at the write-only rate.
  CHECK(hbm.access<HbmOp::kWrite>(0, 4, 0, queue) == alone);
  // A read, then a write on the same channel that starts within the window: the mixed rate.
  const Tick t = 10'000'000;
  CHECK(hbm.access<HbmOp::kRead>(same_row, 4, t, queue) == t + read);
  CHECK(hbm.access<HbmOp::kWrite>(0, 4, t + read, queue) == t + read + mixed);
  // A write that starts at the window's end (the read ended at t + read) writes alone again.
  const Tick later = t + read + c.hbm.mix_window;
  CHECK(hbm.access<HbmOp::kWrite>(same_row, 4, later, queue) == later + alone);
  CHECK(queue == 0);
  // A read on another channel leaves this one's writes alone.
  const std::uint64_t other = address_on_channel(c, hbm, 0, (ch + 1) % c.hbm.channels);
  const Tick u = 2 * later;
  CHECK(hbm.access<HbmOp::kRead>(other, 4, u, queue) == u + read);
  CHECK(hbm.access<HbmOp::kWrite>(0, 4, u, queue) == u + alone);
}

TEST_CASE("Whether a write is mixed depends on when it starts, not when it arrives", "[run][hbm]") {
  HardwareConfig c = config_with_row_penalty(0);
  c.hbm.write_rate = 0.9;
  c.hbm.mixed_write_rate = 0.7;
  c.hbm.mix_window = 500'000;
  Hbm hbm(c);
  const Tick read = bus_ticks(c, 4);
  const Tick alone = bus_ticks(c, 4, c.hbm.write_rate);
  const Tick window_end = read + c.hbm.mix_window;
  Tick queue = 0;
  CHECK(hbm.access<HbmOp::kRead>(0, 4, 0, queue) == read);
  // A write at the window's end holds the bus; one that arrived earlier, within the window, but
  // waits for the bus starts after the window: both write alone.
  CHECK(hbm.access<HbmOp::kWrite>(128, 4, window_end, queue) == window_end + alone);
  CHECK(hbm.access<HbmOp::kWrite>(0, 4, read, queue) == window_end + 2 * alone);
  CHECK(queue == window_end + alone - read);
}
