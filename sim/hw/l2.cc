#include "sim/hw/l2.h"

#include <bit>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/xbar.h"

namespace memwall {

L2::L2(const HardwareConfig& c)
    : m_line_bytes(c.l2.line_size.count),
      m_sector_bytes(c.l2.sector_size.count),
      m_sectors_per_line(0),
      m_partitions(c.l2.partitions == 0 ? 1 : c.l2.partitions),
      m_slices_per_partition(0),
      m_sets_per_slice(0),
      m_ways(c.l2.ways),
      m_hit_latency(c.l2.hit_latency) {
  if (m_line_bytes == 0 || !std::has_single_bit(m_line_bytes) || m_sector_bytes == 0 ||
      m_line_bytes % m_sector_bytes != 0 || m_line_bytes / m_sector_bytes > 32) {
    throw UsageError("l2: line_size must be a power of two, a multiple of sector_size, and at most "
                     "32 sectors");
  }
  if (c.l2.slices == 0 || m_ways == 0 || c.l2.slices % m_partitions != 0 ||
      !(c.l2.bandwidth.bytes_per_second > 0.0) || !(c.efficiency.l2 > 0.0)) {
    throw UsageError("l2: slices, ways, bandwidth and efficiency.l2 must be > 0, and slices a "
                     "multiple of partitions");
  }
  m_sectors_per_line = static_cast<std::uint32_t>(m_line_bytes / m_sector_bytes);
  m_slices_per_partition = c.l2.slices / m_partitions;
  m_sets_per_slice = c.l2.size.count / (std::uint64_t{c.l2.slices} * m_ways * m_line_bytes);
  if (m_sets_per_slice == 0) {
    throw UsageError("l2: size " + format_bytes(c.l2.size) + " is less than one set per slice");
  }
  const std::size_t ways_total = c.l2.slices * m_sets_per_slice * m_ways;
  m_tags.assign(ways_total, kInvalid);
  m_stamp.assign(ways_total, 0);
  m_valid.assign(ways_total, 0);
  m_dirty.assign(ways_total, 0);
  m_next_free.assign(c.l2.slices, 0);
  m_sector_ticks = sector_transfer_table(
      Bandwidth{c.l2.bandwidth.bytes_per_second / c.l2.slices * c.efficiency.l2}, c.l2.sector_size,
      m_sectors_per_line);
}

std::size_t L2::find_or_allocate(std::uint32_t slice, std::uint64_t line, L2Outcome& out) {
  const std::size_t set = static_cast<std::size_t>(line % m_sets_per_slice);
  const std::size_t base = (slice * m_sets_per_slice + set) * m_ways;
  const std::uint64_t* tags = &m_tags[base];
  std::size_t victim = 0;
  std::uint64_t oldest = ~std::uint64_t{0};
  for (std::size_t w = 0; w < m_ways; ++w) {
    if (tags[w] == line) {
      m_stamp[base + w] = ++m_clock;
      return base + w;
    }
    // Invalid ways have stamp 0 after construction or a flush, so they are taken first.
    const std::uint64_t s = tags[w] == kInvalid ? 0 : m_stamp[base + w];
    if (s < oldest) {
      oldest = s;
      victim = w;
    }
  }
  const std::size_t i = base + victim;
  if (m_tags[i] != kInvalid && m_dirty[i] != 0) {
    out.victim_dirty = m_dirty[i];
    out.victim_line = m_tags[i];
  }
  m_tags[i] = line;
  m_valid[i] = 0;
  m_dirty[i] = 0;
  m_stamp[i] = ++m_clock;
  return i;
}

L2Outcome L2::read(std::uint32_t slice, std::uint64_t line, std::uint32_t mask) {
  L2Outcome out;
  const std::size_t i = find_or_allocate(slice, line, out);
  out.hit_mask = mask & m_valid[i];
  out.fetch_mask = mask & ~m_valid[i];
  m_valid[i] |= mask;
  return out;
}

L2Outcome L2::write(std::uint32_t slice, std::uint64_t line, std::uint32_t mask,
                    std::uint32_t full_mask) {
  L2Outcome out;
  const std::size_t i = find_or_allocate(slice, line, out);
  out.hit_mask = mask & m_valid[i];
  out.fetch_mask = mask & ~full_mask & ~m_valid[i];
  m_valid[i] |= mask;
  m_dirty[i] |= mask;
  return out;
}

std::uint64_t L2::dirty_bytes() const {
  std::uint64_t sectors = 0;
  for (std::size_t i = 0; i < m_tags.size(); ++i) {
    if (m_tags[i] != kInvalid) sectors += static_cast<std::uint64_t>(std::popcount(m_dirty[i]));
  }
  return sectors * m_sector_bytes;
}

}  // namespace memwall
