#include "sim/hw/xbar.h"

#include <algorithm>
#include <cmath>

namespace memwall {

std::vector<Tick> sector_transfer_table(Bandwidth bandwidth, Bytes sector_bytes,
                                        std::uint32_t max_sectors) {
  std::vector<Tick> table(max_sectors + 1, 0);
  for (std::uint32_t s = 1; s <= max_sectors; ++s) {
    const double ps =
        static_cast<double>(s * sector_bytes.count) * 1e12 / bandwidth.bytes_per_second;
    table[s] = std::max<Tick>(1, static_cast<Tick>(std::llround(ps)));
  }
  return table;
}

Xbar::Xbar(const HardwareConfig& c, const Topology& topology)
    : m_ports(2 * std::size_t{topology.sm_count()}) {
  const auto sectors = static_cast<std::uint32_t>(c.l2.line_size.count / c.l2.sector_size.count);
  m_stride = std::size_t{sectors} + 1;
  // Per SM, the to_sm table, then the from_sm one (at xbar.write_port_bandwidth when it is set).
  for (std::uint32_t sm = 0; sm < topology.sm_count(); ++sm) {
    const Bandwidth read = topology.sm_port_bandwidth(sm);
    const Bandwidth write =
        c.xbar.write_port_bandwidth.bytes_per_second > 0 ? c.xbar.write_port_bandwidth : read;
    for (const Bandwidth b : {read, write}) {
      const std::vector<Tick> t = sector_transfer_table(b, c.l2.sector_size, sectors);
      m_sector_ticks.insert(m_sector_ticks.end(), t.begin(), t.end());
    }
  }
}

}  // namespace memwall
