#pragma once
/// The L2 cache: address-hashed slices, each set-associative with LRU replacement and sectored
/// lines (a valid and a dirty bit per sector). Write-back, write-allocate; a write that covers a
/// whole sector needs no fetch, a partial-sector write to an invalid sector fetches it (the
/// caller reads it from HBM). Each slice's bandwidth is booked by reservation at
/// l2.bandwidth / slices × efficiency.l2.
///
/// State lives in flat arrays (tag, LRU stamp, valid mask, dirty mask per way): no allocation
/// per access. Lines are identified by their line index (byte address / line_size).

#include <cstdint>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// What one access did to the cache.
struct L2Outcome {
  std::uint32_t hit_mask = 0;     ///< requested sectors that were valid
  std::uint32_t fetch_mask = 0;   ///< sectors the caller must read from HBM
  std::uint32_t victim_dirty = 0; ///< dirty sectors of an evicted line (to write back), 0 if none
  std::uint64_t victim_line = 0;  ///< line index of that evicted line
};

class L2 {
 public:
  /// Throws UsageError if the geometry cannot be simulated (line not a power of two, sector not
  /// dividing it, more than 32 sectors per line, no whole set per slice).
  explicit L2(const HardwareConfig& config);

  /// The slice holding line `line`: a multiplicative hash of the line index picks the partition
  /// (slices are split evenly among l2.partitions) and the slice inside it.
  std::uint32_t slice_of(std::uint64_t line) const {
    const std::uint64_t h = (line * 0x9E3779B97F4A7C15ull) >> 24;
    const std::uint64_t partition = (h >> 20) % m_partitions;
    return static_cast<std::uint32_t>(partition * m_slices_per_partition +
                                      (h & 0xFFFFF) % m_slices_per_partition);
  }

  /// A load of sectors `mask` of `line` in `slice`: hits are the valid ones; the rest are
  /// allocated (evicting the LRU line of the set if the line is absent) and returned in
  /// fetch_mask. Marks the line most recently used.
  L2Outcome read(std::uint32_t slice, std::uint64_t line, std::uint32_t mask);

  /// A store to sectors `mask` of `line`, of which `full_mask` are written completely: the line is
  /// allocated if absent, the sectors become valid and dirty; partially written sectors that were
  /// not valid are returned in fetch_mask.
  L2Outcome write(std::uint32_t slice, std::uint64_t line, std::uint32_t mask, std::uint32_t full_mask);

  /// Reserves `slice` for `sectors` sectors arriving at `t`; returns the end of the transfer and
  /// adds the wait for the slice to `queue_delay`.
  Tick transfer(std::uint32_t slice, std::uint32_t sectors, Tick t, Tick& queue_delay) {
    Tick& free = m_next_free[slice];
    const Tick start = t > free ? t : free;
    queue_delay += start - t;
    free = start + m_sector_ticks[sectors];
    return free;
  }

  /// Ticks one slice needs for `sectors` sectors.
  Tick transfer_ticks(std::uint32_t sectors) const { return m_sector_ticks[sectors]; }
  /// Load-to-use latency of a hit.
  Tick hit_latency() const { return m_hit_latency; }

  /// Bytes in dirty sectors now (not yet written back).
  std::uint64_t dirty_bytes() const;

  /// Invalidates every line; calls `on_dirty(line, dirty_mask)` for each dirty one first, in
  /// slice, set, way order (deterministic).
  template <typename F>
  void flush(F&& on_dirty) {
    for (std::size_t i = 0; i < m_tags.size(); ++i) {
      if (m_tags[i] != kInvalid && m_dirty[i] != 0) on_dirty(m_tags[i], std::uint32_t{m_dirty[i]});
      m_tags[i] = kInvalid;
      m_valid[i] = 0;
      m_dirty[i] = 0;
    }
  }

  std::uint32_t sectors_per_line() const { return m_sectors_per_line; }
  std::uint64_t line_bytes() const { return m_line_bytes; }
  std::uint64_t sector_bytes() const { return m_sector_bytes; }

 private:
  static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};

  /// Index of the way holding `line` in its set, allocating (and reporting the victim) if absent.
  std::size_t find_or_allocate(std::uint32_t slice, std::uint64_t line, L2Outcome& out);

  std::uint64_t m_line_bytes;
  std::uint64_t m_sector_bytes;
  std::uint32_t m_sectors_per_line;
  std::uint64_t m_partitions;
  std::uint64_t m_slices_per_partition;
  std::uint64_t m_sets_per_slice;
  std::uint32_t m_ways;
  Tick m_hit_latency;
  std::uint64_t m_clock = 0;             ///< LRU stamp source, incremented per access
  std::vector<std::uint64_t> m_tags;     ///< [(slice·sets + set)·ways + way] → line or kInvalid
  std::vector<std::uint64_t> m_stamp;    ///< last use, same index
  std::vector<std::uint32_t> m_valid;    ///< valid sector mask, same index
  std::vector<std::uint32_t> m_dirty;    ///< dirty sector mask, same index
  std::vector<Tick> m_next_free;         ///< per slice
  std::vector<Tick> m_sector_ticks;      ///< [sectors] → slice transfer ticks
};

}  // namespace memwall
