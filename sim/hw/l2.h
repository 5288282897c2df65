#pragma once
/// The L2 cache: address-hashed slices (for bandwidth) over a set-associative array with LRU
/// replacement and sectored lines (a valid and a dirty bit per sector). Write-back, write-allocate; a write that covers a
/// whole sector needs no fetch, a partial-sector write to an invalid sector fetches it (the
/// caller reads it from HBM). Each slice's bandwidth is booked by reservation at
/// l2.bandwidth / slices × efficiency.l2. Only efficiency.l2_capacity of the sets hold lines.
///
/// State lives in one flat array of words, set by set, each set in LRU order. A way's word holds
/// its tag and its sector masks: (tag + 1) << 2S | dirty << S | valid, S = sectors per line, 0 for
/// an invalid way. The tag is the line index without its low k bits, k = min(11, log2(sets)):
/// within one set those bits follow from the tag (the set hash maps the 2^k lines of a tag to 2^k
/// consecutive hash values, which fall in distinct sets), so tag and set give the line back. Words
/// are 32-bit when every tag fits (H200: a 16-way set is one 64-byte host cache line, which a
/// lookup scans four ways at a time), else 64-bit. No allocation per access. Lines are identified
/// by their line index (byte address / line_size).

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <vector>

#include "sim/core/bits.h"
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
  std::uint32_t hit_mask = 0;  ///< requested sectors that were valid
  std::uint32_t fetch_mask = 0;  ///< sectors the caller must read from HBM
  std::uint32_t victim_dirty = 0;  ///< dirty sectors of an evicted line (to write back), 0 if none
  std::uint64_t victim_line = 0;  ///< line index of that evicted line
  /// A store over l2.dirty_ways: the dirty sectors of the least recently used other dirty line of
  /// the set, written back and kept (clean); 0 if none.
  std::uint32_t cleaned_dirty = 0;
  std::uint64_t cleaned_line = 0;  ///< line index of that cleaned line
};

/// Where a line lives in the L2: its slice, its set, the index of the set's first way, its tag.
/// Plain (no member initializers), so that a batch of them on the stack costs nothing to declare;
/// L2Ways::place fills every member.
struct L2Place {
  std::uint32_t slice;
  std::size_t set_base;
  std::uint32_t set;
  std::uint64_t tag;  ///< (line >> k) + 1 (never 0: 0 marks an invalid way)
};

/// The L2's tag array as the hot loop sees it: its geometry and the pointer to its words, copied
/// out of the L2 (L2::ways) into the caller's locals for a run of line accesses, so that the
/// compiler keeps them in registers instead of reloading each from the L2 after every store to a
/// way (which may alias any 32-bit member). `Word` is the way word (L2::wide()). Valid until the
/// L2 is destroyed; the L2's own place/read/write are this view's.
template <class Word>
class L2Ways {
 public:
  using Place = L2Place;

  /// See L2::place.
  Place place(std::uint64_t line) const {
    const auto slice = static_cast<std::uint32_t>(reduce_hash(mix64(line), m_slices));
    const std::uint32_t set = m_set_mod(fold(line));
    return Place{slice, std::size_t{set} * m_ways, set, (line >> m_tag_low_bits) + 1};
  }
  /// Hints the host CPU to fetch `line`'s set into its cache (no effect on the simulation).
  void prefetch(std::uint64_t line) const {
    prefetch_host_line(&m_words[std::size_t{m_set_mod(fold(line))} * m_ways]);
  }
  /// The same for a line already placed.
  void prefetch(const Place& place) const { prefetch_host_line(&m_words[place.set_base]); }
  /// See L2::read. read, write and find_or_allocate are always inlined: GCC's size limits left
  /// them as calls in the memory path's far-copy steps (far_load, store_copy), and the call, its
  /// arguments and its generic way count cost about 6% of naive's instructions on the H200
  /// preset (docs/performance.md, 2026-12-06).
  [[gnu::always_inline]] L2Outcome read(const Place& place, std::uint32_t mask) const {
    L2Outcome out;
    Word& word = find_or_allocate(place, out);
    const std::uint32_t valid = static_cast<std::uint32_t>(word) & m_sector_bits;
    out.hit_mask = mask & valid;
    out.fetch_mask = mask & ~valid;
    word |= mask;
    return out;
  }
  /// See L2::write.
  [[gnu::always_inline]] L2Outcome write(const Place& place, std::uint32_t mask,
                                         std::uint32_t full_mask) const {
    L2Outcome out;
    Word& word = find_or_allocate(place, out);
    const auto before = static_cast<std::uint32_t>(word);
    const std::uint32_t valid = before & m_sector_bits;
    out.hit_mask = mask & valid;
    out.fetch_mask = mask & ~full_mask & ~valid;
    word |= mask | (mask << m_sectors_per_line);
    // Only a line that was clean (or new) adds to its set's dirty lines: a set holds at most
    // m_dirty_ways of them after every store, so a store to a dirty line never passes the limit.
    if (m_dirty_ways != 0 && ((before >> m_sectors_per_line) & m_sector_bits) == 0)
      clean_over_limit(place, out);
    return out;
  }

