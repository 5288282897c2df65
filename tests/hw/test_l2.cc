// The L2 model against a plain reference: per set, true LRU over sectored lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "sim/hw/config_loader.h"
#include "sim/hw/l2.h"
#include "tests/support/engine.h"

using namespace memwall;

namespace {

/// A line in the reference model.
struct RefLine {
  std::uint64_t line = 0;
  std::uint32_t valid = 0;
  std::uint32_t dirty = 0;
};

}  // namespace

TEST_CASE(
    "The L2 evicts the least recently used line of a set and tracks sectors like a "
    "reference model",
    "[run][l2]") {
  HardwareConfig c = test::small_config();
  // 64 KiB: 4 slices × 8 sets × 16 ways × 128 B, whose tags need 64-bit way words; 4 MiB: 2048
  // sets, 32-bit words. Lines either dense (0 .. 4x the capacity) or spread over every line
  // index the L2 can tag, so that an evicted line is rebuilt from its tag and set.
  const std::uint64_t size = GENERATE(std::uint64_t{64 * 1024}, std::uint64_t{4 * 1024 * 1024});
  const bool spread = GENERATE(false, true);
  // l2.dirty_ways: no limit, or at most 3 dirty lines per set (a store past it cleans the least
  // recently used other dirty line, which stays valid).
  const std::uint32_t dirty_ways = GENERATE(0u, 3u);
  INFO("l2.size = " << size << ", spread lines: " << spread << ", dirty_ways " << dirty_ways);
  c.l2.size = Bytes{size};
  c.l2.dirty_ways = dirty_ways;
  L2 l2(c);
  const std::uint32_t ways = c.l2.ways;
  const std::uint64_t pool_size = 4 * size / c.l2.line_size.count;
  std::vector<std::uint64_t> pool(pool_size);
  std::mt19937_64 pool_rng(7);
  for (std::uint64_t i = 0; i < pool_size; ++i) {
    pool[i] = spread ? pool_rng() % (L2::kMaxLine + 1) : i;
  }
  pool[0] = spread ? L2::kMaxLine : 0;
  std::map<std::size_t, std::vector<RefLine>> ref;  // set base → lines, most recent first
  std::mt19937_64 rng(42);
  std::uint64_t hits = 0;
  std::uint64_t evictions = 0;
  std::uint64_t dirty_evictions = 0;
  std::uint64_t cleanings = 0;
  const int accesses = size > 64 * 1024 ? 600000 : 200000;
  for (int i = 0; i < accesses; ++i) {
    const std::uint64_t line = pool[rng() % pool_size];
    const auto mask = static_cast<std::uint32_t>(1 + rng() % 15);
    const bool is_store = rng() % 4 == 0;
    const L2::Place place = l2.place(line);
    const L2Outcome got = is_store ? l2.write(place, line, mask, mask) : l2.read(place, line, mask);

    std::vector<RefLine>& set = ref[place.set_base];
    auto it =
        std::find_if(set.begin(), set.end(), [&](const RefLine& r) { return r.line == line; });
    RefLine entry{line, 0, 0};
    std::uint32_t victim_dirty = 0;
    std::uint64_t victim_line = 0;
    if (it != set.end()) {
      entry = *it;
      set.erase(it);
      ++hits;
    } else if (set.size() == ways) {
      victim_dirty = set.back().dirty;
      victim_line = set.back().line;
      set.pop_back();
      ++evictions;
    }
    REQUIRE(got.hit_mask == (mask & entry.valid));
    REQUIRE(got.victim_dirty == victim_dirty);
    if (victim_dirty != 0) {
      REQUIRE(got.victim_line == victim_line);
      ++dirty_evictions;
    }
    if (!is_store) REQUIRE(got.fetch_mask == (mask & ~entry.valid));
    entry.valid |= mask;
    if (is_store) entry.dirty |= mask;
    set.insert(set.begin(), entry);
    std::uint32_t cleaned_dirty = 0;
    std::uint64_t cleaned_line = 0;
    if (is_store && dirty_ways != 0 &&
        static_cast<std::uint32_t>(std::count_if(
            set.begin(), set.end(), [](const RefLine& r) { return r.dirty != 0; })) > dirty_ways) {
      const auto oldest =
          std::find_if(set.rbegin(), set.rend() - 1, [](const RefLine& r) { return r.dirty != 0; });
      cleaned_dirty = oldest->dirty;
      cleaned_line = oldest->line;
      oldest->dirty = 0;
      ++cleanings;
    }
    REQUIRE(got.cleaned_dirty == cleaned_dirty);
    if (cleaned_dirty != 0) REQUIRE(got.cleaned_line == cleaned_line);
  }
  CHECK(hits > 0);
  CHECK((cleanings > 0) == (dirty_ways != 0));
  CHECK(evictions > 0);
  CHECK(dirty_evictions > 0);
  std::uint64_t dirty_sectors = 0;
  for (const auto& [base, set] : ref) {
    for (const RefLine& r : set)
      dirty_sectors += static_cast<std::uint64_t>(__builtin_popcount(r.dirty));
  }
  CHECK(l2.dirty_bytes() == dirty_sectors * c.l2.sector_size.count);
  // A flush reports every dirty line once, with its dirty sectors, and leaves nothing dirty.
  std::map<std::uint64_t, std::uint32_t> expected;
  for (const auto& [base, set] : ref) {
    for (const RefLine& r : set) {
      if (r.dirty != 0) expected[r.line] = r.dirty;
    }
  }
  std::map<std::uint64_t, std::uint32_t> flushed;
  l2.flush([&](std::uint64_t line, std::uint32_t dirty) { flushed[line] = dirty; });
  CHECK(flushed == expected);
  CHECK(l2.dirty_bytes() == 0);
}

TEST_CASE("A way's word is 32 bits where the line tags fit above the sector masks, else 64",
          "[l2][memory]") {
  // Tags keep a line's bits above its low min(11, log2 sets) bits: with 2^11 sets a 32-bit line
  // index leaves 21 bits of tag (+1), which fit above 4 sectors' two 4-bit masks (24 bits) but not
  // above 8 sectors' two 8-bit masks (16 bits); with one set nothing is taken off the tag.
  CHECK(L2::way_bytes(std::uint64_t{1} << 11, 4) == 4);
  CHECK(L2::way_bytes(std::uint64_t{1} << 11, 8) == 8);
  CHECK(L2::way_bytes(1, 4) == 8);
  // The H200 preset (480 sets per slice x 64 slices, 4 sectors per line) packs into 32 bits.
  const HardwareConfig h200 = load_config("h200");
  CHECK(L2::way_bytes(derive(h200).l2_usable_sets_per_slice * h200.l2.slices, 4) == 4);
}
