// The L2 model against a plain reference: per set, true LRU over sectored lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

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

TEST_CASE("The L2 evicts the least recently used line of a set and tracks sectors like a "
          "reference model",
          "[run][l2]") {
  HardwareConfig c = test::small_config();
  c.l2.size = Bytes{64 * 1024};  // 4 slices × 8 sets × 16 ways × 128 B
  L2 l2(c);
  const std::uint32_t ways = c.l2.ways;
  std::map<std::size_t, std::vector<RefLine>> ref;  // set base → lines, most recent first
  std::mt19937_64 rng(42);
  std::uint64_t hits = 0;
  std::uint64_t evictions = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t line = rng() % 2048;  // 4x the capacity in lines
    const auto mask = static_cast<std::uint32_t>(1 + rng() % 15);
    const bool is_store = rng() % 4 == 0;
    const L2::Place place = l2.place(line);
    const L2Outcome got = is_store ? l2.write(place, line, mask, mask) : l2.read(place, line, mask);

    std::vector<RefLine>& set = ref[place.set_base];
    auto it = std::find_if(set.begin(), set.end(), [&](const RefLine& r) { return r.line == line; });
    RefLine entry{line, 0, 0};
    std::uint32_t victim_dirty = 0;
    if (it != set.end()) {
      entry = *it;
      set.erase(it);
      ++hits;
    } else if (set.size() == ways) {
      victim_dirty = set.back().dirty;
      set.pop_back();
      ++evictions;
    }
    REQUIRE(got.hit_mask == (mask & entry.valid));
    REQUIRE(got.victim_dirty == victim_dirty);
    if (!is_store) REQUIRE(got.fetch_mask == (mask & ~entry.valid));
    entry.valid |= mask;
    if (is_store) entry.dirty |= mask;
    set.insert(set.begin(), entry);
  }
  CHECK(hits > 0);
  CHECK(evictions > 0);
  std::uint64_t dirty_sectors = 0;
  for (const auto& [base, set] : ref) {
    for (const RefLine& r : set) dirty_sectors += static_cast<std::uint64_t>(__builtin_popcount(r.dirty));
  }
  CHECK(l2.dirty_bytes() == dirty_sectors * c.l2.sector_size.count);
}