  /// The place of the copy of the line at `home` that loads from another partition leave
  /// (l2.far_reads: copy): the same set, the tag with the copy bit (above every line's tag, so
  /// a copy never matches a line), `slice` (one of the loading SM's partition) for bandwidth.
  Place copy_of(const Place& home, std::uint32_t slice) const {
    return Place{slice, home.set_base, home.set, home.tag | m_copy_bit};
  }
  /// Whether the copy at `copy` holds every sector of `mask`; if so it becomes the most recently
  /// used line of its set (else nothing changes).
  bool copy_hit(const Place& copy, std::uint32_t mask) const;
  /// Removes the line of `place` if present (a copy: clean, nothing to write back); the ways
  /// after it move up, the set's last way becomes invalid.
  void invalidate(const Place& place) const;

  /// The set hash of `line` (< 2^32): the line index XOR-folded with its higher bits.
  static std::uint32_t fold(std::uint64_t line) {
    return static_cast<std::uint32_t>(line ^ (line >> 11) ^ (line >> 22));
  }
  /// The line whose way word has tag field `tag` (> 0) in set `set`. Its high bits h (the tag
  /// less one, shifted back) fix the folded bits, so its hash is g ^ low, g = fold(h), for its k
  /// low bits `low`: a value of the aligned block of 2^k hashes from g & ~(2^k - 1), the one
  /// that is `set` modulo the sets (2^k <= sets).
  std::uint64_t line_of(std::uint64_t tag, std::uint32_t set) const {
    const std::uint64_t high = (tag - 1) << m_tag_low_bits;
    const std::uint32_t g = fold(high);
    const std::uint32_t low_bits = (1u << m_tag_low_bits) - 1;
    const std::uint32_t block = g & ~low_bits;
    const std::uint32_t block_set = m_set_mod(block);
    const std::uint32_t offset = set >= block_set ? set - block_set : set + m_sets - block_set;
    return high | ((offset ^ g) & low_bits);
  }

 private:
  friend class L2;
  L2Ways() : L2Ways(nullptr, 1, 1, 1, 0, 1, 0, 0) {}
  L2Ways(Word* words, std::uint32_t ways, std::uint32_t sectors_per_line, std::uint32_t sets,
         std::uint32_t tag_low_bits, std::uint64_t slices, std::uint64_t copy_bit,
         std::uint32_t dirty_ways)
      : m_words(words),
        m_copy_bit(copy_bit),
        m_set_mod(sets),
        m_slices(slices),
        m_ways(ways),
        m_sets(sets),
        m_sectors_per_line(sectors_per_line),
        m_sector_bits((1u << sectors_per_line) - 1),
        m_tag_shift(2 * sectors_per_line),
        m_tag_low_bits(tag_low_bits),
        m_dirty_ways(dirty_ways < ways ? dirty_ways : 0) {}

