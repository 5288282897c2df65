#include "sim/hw/xbar.h"

#include <algorithm>
#include <cmath>

namespace memwall {

std::vector<Tick> sector_transfer_table(Bandwidth bandwidth, Bytes sector_bytes,
                                        std::uint32_t max_sectors) {
  std::vector<Tick> table(max_sectors + 1, 0);
  for (std::uint32_t s = 1; s <= max_sectors; ++s) {
    const double ps = static_cast<double>(s * sector_bytes.count) * 1e12 / bandwidth.bytes_per_second;
    table[s] = std::max<Tick>(1, static_cast<Tick>(std::llround(ps)));
  }
  return table;
}

Xbar::Xbar(const HardwareConfig& c)
    : m_next_free(2 * std::size_t{c.sm.count}, 0),
      m_sector_ticks(sector_transfer_table(
          c.xbar.port_bandwidth, c.l2.sector_size,
          static_cast<std::uint32_t>(c.l2.line_size.count / c.l2.sector_size.count))),
      m_latency(c.xbar.latency) {}

}  // namespace memwall
