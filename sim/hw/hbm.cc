#include "sim/hw/hbm.h"

#include <bit>
#include <limits>

#include "sim/core/error.h"
#include "sim/hw/xbar.h"

namespace memwall {

Hbm::Hbm(const HardwareConfig& c)
    : m_interleave(c.hbm.interleave.count),
      m_channels(c.hbm.channels),
      m_row_size(c.hbm.row_size.count),
      m_row_miss_penalty(c.hbm.row_miss_penalty),
      m_latency(c.hbm.latency) {
  if (m_interleave == 0 || m_channels == 0 || m_row_size == 0 || c.l2.sector_size.count == 0 ||
      !(c.hbm.bandwidth.bytes_per_second > 0.0) || !(c.efficiency.hbm > 0.0)) {
    throw UsageError("hbm: interleave, channels, row_size, bandwidth and efficiency.hbm must be > 0");
  }
  if (std::has_single_bit(m_interleave) && m_interleave > 1) {
    m_interleave_shift = static_cast<std::uint32_t>(std::countr_zero(m_interleave));
  }
  if (std::has_single_bit(m_row_size) && m_row_size > 1) {
    m_row_shift = static_cast<std::uint32_t>(std::countr_zero(m_row_size));
  }
  const Bandwidth per_channel{c.hbm.bandwidth.bytes_per_second / static_cast<double>(m_channels) *
                              c.efficiency.hbm};
  m_sector_ticks = sector_transfer_table(
      per_channel, c.l2.sector_size,
      static_cast<std::uint32_t>(c.l2.line_size.count / c.l2.sector_size.count));
  m_next_free.assign(m_channels, 0);
  m_open_row.assign(m_channels * kBanksPerChannel, std::numeric_limits<std::uint64_t>::max());
  m_row_open_at.assign(m_channels * kBanksPerChannel, 0);
}

}  // namespace memwall
