#pragma once
/// The SMs' ports into the crossbar: each SM has a port (one per direction) whose bandwidth is its
/// SM → crossbar edge in the topology. Ports are booked by reservation: a transfer of B bytes
/// arriving at t starts at max(t, next_free) and holds the port B / bandwidth. Latencies are the
/// topology's too; the memory path adds them.

#include <cstdint>
#include <vector>

#include "sim/core/reservation.h"
#include "sim/core/units.h"
#include "sim/hw/config.h"
#include "sim/hw/topology.h"

namespace memwall {

/// Direction of a transfer through an SM's port.
enum class PortDirection : std::uint8_t { to_sm = 0, from_sm = 1 };

class Xbar {
 public:
  /// One port per SM and direction, at the bandwidth of the SM's edge in `topology`; transfer
  /// times are precomputed for 1..sectors_per_line sectors of l2.sector_size bytes.
  Xbar(const HardwareConfig& config, const Topology& topology);
  /// The same on the topology `config` builds.
  explicit Xbar(const HardwareConfig& config) : Xbar(config, Topology(config)) {}

  /// Reserves SM `sm`'s port in `dir` for `sectors` sectors arriving at `t`. Returns the tick the
  /// transfer ends; adds the wait for the port (start - t) to `queue_delay`.
  Tick transfer(std::uint32_t sm, PortDirection dir, std::uint32_t sectors, Tick t,
                Tick& queue_delay) {
    const std::size_t i = 2 * std::size_t{sm} + static_cast<std::uint32_t>(dir);
    return m_ports.reserve(i, t, m_sector_ticks[i * m_stride + sectors], queue_delay);
  }

  /// One port's booking state, taken out for a run of transfers by one caller (the memory path's
  /// issue step books its SM's port once per line): `open` copies it out, `book` reserves exactly
  /// as `transfer` does, `close` writes it back. Nothing else may book that port in between.
  struct Run {
    std::size_t index = 0;  ///< 2·sm + direction
    Tick next_free = 0;
    Tick busy = 0;
    const Tick* sector_ticks = nullptr;  ///< [sectors] → transfer ticks of this port
  };
  Run open(std::uint32_t sm, PortDirection dir) const {
    const std::size_t i = 2 * std::size_t{sm} + static_cast<std::uint32_t>(dir);
    return Run{i, m_ports.next_free(i), m_ports.busy(i), &m_sector_ticks[i * m_stride]};
  }
  /// Reserves the port of `run` for `sectors` sectors arriving at `t`, as `transfer`.
  static Tick book(Run& run, std::uint32_t sectors, Tick t, Tick& queue_delay) {
    const Tick duration = run.sector_ticks[sectors];
    const Tick start = t > run.next_free ? t : run.next_free;
    queue_delay += start - t;
    run.busy += duration;
    run.next_free = checked_end(start, duration, "a transfer");
    return run.next_free;
  }
  void close(const Run& run) { m_ports.set_state(run.index, run.next_free, run.busy); }

  /// The tick SM `sm`'s port in `dir` is next free.
  Tick next_free(std::uint32_t sm, PortDirection dir) const {
    return m_ports.next_free(2 * std::size_t{sm} + static_cast<std::uint32_t>(dir));
  }

  /// Busy ticks of each port since the last reset_busy, by 2·SM + direction.
  const std::vector<Tick>& busy() const { return m_ports.busy(); }
  void reset_busy() { m_ports.reset_busy(); }

 private:
  Reservations m_ports;  ///< [2·sm + direction]
  std::vector<Tick> m_sector_ticks;  ///< [(2·sm + direction) · m_stride + sectors] → transfer ticks
  std::size_t m_stride = 0;  ///< sectors_per_line + 1
};

/// Ticks to move `sectors` sectors of `sector_bytes` at `bandwidth`, rounded to the nearest
/// picosecond and at least 1 for a non-empty transfer. Shared by the port, slice and channel tables.
std::vector<Tick> sector_transfer_table(Bandwidth bandwidth, Bytes sector_bytes,
                                        std::uint32_t max_sectors);

}  // namespace memwall
