#include "sim/hw/l2.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/xbar.h"

namespace memwall {

namespace {

/// k <= 11 keeps the bits that fold() brings down in the tag (line_of relies on it).
std::uint32_t tag_low_bits(std::uint64_t sets) {
  return std::min<std::uint32_t>(11, static_cast<std::uint32_t>(std::bit_width(sets)) - 1);
}

}  // namespace

std::uint64_t L2::copy_bit(std::uint64_t sets) {
  return std::bit_ceil((0xFFFFFFFFull >> tag_low_bits(sets)) + 2);
}

std::uint64_t L2::way_bytes(std::uint64_t sets, std::uint32_t sectors_per_line, bool copies) {
  // The largest tag field is (2^32 - 1) >> k, + 1 (with the copy bit set, when copies are kept);
  // 32-bit words when it fits above the two masks.
  std::uint64_t max_tag = (0xFFFFFFFFull >> tag_low_bits(sets)) + 1;
  if (copies) max_tag |= copy_bit(sets);
  return max_tag >= (std::uint64_t{1} << (32 - 2 * sectors_per_line)) ? sizeof(std::uint64_t)
                                                                      : sizeof(std::uint32_t);
}

L2::L2(const HardwareConfig& c, const Topology& topology)
    : m_line_bytes(c.l2.line_size.count),
      m_sector_bytes(c.l2.sector_size.count),
      m_sectors_per_line(0),
      m_slices(c.l2.slices),
      m_sets_per_slice(0),
      m_sets(0),
      m_ways(c.l2.ways) {
  // The geometry was validated with the config (validate_config: a power-of-two line of at most
  // kMaxSectorsPerLine sectors, whole sets per slice, positive counts and rates).
  m_sectors_per_line = static_cast<std::uint32_t>(m_line_bytes / m_sector_bytes);
  m_sets_per_slice = derive(c).l2_usable_sets_per_slice;
  m_sets = c.l2.slices * m_sets_per_slice;
  // l2.size is at most 1 GiB (its schema maximum) and a line at least 1 byte: under 2^32 sets.
  m_sector_bits = (1u << m_sectors_per_line) - 1;
  m_tag_shift = 2 * m_sectors_per_line;
  if (c.l2.far_reads == FarReads::kCopy && topology.partition_count() > 1) {
    m_copy_bit = copy_bit(m_sets);
  }
  m_wide = way_bytes(m_sets, m_sectors_per_line, m_copy_bit != 0) == sizeof(std::uint64_t);
  const auto sets = static_cast<std::uint32_t>(m_sets);
  if (m_wide) {
    m_words64.assign(m_sets * m_ways, 0);
    m_wide_ways =
        L2Ways<std::uint64_t>(m_words64.data(), m_ways, m_sectors_per_line, sets,
                              tag_low_bits(m_sets), m_slices, m_copy_bit, c.l2.dirty_ways);
  } else {
    m_words32.assign(m_sets * m_ways, 0);
  }
  // The narrow view also places lines (and names flushed ones) when the words are wide: the
  // geometry is the same.
  m_narrow_ways =
      L2Ways<std::uint32_t>(m_words32.data(), m_ways, m_sectors_per_line, sets,
                            tag_low_bits(m_sets), m_slices, m_copy_bit, c.l2.dirty_ways);
  m_slice_bus = Reservations(c.l2.slices);
  m_stride = std::size_t{m_sectors_per_line} + 1;
  for (std::uint32_t slice = 0; slice < topology.slice_count(); ++slice) {
    const std::vector<Tick> t = sector_transfer_table(
        Bandwidth{topology.slice_bandwidth(slice).bytes_per_second * c.efficiency.l2},
        c.l2.sector_size, m_sectors_per_line);
    m_sector_ticks.insert(m_sector_ticks.end(), t.begin(), t.end());
  }
  for (std::uint32_t slice = 0; slice < topology.slice_count(); ++slice) {
    m_whole_line_ticks.push_back(m_sector_ticks[slice * m_stride + m_sectors_per_line]);
  }
}

template <class Word>
std::uint64_t L2::dirty_sectors(const WordArray<Word>& words) const {
  std::uint64_t sectors = 0;
  for (const Word w : words) {
    if ((w >> m_tag_shift) != 0) {
      sectors += static_cast<std::uint64_t>(
          popcount8(static_cast<std::uint32_t>(w >> m_sectors_per_line) & m_sector_bits));
    }
  }
  return sectors;
}

std::uint64_t L2::dirty_bytes() const {
  return (m_wide ? dirty_sectors(m_words64) : dirty_sectors(m_words32)) * m_sector_bytes;
}

}  // namespace memwall