  /// After a store made the front line of `place`'s set dirty: if more than m_dirty_ways lines of
  /// the set are dirty, the least recently used of the others is cleaned (reported in `out`).
  void clean_over_limit(const Place& place, L2Outcome& out) const;
  /// The dirty lines of a set (`dirty_bits`: a word's dirty-sector field) and the way of the
  /// least recently used of them (0 when none).
  struct DirtyWays {
    std::uint32_t count = 0;
    std::uint32_t oldest = 0;
  };
  DirtyWays dirty_ways_of(const Word* set, Word dirty_bits) const;

  /// Moves the line of `place` to the front (most recently used) of its set, allocating it in
  /// place of the least recently used way if absent (reporting a dirty victim); returns its word.
  [[gnu::always_inline]] Word& find_or_allocate(const Place& place, L2Outcome& out) const;

  Word* m_words;  ///< [set·ways + position], each set in LRU order, most recently used first
  std::uint64_t m_copy_bit;  ///< the tag bit that marks a copy (0 when the L2 keeps none)
  FastMod32 m_set_mod;  ///< remainder by the sets
  std::uint64_t m_slices;
  std::uint32_t m_ways;
  std::uint32_t m_sets;  ///< slices × usable sets per slice, < 2^32
  std::uint32_t m_sectors_per_line;
  std::uint32_t m_sector_bits;  ///< (1 << sectors_per_line) - 1
  std::uint32_t m_tag_shift;  ///< 2 · sectors_per_line
  std::uint32_t m_tag_low_bits;  ///< k = min(11, ⌊log2(sets)⌋): line bits not in the tag
  std::uint32_t m_dirty_ways;  ///< l2.dirty_ways; 0: no limit (also when it is the ways or more)
};

class L2 {
 public:
  /// `config` is a validated one (load_config or validate_config: the geometry is checked there,
  /// once, with the key and its place). Each slice's bandwidth is its edge's in `topology`, × efficiency.l2.
  L2(const HardwareConfig& config, const Topology& topology);
  /// The same on the topology `config` builds.
  explicit L2(const HardwareConfig& config) : L2(config, Topology(config)) {}
  /// Not copied: the views (ways()) point into the L2's own words.
  L2(const L2&) = delete;
  L2& operator=(const L2&) = delete;

  /// Host bytes of one way's word (tag and sector masks) for `sets` sets of lines of
  /// `sectors_per_line` sectors: 4 where the tags (with the copy bit when `copies`) fit in 32
  /// bits above the masks, else 8.
  static std::uint64_t way_bytes(std::uint64_t sets, std::uint32_t sectors_per_line,
                                 bool copies = false);
  /// The tag bit that marks a copy (l2.far_reads: copy) for `sets` sets: the power of two above
  /// every line's tag.
  static std::uint64_t copy_bit(std::uint64_t sets);
  /// Whether loads across partitions leave copies (l2.far_reads: copy, more than one partition).
  bool keeps_copies() const { return m_copy_bit != 0; }

  /// Where a line lives: its slice, its set, the index of the set's first way, and its tag.
  using Place = L2Place;

  /// Places line `line`. Its slice (whose bandwidth it uses; slices are split evenly among
  /// l2.partitions, so this also picks the partition) is a 64-bit mix of the line index reduced
  /// by multiply-shift. Its set is the line index, XOR-folded with higher bits (so that
  /// power-of-two strides spread over sets), modulo slices × sets_per_slice: capacity and
  /// associativity are those of the whole L2. Consecutive lines land in consecutive sets, which
  /// keeps the simulator's own memory accesses local.
  Place place(std::uint64_t line) const { return m_narrow_ways.place(line); }

