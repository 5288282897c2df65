#include "sim/hw/l2.h"

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
  m_tags.assign(m_sets * m_ways, kInvalid);
  m_masks.assign(m_sets * m_ways, 0);
  m_next_free.assign(c.l2.slices, 0);
  m_stride = std::size_t{m_sectors_per_line} + 1;
  for (std::uint32_t slice = 0; slice < topology.slice_count(); ++slice) {
    const std::vector<Tick> t = sector_transfer_table(
        Bandwidth{topology.slice_bandwidth(slice).bytes_per_second * c.efficiency.l2}, c.l2.sector_size,
        m_sectors_per_line);
    m_sector_ticks.insert(m_sector_ticks.end(), t.begin(), t.end());
  }
}

std::uint16_t& L2::find_or_allocate(std::size_t set_base, std::uint64_t line, L2Outcome& out) {
  const auto tag = static_cast<std::uint32_t>(line);
  std::uint32_t* tags = &m_tags[set_base];
  std::uint16_t* masks = &m_masks[set_base];
  std::uint32_t w = 0;
  while (w < m_ways && tags[w] != tag) ++w;
  std::uint16_t mask = 0;
  if (w == m_ways) {
    // Miss: the last way is the least recently used (or invalid).
    w = m_ways - 1;
    const std::uint32_t dirty = masks[w] >> 8;
    if (tags[w] != kInvalid && dirty != 0) {
      out.victim_dirty = dirty;
      out.victim_line = tags[w];
    }
  } else {
    mask = masks[w];
  }
  // Move to the front.
  std::memmove(tags + 1, tags, w * sizeof *tags);
  std::memmove(masks + 1, masks, w * sizeof *masks);
  tags[0] = tag;
  masks[0] = mask;
  return masks[0];
}

L2Outcome L2::read(const Place& place, std::uint64_t line, std::uint32_t mask) {
  L2Outcome out;
  std::uint16_t& m = find_or_allocate(place.set_base, line, out);
  const std::uint32_t valid = m & 0xFFu;
  out.hit_mask = mask & valid;
  out.fetch_mask = mask & ~valid;
  m = static_cast<std::uint16_t>(m | mask);
  return out;
}

L2Outcome L2::write(const Place& place, std::uint64_t line, std::uint32_t mask,
                    std::uint32_t full_mask) {
  L2Outcome out;
  std::uint16_t& m = find_or_allocate(place.set_base, line, out);
  const std::uint32_t valid = m & 0xFFu;
  out.hit_mask = mask & valid;
  out.fetch_mask = mask & ~full_mask & ~valid;
  m = static_cast<std::uint16_t>(m | mask | (mask << 8));
  return out;
}

std::uint64_t L2::dirty_bytes() const {
  std::uint64_t sectors = 0;
  for (std::size_t i = 0; i < m_tags.size(); ++i) {
    if (m_tags[i] != kInvalid) sectors += static_cast<std::uint64_t>(std::popcount(std::uint32_t{m_masks[i]} >> 8));
  }
  return sectors * m_sector_bytes;
}

}  // namespace memwall
