#pragma once
/// The crossbar between SMs and L2 slices: each SM has a port of fixed bandwidth (one per
/// direction) and every traversal adds a fixed latency. Ports are booked by reservation: a
/// transfer of B bytes arriving at t starts at max(t, next_free) and holds the port B / bandwidth.

#include <cstdint>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// Direction of a transfer through an SM's port.
enum class PortDirection : std::uint8_t { to_sm = 0, from_sm = 1 };

class Xbar {
 public:
  /// One port per SM and direction, at xbar.port_bandwidth; transfer times are precomputed for
  /// 1..sectors_per_line sectors of l2.sector_size bytes.
  explicit Xbar(const HardwareConfig& config);

  /// Reserves SM `sm`'s port in `dir` for `sectors` sectors arriving at `t`. Returns the tick the
  /// transfer ends; adds the wait for the port (start - t) to `queue_delay`.
  Tick transfer(std::uint32_t sm, PortDirection dir, std::uint32_t sectors, Tick t,
                Tick& queue_delay) {
    Tick& free = m_next_free[2 * sm + static_cast<std::uint32_t>(dir)];
    const Tick start = t > free ? t : free;
    queue_delay += start - t;
    free = start + m_sector_ticks[sectors];
    return free;
  }

  /// The tick SM `sm`'s port in `dir` is next free.
  Tick next_free(std::uint32_t sm, PortDirection dir) const {
    return m_next_free[2 * sm + static_cast<std::uint32_t>(dir)];
  }

  /// Ticks the port needs for `sectors` sectors.
  Tick transfer_ticks(std::uint32_t sectors) const { return m_sector_ticks[sectors]; }
  /// One-way traversal latency.
  Tick latency() const { return m_latency; }

 private:
  std::vector<Tick> m_next_free;     ///< [2·sm + direction]
  std::vector<Tick> m_sector_ticks;  ///< [sectors] → transfer ticks
  Tick m_latency = 0;
};

/// Ticks to move `sectors` sectors of `sector_bytes` at `bandwidth`, rounded to the nearest
/// picosecond and at least 1 for a non-empty transfer. Shared by the port, slice and channel tables.
std::vector<Tick> sector_transfer_table(Bandwidth bandwidth, Bytes sector_bytes,
                                        std::uint32_t max_sectors);

}  // namespace memwall