  /// Whether way words are 64-bit (else 32-bit): which of ways<std::uint64_t>() and
  /// ways<std::uint32_t>() is the L2's.
  bool wide() const { return m_wide; }
  /// The tag array's view for a run of accesses (`Word` as wide() says; the other is empty).
  template <class Word>
  const L2Ways<Word>& ways() const {
    if constexpr (sizeof(Word) == sizeof(std::uint64_t)) {
      return m_wide_ways;
    } else {
      return m_narrow_ways;
    }
  }
  /// The slices' reservations, for the memory path to book: a line of n sectors holds its slice
  /// for slice_sector_ticks()[slice · (sectors_per_line + 1) + n].
  Reservations::View slice_bus() { return m_slice_bus.view(); }
  /// [slice · (sectors_per_line + 1) + sectors] → transfer ticks of that many sectors.
  const Tick* slice_sector_ticks() const { return m_sector_ticks.data(); }
  /// [slice] → transfer ticks of a whole line (every sector).
  const Tick* whole_line_ticks() const { return m_whole_line_ticks.data(); }

  /// A load of sectors `mask` of `line` at `place`: hits are the valid ones; the rest are
  /// allocated (evicting the LRU line of the set if the line is absent) and returned in
  /// fetch_mask. Marks the line most recently used. (`line` is the one `place` was made for.)
  L2Outcome read(const Place& place, std::uint64_t line, std::uint32_t mask);

  /// A store to sectors `mask` of `line`, of which `full_mask` are written completely: the line is
  /// allocated if absent, the sectors become valid and dirty; partially written sectors that were
  /// not valid are returned in fetch_mask.
  L2Outcome write(const Place& place, std::uint64_t line, std::uint32_t mask,
                  std::uint32_t full_mask);

  /// Busy ticks of each slice since the last reset_busy.
  const std::vector<Tick>& busy() const { return m_slice_bus.busy(); }
  void reset_busy() { m_slice_bus.reset_busy(); }

  /// Bytes in dirty sectors now (not yet written back).
  std::uint64_t dirty_bytes() const;

  /// Invalidates every line; calls `on_dirty(line, dirty_mask)` for each dirty one first, in
  /// slice, set, way order (deterministic).
  template <typename F>
  void flush(F&& on_dirty) {
    if (m_wide) {
      flush_words(m_words64, on_dirty);
    } else {
      flush_words(m_words32, on_dirty);
    }
  }

  /// Largest line index the cache can hold (tags come from a 32-bit hash): lines below
  /// 2^32 - 1, i.e. addresses below 512 GiB with 128-byte lines.
  static constexpr std::uint64_t kMaxLine = 0xFFFFFFFEull;

  std::uint32_t sectors_per_line() const { return m_sectors_per_line; }
  std::uint64_t line_bytes() const { return m_line_bytes; }
  std::uint64_t sector_bytes() const { return m_sector_bytes; }

 private:
  template <class Word>
  using WordArray = std::vector<Word, HugePageAllocator<Word>>;

  template <class Word, typename F>
  void flush_words(WordArray<Word>& words, F& on_dirty) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const Word w = words[i];
      const auto dirty = static_cast<std::uint32_t>(w >> m_sectors_per_line) & m_sector_bits;
      if ((w >> m_tag_shift) != 0 && dirty != 0) {
        on_dirty(m_narrow_ways.line_of(w >> m_tag_shift, static_cast<std::uint32_t>(i / m_ways)),
                 dirty);
      }
      words[i] = 0;
    }
  }
  template <class Word>
  std::uint64_t dirty_sectors(const WordArray<Word>& words) const;

  std::uint64_t m_line_bytes;
  std::uint64_t m_sector_bytes;
  std::uint32_t m_sectors_per_line;
  std::uint32_t m_sector_bits = 0;  ///< (1 << sectors_per_line) - 1
  std::uint32_t m_tag_shift = 0;  ///< 2 · sectors_per_line
  std::uint64_t m_slices;
  std::uint64_t m_sets_per_slice;
  std::uint64_t m_sets;  ///< slices × sets_per_slice, < 2^32
  std::uint32_t m_ways;
  std::uint64_t m_copy_bit = 0;  ///< see L2Ways::copy_of; 0 when no copies are kept
  /// Whether way words are 64-bit (m_words64; else 32-bit, m_words32): [set·ways + position] →
  /// word; each set is kept in LRU order, most recently used first, so no stamps are needed and
  /// invalid ways sit at the end.
  bool m_wide = false;
  WordArray<std::uint32_t> m_words32;
  WordArray<std::uint64_t> m_words64;
  L2Ways<std::uint32_t> m_narrow_ways;  ///< over m_words32 (no words when m_wide)
  L2Ways<std::uint64_t> m_wide_ways;  ///< over m_words64 (no words unless m_wide)
  Reservations m_slice_bus;  ///< per slice
  std::vector<Tick> m_sector_ticks;  ///< [slice · m_stride + sectors] → transfer ticks
  std::size_t m_stride = 0;  ///< sectors_per_line + 1
  std::vector<Tick> m_whole_line_ticks;  ///< [slice] → m_sector_ticks[slice · m_stride + S]
};

