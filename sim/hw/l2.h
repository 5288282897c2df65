#pragma once
/// The L2 cache: address-hashed slices (for bandwidth) over a set-associative array with LRU
/// replacement and sectored lines (a valid and a dirty bit per sector). Write-back, write-allocate; a write that covers a
/// whole sector needs no fetch, a partial-sector write to an invalid sector fetches it (the
/// caller reads it from HBM). Each slice's bandwidth is booked by reservation at
/// l2.bandwidth / slices × efficiency.l2. Only efficiency.l2_capacity of the sets hold lines.
///
/// State lives in two flat arrays, set by set, each set in LRU order: 32-bit tags (a lookup scans
/// one host cache line for a 16-way set) and 16-bit valid/dirty sector masks. No allocation per
/// access. Lines are identified by their line index (byte address / line_size).

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <vector>

#include "sim/core/fast_mod.h"
#include "sim/core/hash.h"
#include "sim/core/huge_page_allocator.h"
#include "sim/core/reservation.h"
#include "sim/core/units.h"
#include "sim/hw/config.h"
#include "sim/hw/topology.h"

namespace memwall {

/// Asks the host CPU to bring the cache line holding `p` into its caches. GCC 12 drops a
/// __builtin_prefetch whose address goes through the L2's set hash (FastMod32), so on x86 the
/// instruction is written out.
inline void prefetch_host_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

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
  /// dividing it, more than 8 sectors per line, no whole set per slice).
  /// Each slice's bandwidth is its edge's in `topology`, × efficiency.l2.
  L2(const HardwareConfig& config, const Topology& topology);
  /// The same on the topology `config` builds.
  explicit L2(const HardwareConfig& config) : L2(config, Topology(config)) {}

  /// Where a line lives: its slice and the index of its set's first way.
  struct Place {
    std::uint32_t slice = 0;
    std::size_t set_base = 0;
  };

  /// Places line `line`. Its slice (whose bandwidth it uses; slices are split evenly among
  /// l2.partitions, so this also picks the partition) is a 64-bit mix of the line index reduced
  /// by multiply-shift. Its set is the line index, XOR-folded with higher bits (so that
  /// power-of-two strides spread over sets), modulo slices × sets_per_slice: capacity and
  /// associativity are those of the whole L2. Consecutive lines land in consecutive sets, which
  /// keeps the simulator's own memory accesses local.
  Place place(std::uint64_t line) const {
    const auto slice = static_cast<std::uint32_t>(reduce_hash(mix64(line), m_slices));
    return Place{slice, set_of(line) * m_ways};
  }

  /// Hints the host CPU to fetch `line`'s set into its cache (no effect on the simulation).
  void prefetch(std::uint64_t line) const {
    const std::size_t base = set_of(line) * m_ways;
    prefetch_host_line(&m_tags[base]);
    prefetch_host_line(&m_masks[base]);
  }

  /// A load of sectors `mask` of `line` in `slice`: hits are the valid ones; the rest are
  /// allocated (evicting the LRU line of the set if the line is absent) and returned in
  /// fetch_mask. Marks the line most recently used.
  L2Outcome read(const Place& place, std::uint64_t line, std::uint32_t mask);

  /// A store to sectors `mask` of `line`, of which `full_mask` are written completely: the line is
  /// allocated if absent, the sectors become valid and dirty; partially written sectors that were
  /// not valid are returned in fetch_mask.
  L2Outcome write(const Place& place, std::uint64_t line, std::uint32_t mask, std::uint32_t full_mask);

  /// Reserves `slice` for `sectors` sectors arriving at `t`; returns the end of the transfer and
  /// adds the wait for the slice to `queue_delay`.
  Tick transfer(std::uint32_t slice, std::uint32_t sectors, Tick t, Tick& queue_delay) {
    return m_slice_bus.reserve(slice, t, m_sector_ticks[std::size_t{slice} * m_stride + sectors],
                               queue_delay);
  }

  /// Busy ticks of each slice since the last reset_busy.
  const std::vector<Tick>& busy() const { return m_slice_bus.busy(); }
  void reset_busy() { m_slice_bus.reset_busy(); }


  /// Bytes in dirty sectors now (not yet written back).
  std::uint64_t dirty_bytes() const;

  /// Invalidates every line; calls `on_dirty(line, dirty_mask)` for each dirty one first, in
  /// slice, set, way order (deterministic).
  template <typename F>
  void flush(F&& on_dirty) {
    for (std::size_t i = 0; i < m_tags.size(); ++i) {
      const std::uint32_t dirty = m_masks[i] >> 8;
      if (m_tags[i] != kInvalid && dirty != 0) on_dirty(std::uint64_t{m_tags[i]}, dirty);
      m_tags[i] = kInvalid;
      m_masks[i] = 0;
    }
  }

