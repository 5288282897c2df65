#include "sim/hw/hbm.h"

#include <algorithm>
#include <bit>

#include "sim/core/error.h"
#include "sim/hw/l2.h"
#include "sim/hw/xbar.h"

namespace memwall {

Hbm::Hbm(const HardwareConfig& c, const Topology& topology)
    : m_interleave(c.hbm.interleave.count),
      m_channels(c.hbm.channels),
      m_row_size(c.hbm.row_size.count),
      // Addresses are below (L2::kMaxLine + 1) lines (the memory path refuses others).
      m_round_of_block(c.hbm.channels,
                       ((L2::kMaxLine + 1) * c.l2.line_size.count - 1) / c.hbm.interleave.count),
      m_row_miss_penalty(c.hbm.row_miss_penalty),
      m_banks(c.hbm.banks_per_channel) {
  // `c` is validated (validate_config): interleave, channels, row size, banks, bandwidth and
  // efficiency.hbm are positive.
  if (std::has_single_bit(m_interleave) && m_interleave > 1) {
    m_interleave_shift = static_cast<std::uint32_t>(std::countr_zero(m_interleave));
  }
  if (std::has_single_bit(m_row_size) && m_row_size > 1) {
    m_row_shift = static_cast<std::uint32_t>(std::countr_zero(m_row_size));
  }
  if (std::has_single_bit(m_banks) && m_banks > 1) m_bank_mask = m_banks - 1;
  const auto sectors = static_cast<std::uint32_t>(c.l2.line_size.count / c.l2.sector_size.count);
  const std::size_t per_kind = std::size_t{sectors} + 1;
  bool uniform = true;
  for (std::uint32_t ch = 1; ch < m_channels; ++ch) {
    uniform = uniform && topology.channel_bandwidth(ch).bytes_per_second ==
                             topology.channel_bandwidth(0).bytes_per_second;
  }
  const std::uint64_t distinct = uniform ? 1 : m_channels;
  m_channel_stride = uniform ? 0 : per_kind;
  m_mixed_stride = per_kind * distinct;
  const double fractions[] = {1.0, c.hbm.mixed_read_rate, c.hbm.write_rate,
                              c.hbm.mixed_write_rate};  // in m_ticks' order
  for (const double fraction : fractions) {
    for (std::uint32_t ch = 0; ch < distinct; ++ch) {
      const double read = topology.channel_bandwidth(ch).bytes_per_second * c.efficiency.hbm;
      const std::vector<Tick> t =
          sector_transfer_table(Bandwidth{read * fraction}, c.l2.sector_size, sectors);
      m_ticks.insert(m_ticks.end(), t.begin(), t.end());
    }
  }
  m_mix_window = c.hbm.mix_window;
  m_channel_state.assign(m_channels, Channel{});
  m_banks_state.assign(m_channels * m_banks, Bank{});
}

Tick Hbm::busy_until() const {
  Tick until = 0;
  for (const Channel& c : m_channel_state) until = std::max(until, c.next_free);
  return until;
}

std::vector<Tick> Hbm::busy() const {
  std::vector<Tick> out;
  out.reserve(m_channel_state.size());
  for (const Channel& c : m_channel_state) out.push_back(c.busy);
  return out;
}

void Hbm::reset_busy() {
  for (Channel& c : m_channel_state) c.busy = 0;
}

}  // namespace memwall