// The per-line operations are defined here so that the memory path's hot loop inlines them.

namespace l2_detail {

#if defined(__SSE2__)
/// A 4-bit mask of the four ways at `words` whose word, masked by `bits4`, equals `key4` (one
/// SSE2 compare).
inline unsigned equal_ways4(const std::uint32_t* words, __m128i bits4, __m128i key4) {
  const __m128i four =
      _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(words)), bits4);
  return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(four, key4))));
}
#endif

/// A 16-bit mask of the ways among 16 whose word, masked by `bits`, equals `key` (bit w for way
/// w): four 32-bit words per SSE2 compare, without a branch per way.
inline unsigned equal_ways16(const std::uint32_t* words, std::uint32_t bits, std::uint32_t key) {
#if defined(__SSE2__)
  const __m128i key4 = _mm_set1_epi32(static_cast<int>(key));
  const __m128i bits4 = _mm_set1_epi32(static_cast<int>(bits));
  unsigned matches = 0;
  for (std::uint32_t g = 0; g < 4; ++g)
    matches |= equal_ways4(words + 4 * g, bits4, key4) << (4 * g);
  return matches;
#else
  unsigned matches = 0;
  for (std::uint32_t w = 0; w < 16; ++w) matches |= ((words[w] & bits) == key ? 1u : 0u) << w;
  return matches;
#endif
}

/// The first of `ways` words whose tag field (the bits of `tag_bits`) equals `key`, or `ways`.
/// With SSE2, four 32-bit words per compare (a miss scans the whole set; a scalar loop spent a
/// quarter of naive attention's instructions here).
inline std::uint32_t find_way(const std::uint32_t* words, std::uint32_t ways, std::uint32_t key,
                              std::uint32_t tag_bits) {
  if (ways == 16) {
    // All four groups compared, their matches in one mask: one branch (the callers pass 16 as a
    // constant, after the most recently used way has missed).
    const unsigned matches = equal_ways16(words, tag_bits, key);
    return matches == 0 ? 16 : static_cast<std::uint32_t>(std::countr_zero(matches));
  }
  std::uint32_t w = 0;
#if defined(__SSE2__)
  const __m128i key4 = _mm_set1_epi32(static_cast<int>(key));
  const __m128i bits4 = _mm_set1_epi32(static_cast<int>(tag_bits));
  for (; w + 4 <= ways; w += 4) {
    const unsigned hits = l2_detail::equal_ways4(words + w, bits4, key4);
    if (hits != 0) return w + static_cast<std::uint32_t>(std::countr_zero(hits));
  }
#endif
  while (w < ways && (words[w] & tag_bits) != key) ++w;
  return w;
}

