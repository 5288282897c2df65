#include "sim/hw/l2.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/xbar.h"

namespace memwall {

L2::L2(const HardwareConfig& c)
    : m_line_bytes(c.l2.line_size.count),
      m_sector_bytes(c.l2.sector_size.count),
      m_sectors_per_line(0),
      m_slices(c.l2.slices),
      m_sets_per_slice(0),
      m_sets(0),
      m_ways(c.l2.ways),
      m_hit_latency(c.l2.hit_latency) {
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
  m_sets = c.l2.slices * m_sets_per_slice;
  m_tags.assign(m_sets * m_ways, kInvalid);
  m_meta.assign(m_sets * m_ways, Meta{});
  m_next_free.assign(c.l2.slices, 0);
  m_sector_ticks = sector_transfer_table(
      Bandwidth{c.l2.bandwidth.bytes_per_second / c.l2.slices * c.efficiency.l2}, c.l2.sector_size,
      m_sectors_per_line);
}

void L2::renumber_stamps() {
  std::vector<std::uint32_t> order(m_ways);
  for (std::size_t base = 0; base < m_meta.size(); base += m_ways) {
    Meta* set = &m_meta[base];
    for (std::uint32_t w = 0; w < m_ways; ++w) order[w] = w;
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return set[a].stamp < set[b].stamp; });
    for (std::uint32_t rank = 0; rank < m_ways; ++rank) {
      Meta& way = set[order[rank]];
      if (way.stamp != 0) way.stamp = rank + 1;
    }
  }
  m_clock = m_ways + 1;
}

L2::Meta& L2::find_or_allocate(std::size_t set_base, std::uint64_t line, L2Outcome& out) {
  if (m_clock == std::numeric_limits<std::uint32_t>::max()) renumber_stamps();
  const std::uint64_t* tags = &m_tags[set_base];
  Meta* meta = &m_meta[set_base];
  for (std::uint32_t w = 0; w < m_ways; ++w) {
    if (tags[w] == line) {
      meta[w].stamp = ++m_clock;
      return meta[w];
    }
  }
  // Miss: the least recently used way (invalid ways have stamp 0, so they go first).
  std::uint32_t victim = 0;
  std::uint32_t oldest = meta[0].stamp;
  for (std::uint32_t w = 1; w < m_ways; ++w) {
    const std::uint32_t s = meta[w].stamp;
    victim = s < oldest ? w : victim;
    oldest = s < oldest ? s : oldest;
  }
  Meta& way = meta[victim];
  if (tags[victim] != kInvalid && way.dirty != 0) {
    out.victim_dirty = way.dirty;
    out.victim_line = tags[victim];
  }
  m_tags[set_base + victim] = line;
  way = Meta{++m_clock, 0, 0};
  return way;
}

L2Outcome L2::read(const Place& place, std::uint64_t line, std::uint32_t mask) {
  L2Outcome out;
  Meta& way = find_or_allocate(place.set_base, line, out);
  out.hit_mask = mask & way.valid;
  out.fetch_mask = mask & ~std::uint32_t{way.valid};
  way.valid = static_cast<std::uint8_t>(way.valid | mask);
  return out;
}

L2Outcome L2::write(const Place& place, std::uint64_t line, std::uint32_t mask,
                    std::uint32_t full_mask) {
  L2Outcome out;
  Meta& way = find_or_allocate(place.set_base, line, out);
  out.hit_mask = mask & way.valid;
  out.fetch_mask = mask & ~full_mask & ~std::uint32_t{way.valid};
  way.valid = static_cast<std::uint8_t>(way.valid | mask);
  way.dirty = static_cast<std::uint8_t>(way.dirty | mask);
  return out;
}

std::uint64_t L2::dirty_bytes() const {
  std::uint64_t sectors = 0;
  for (std::size_t i = 0; i < m_tags.size(); ++i) {
    if (m_tags[i] != kInvalid) sectors += static_cast<std::uint64_t>(std::popcount(m_meta[i].dirty));
  }
  return sectors * m_sector_bytes;
}

}  // namespace memwall
