#pragma once
/// High-bandwidth memory: independent channels, address-interleaved every hbm.interleave bytes.
/// Each channel keeps the tick at which it is next free (bandwidth by reservation, at
/// hbm.bandwidth / channels × efficiency.hbm) and its open row (hbm.row_size bytes of the
/// channel's own address space); an access to another row holds the channel row_miss_penalty
/// longer. hbm.latency is added on top by the caller.

#include <cstdint>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

class Hbm {
 public:
  explicit Hbm(const HardwareConfig& config);

  /// The channel that holds byte address `addr`.
  std::uint32_t channel_of(std::uint64_t addr) const {
    return static_cast<std::uint32_t>((addr / m_interleave) % m_channels);
  }

  /// Reserves the channel of `addr` for `sectors` sectors arriving at `t` (read or write alike).
  /// Returns the tick the transfer ends; adds the wait for the channel to `queue_delay`.
  Tick access(std::uint64_t addr, std::uint32_t sectors, Tick t, Tick& queue_delay) {
    const std::uint64_t block = addr / m_interleave;
    const std::uint32_t ch = static_cast<std::uint32_t>(block % m_channels);
    // Address within the channel: whole interleave blocks of this channel, then the offset.
    const std::uint64_t local = (block / m_channels) * m_interleave + addr % m_interleave;
    const std::uint64_t row = local / m_row_size;
    Tick busy = m_sector_ticks[sectors];
    if (m_open_row[ch] != row) {
      m_open_row[ch] = row;
      busy += m_row_miss_penalty;
      ++m_row_misses;
    }
    Tick& free = m_next_free[ch];
    const Tick start = t > free ? t : free;
    queue_delay += start - t;
    free = start + busy;
    return free;
  }

  /// Added latency of an access that misses L2.
  Tick latency() const { return m_latency; }
  /// Ticks one channel needs for `sectors` sectors (without a row miss).
  Tick transfer_ticks(std::uint32_t sectors) const { return m_sector_ticks[sectors]; }
  /// Accesses that opened a new row so far.
  std::uint64_t row_misses() const { return m_row_misses; }

 private:
  std::uint64_t m_interleave;
  std::uint64_t m_channels;
  std::uint64_t m_row_size;
  Tick m_row_miss_penalty;
  Tick m_latency;
  std::vector<Tick> m_sector_ticks;
  std::vector<Tick> m_next_free;
  std::vector<std::uint64_t> m_open_row;
  std::uint64_t m_row_misses = 0;
};

}  // namespace memwall