/// Moves ways [0, w) of `words` one place back and puts `word` first (w < ways).
inline void move_to_front(std::uint32_t* words, std::uint32_t ways, std::uint32_t w,
                          std::uint32_t word) {
#if defined(__SSE2__)
  if (ways % 4 == 0) {
    // Four ways per step, in registers: each group shifted by one way, the way falling out of
    // it carried into the next, kept only at positions <= w (no library call for a few bytes).
    // Groups wholly at positions <= w move whole; a last group that w ends inside keeps its
    // ways past w (a miss, w = ways - 1, has none).
    __m128i carry = _mm_cvtsi32_si128(static_cast<int>(word));
    if (ways == 16 && w == 15) {
      // A miss in a 16-way set (the presets' allocation, the usual case of a streamed line):
      // every group moves whole, unrolled, without the loop's count and branches.
      __m128i* group = reinterpret_cast<__m128i*>(words);
      const __m128i g0 = _mm_loadu_si128(group);
      const __m128i g1 = _mm_loadu_si128(group + 1);
      const __m128i g2 = _mm_loadu_si128(group + 2);
      const __m128i g3 = _mm_loadu_si128(group + 3);
      _mm_storeu_si128(group, _mm_or_si128(_mm_slli_si128(g0, 4), carry));
      _mm_storeu_si128(group + 1, _mm_or_si128(_mm_slli_si128(g1, 4), _mm_srli_si128(g0, 12)));
      _mm_storeu_si128(group + 2, _mm_or_si128(_mm_slli_si128(g2, 4), _mm_srli_si128(g1, 12)));
      _mm_storeu_si128(group + 3, _mm_or_si128(_mm_slli_si128(g3, 4), _mm_srli_si128(g2, 12)));
      return;
    }
    std::uint32_t k = 0;
    for (; k + 3 <= w; k += 4) {
      __m128i* group = reinterpret_cast<__m128i*>(words + k);
      const __m128i old = _mm_loadu_si128(group);
      _mm_storeu_si128(group, _mm_or_si128(_mm_slli_si128(old, 4), carry));
      carry = _mm_srli_si128(old, 12);
    }
    if (k <= w) {
      __m128i* group = reinterpret_cast<__m128i*>(words + k);
      const __m128i old = _mm_loadu_si128(group);
      const __m128i shifted = _mm_or_si128(_mm_slli_si128(old, 4), carry);
      const __m128i position =
          _mm_add_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(static_cast<int>(k)));
      const __m128i last = _mm_set1_epi32(static_cast<int>(w));
      const __m128i moved = _mm_cmpgt_epi32(position, last);  // positions past w keep their way
      _mm_storeu_si128(group,
                       _mm_or_si128(_mm_and_si128(moved, old), _mm_andnot_si128(moved, shifted)));
    }
    return;
  }
#endif
  std::memmove(words + 1, words, w * sizeof *words);
  words[0] = word;
}

inline void move_to_front(std::uint64_t* words, std::uint32_t, std::uint32_t w,
                          std::uint64_t word) {
  std::memmove(words + 1, words, w * sizeof *words);
  words[0] = word;
}

inline std::uint32_t find_way(const std::uint64_t* words, std::uint32_t ways, std::uint64_t key,
                              std::uint64_t tag_bits) {
  std::uint32_t w = 0;
  while (w < ways && (words[w] & tag_bits) != key) ++w;
  return w;
}

}  // namespace l2_detail

template <class Word>
inline Word& L2Ways<Word>::find_or_allocate(const Place& place, L2Outcome& out) const {
  Word* set = &m_words[place.set_base];
  const auto key = static_cast<Word>(place.tag << m_tag_shift);
  const auto tag_bits = static_cast<Word>(~Word{0} << m_tag_shift);
  if ((set[0] & tag_bits) == key) return set[0];  // the most recently used line: nothing moves
  // 16 ways (every preset) as a constant, so that the scans unroll; any other count as given.
  constexpr std::uint32_t kCommonWays = 16;
  const bool common = m_ways == kCommonWays;
  std::uint32_t w = common ? l2_detail::find_way(set, kCommonWays, key, tag_bits)
                           : l2_detail::find_way(set, m_ways, key, tag_bits);
  Word word = key;
  if (w == m_ways) {
    // Miss: the last way is the least recently used (or invalid).
    w = m_ways - 1;
    const Word old = set[w];
    const auto dirty = static_cast<std::uint32_t>(old >> m_sectors_per_line) & m_sector_bits;
    if ((old >> m_tag_shift) != 0 && dirty != 0) {
      out.victim_dirty = dirty;
      out.victim_line = line_of(old >> m_tag_shift, place.set);
    }
  } else {
    word = set[w];
  }
  if (common) {
    l2_detail::move_to_front(set, kCommonWays, w, word);
  } else {
    l2_detail::move_to_front(set, m_ways, w, word);
  }
  return set[0];
}

