#include "sim/hw/l2.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/xbar.h"

namespace memwall {

L2::L2(const HardwareConfig& c, const Topology& topology)
    : m_line_bytes(c.l2.line_size.count),
      m_sector_bytes(c.l2.sector_size.count),
      m_sectors_per_line(0),
      m_slices(c.l2.slices),
      m_sets_per_slice(0),
      m_sets(0),
      m_ways(c.l2.ways) {
  if (m_line_bytes == 0 || !std::has_single_bit(m_line_bytes) || m_sector_bytes == 0 ||
      m_line_bytes % m_sector_bytes != 0 || m_line_bytes / m_sector_bytes > 8) {
    throw UsageError("l2: line_size must be a power of two, a multiple of sector_size, and at most "
                     "8 sectors");
  }
  const std::uint32_t partitions = c.l2.partitions == 0 ? 1 : c.l2.partitions;
  if (c.l2.slices == 0 || m_ways == 0 || c.l2.slices % partitions != 0 ||
      !(c.l2.bandwidth.bytes_per_second > 0.0) || !(c.efficiency.l2 > 0.0)) {
    throw UsageError("l2: slices, ways, bandwidth and efficiency.l2 must be > 0, and slices a "
                     "multiple of partitions");
  }
  m_sectors_per_line = static_cast<std::uint32_t>(m_line_bytes / m_sector_bytes);
  m_sets_per_slice = c.l2.size.count / (std::uint64_t{c.l2.slices} * m_ways * m_line_bytes);
  if (m_sets_per_slice == 0) {
    throw UsageError("l2: size " + format_bytes(c.l2.size) + " is less than one set per slice");
  }
  if (!(c.efficiency.l2_capacity > 0.0) || c.efficiency.l2_capacity > 1.0) {
    throw UsageError("l2: efficiency.l2_capacity must be in (0, 1]");
  }
  m_sets_per_slice = derive(c).l2_usable_sets_per_slice;
  m_sets = c.l2.slices * m_sets_per_slice;
  if (m_sets >= (std::uint64_t{1} << 32)) throw UsageError("l2: more than 2^32 sets");
  m_set_mod = FastMod32(static_cast<std::uint32_t>(m_sets));
  m_sector_bits = (1u << m_sectors_per_line) - 1;
  m_tag_shift = 2 * m_sectors_per_line;
  // k <= 11 keeps the bits that fold() brings down in the tag (line_of relies on it).
  m_tag_low_bits =
      std::min<std::uint32_t>(11, static_cast<std::uint32_t>(std::bit_width(m_sets)) - 1);
  // The largest tag field is (2^32 - 1) >> k, + 1; 32-bit words when it fits above the masks.
  const std::uint64_t max_tag = (0xFFFFFFFFull >> m_tag_low_bits) + 1;
  m_wide = max_tag >= (std::uint64_t{1} << (32 - m_tag_shift));
  if (m_wide) {
    m_words64.assign(m_sets * m_ways, 0);
  } else {
    m_words32.assign(m_sets * m_ways, 0);
  }
  m_slice_bus = Reservations(c.l2.slices);
  m_stride = std::size_t{m_sectors_per_line} + 1;
  for (std::uint32_t slice = 0; slice < topology.slice_count(); ++slice) {
    const std::vector<Tick> t = sector_transfer_table(
        Bandwidth{topology.slice_bandwidth(slice).bytes_per_second * c.efficiency.l2}, c.l2.sector_size,
        m_sectors_per_line);
    m_sector_ticks.insert(m_sector_ticks.end(), t.begin(), t.end());
  }
}

template <class Word>
std::uint64_t L2::dirty_sectors(const WordArray<Word>& words) const {
  std::uint64_t sectors = 0;
  for (const Word w : words) {
    if ((w >> m_tag_shift) != 0) {
      sectors += static_cast<std::uint64_t>(
          std::popcount(static_cast<std::uint32_t>(w >> m_sectors_per_line) & m_sector_bits));
    }
  }
  return sectors;
}

std::uint64_t L2::dirty_bytes() const {
  return (m_wide ? dirty_sectors(m_words64) : dirty_sectors(m_words32)) * m_sector_bytes;
}

}  // namespace memwall