  /// Largest line index the cache can hold (tags are 32-bit): lines below 2^32 - 1, i.e.
  /// addresses below 512 GiB with 128-byte lines.
  static constexpr std::uint64_t kMaxLine = 0xFFFFFFFEull;

  std::uint32_t sectors_per_line() const { return m_sectors_per_line; }
  std::uint64_t line_bytes() const { return m_line_bytes; }
  std::uint64_t sector_bytes() const { return m_sector_bytes; }

 private:
  static constexpr std::uint32_t kInvalid = 0xFFFFFFFFu;

  /// The set of `line` (< 2^32): the line index XOR-folded with its higher bits, modulo the sets.
  std::size_t set_of(std::uint64_t line) const {
    const auto folded = static_cast<std::uint32_t>(line ^ (line >> 11) ^ (line >> 22));
    return m_set_mod(folded);
  }

  /// Moves `line` to the front (most recently used) of its set, allocating it in place of the
  /// least recently used way if absent (reporting a dirty victim); returns its sector masks
  /// (valid in the low byte, dirty in the high byte).
  std::uint16_t& find_or_allocate(std::size_t set_base, std::uint64_t line, L2Outcome& out);

  std::uint64_t m_line_bytes;
  std::uint64_t m_sector_bytes;
  std::uint32_t m_sectors_per_line;
  std::uint64_t m_slices;
  std::uint64_t m_sets_per_slice;
  std::uint64_t m_sets;  ///< slices × sets_per_slice, < 2^32
  FastMod32 m_set_mod{1};  ///< remainder by m_sets
  std::uint32_t m_ways;
  /// [set·ways + position] → line index or kInvalid; each set is kept in LRU order, most
  /// recently used first, so no stamps are needed and invalid ways sit at the end.
  std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> m_tags;
  std::vector<std::uint16_t, HugePageAllocator<std::uint16_t>> m_masks;    ///< same index: valid | dirty << 8
  Reservations m_slice_bus;              ///< per slice
  std::vector<Tick> m_sector_ticks;      ///< [slice · m_stride + sectors] → transfer ticks
  std::size_t m_stride = 0;              ///< sectors_per_line + 1
};

// The per-line operations are defined here so that the memory path's hot loop inlines them.

namespace l2_detail {

/// The first of `ways` tags equal to `tag`, or `ways`. With SSE2, four tags per compare (a miss
/// scans the whole set; a scalar loop spent a quarter of naive attention's instructions here).
inline std::uint32_t find_way(const std::uint32_t* tags, std::uint32_t ways, std::uint32_t tag) {
  std::uint32_t w = 0;
#if defined(__SSE2__)
  const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
  for (; w + 4 <= ways; w += 4) {
    const __m128i four = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + w));
    const int hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(four, key)));
    if (hits != 0) return w + static_cast<std::uint32_t>(std::countr_zero(static_cast<unsigned>(hits)));
  }
#endif
  while (w < ways && tags[w] != tag) ++w;
  return w;
}

}  // namespace l2_detail

inline std::uint16_t& L2::find_or_allocate(std::size_t set_base, std::uint64_t line, L2Outcome& out) {
  const auto tag = static_cast<std::uint32_t>(line);
  std::uint32_t* tags = &m_tags[set_base];
  std::uint16_t* masks = &m_masks[set_base];
  std::uint32_t w = l2_detail::find_way(tags, m_ways, tag);
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

inline L2Outcome L2::read(const Place& place, std::uint64_t line, std::uint32_t mask) {
  L2Outcome out;
  std::uint16_t& m = find_or_allocate(place.set_base, line, out);
  const std::uint32_t valid = m & 0xFFu;
  out.hit_mask = mask & valid;
  out.fetch_mask = mask & ~valid;
  m = static_cast<std::uint16_t>(m | mask);
  return out;
}

inline L2Outcome L2::write(const Place& place, std::uint64_t line, std::uint32_t mask,
                    std::uint32_t full_mask) {
  L2Outcome out;
  std::uint16_t& m = find_or_allocate(place.set_base, line, out);
  const std::uint32_t valid = m & 0xFFu;
  out.hit_mask = mask & valid;
  out.fetch_mask = mask & ~full_mask & ~valid;
  m = static_cast<std::uint16_t>(m | mask | (mask << 8));
  return out;
}

}  // namespace memwall