template <class Word>
inline typename L2Ways<Word>::DirtyWays L2Ways<Word>::dirty_ways_of(const Word* set,
                                                                    Word dirty_bits) const {
  if constexpr (sizeof(Word) == sizeof(std::uint32_t)) {
    if (m_ways == 16) {
      // The presets' sets: the dirty ways as a mask (four ways per SSE2 compare), their count
      // and the least recently used one from it, without a branch per way.
      const unsigned mask = ~l2_detail::equal_ways16(set, dirty_bits, 0) & 0xFFFFu;
      return {popcount16(mask),
              mask == 0 ? 0 : 31 - static_cast<std::uint32_t>(std::countl_zero(mask))};
    }
  }
  DirtyWays d;
  for (std::uint32_t w = 0; w < m_ways; ++w) {
    if ((set[w] & dirty_bits) != 0) {
      ++d.count;
      d.oldest = w;
    }
  }
  return d;
}

template <class Word>
inline void L2Ways<Word>::clean_over_limit(const Place& place, L2Outcome& out) const {
  Word* set = &m_words[place.set_base];
  const auto dirty_bits = static_cast<Word>(Word{m_sector_bits} << m_sectors_per_line);
  const auto [dirty, oldest] = dirty_ways_of(set, dirty_bits);
  if (dirty <= m_dirty_ways || oldest == 0) return;
  const Word old = set[oldest];
  out.cleaned_dirty = static_cast<std::uint32_t>(old >> m_sectors_per_line) & m_sector_bits;
  out.cleaned_line = line_of(old >> m_tag_shift, place.set);
  set[oldest] = old & ~dirty_bits;
}

template <class Word>
inline bool L2Ways<Word>::copy_hit(const Place& copy, std::uint32_t mask) const {
  Word* set = &m_words[copy.set_base];
  const auto key = static_cast<Word>(copy.tag << m_tag_shift);
  const auto tag_bits = static_cast<Word>(~Word{0} << m_tag_shift);
  // The most recently used line first, as find_or_allocate does: a K/V tile's lines, read by
  // CTA after CTA of one partition, find their copy there.
  if ((set[0] & tag_bits) == key) return (static_cast<std::uint32_t>(set[0]) & mask) == mask;
  const std::uint32_t w = m_ways == 16 ? l2_detail::find_way(set, 16, key, tag_bits)
                                       : l2_detail::find_way(set, m_ways, key, tag_bits);
  if (w == m_ways || (static_cast<std::uint32_t>(set[w]) & mask) != mask) return false;
  if (w != 0) l2_detail::move_to_front(set, m_ways, w, set[w]);
  return true;
}

template <class Word>
inline void L2Ways<Word>::invalidate(const Place& place) const {
  Word* set = &m_words[place.set_base];
  const auto key = static_cast<Word>(place.tag << m_tag_shift);
  const auto tag_bits = static_cast<Word>(~Word{0} << m_tag_shift);
  const std::uint32_t w = m_ways == 16 ? l2_detail::find_way(set, 16, key, tag_bits)
                                       : l2_detail::find_way(set, m_ways, key, tag_bits);
  if (w == m_ways) return;
  std::memmove(set + w, set + w + 1, (m_ways - 1 - w) * sizeof(Word));
  set[m_ways - 1] = 0;
}

inline L2Outcome L2::read(const Place& place, std::uint64_t, std::uint32_t mask) {
  return m_wide ? m_wide_ways.read(place, mask) : m_narrow_ways.read(place, mask);
}

inline L2Outcome L2::write(const Place& place, std::uint64_t, std::uint32_t mask,
                           std::uint32_t full_mask) {
  return m_wide ? m_wide_ways.write(place, mask, full_mask)
                : m_narrow_ways.write(place, mask, full_mask);
}

}  // namespace memwall
