// l2.far_reads: copy. A load or store from an SM of the other partition than its line's slice
// leaves a copy of the line in the SM's partition (in the line's set: it takes a way), which
// serves that partition's later loads at the near latency; a store from the line's own partition
// invalidates it. Expectations from the test chip's numbers (tests/support/engine.h): 4 SMs in 2
// partitions (SMs 0-1 and 2-3), 4 slices (0-1 and 2-3), 16 ways, a line crosses a slice in
// 1000 ps.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/engine/memory_path.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/topology.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

constexpr std::uint64_t kLine = 128;

HardwareConfig chip(FarReads reads) {
  HardwareConfig c = small_config();
  c.l2.far_reads = reads;
  c.l2.far_latency = 40'000;  // 40 ns
  return c;
}

/// A memory path on the test chip, with its own counters.
struct Path {
  explicit Path(FarReads reads)
      : config(chip(reads)), topology(config), memory(config, one_tensor_workload(1 << 30)) {
    memory.set_kernel_counters(&counters);
  }
  /// An SM of the partition of `line`'s slice (`near`), or of the other.
  std::uint32_t sm_for(std::uint64_t line, bool near) const {
    const std::uint32_t home = topology.partition_of_slice(memory.l2().place(line).slice);
    for (std::uint32_t sm = 0; sm < config.sm.count; ++sm) {
      if ((topology.partition_of_crossbar(topology.crossbar_of_sm(sm)) == home) == near) return sm;
    }
    FAIL("no SM on that side");
    return 0;
  }
  /// The unloaded latency of a load of `line` by `sm` at `t` (the path is idle between calls).
  Tick load(std::uint32_t sm, std::uint64_t line, Tick t) {
    const Arrival a = memory.load(sm, Box{line * kLine, 1, kLine, kLine}, t);
    return a.ready - t;
  }
  void store(std::uint32_t sm, std::uint64_t line, Tick t) {
    memory.store(sm, Box{line * kLine, 1, kLine, kLine}, t);
  }
  HardwareConfig config;
  Topology topology;
  TrafficCounters counters;
  MemoryPath memory;
};

/// `count` lines that share one L2 set (the set of line 0).
std::vector<std::uint64_t> lines_of_one_set(const L2& l2, std::size_t count) {
  std::vector<std::uint64_t> lines;
  const std::uint32_t set = l2.place(0).set;
  for (std::uint64_t line = 0; lines.size() < count; ++line) {
    if (l2.place(line).set == set) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("With l2.far_reads copy, the other partition's second load of a line is a near hit",
          "[l2][far_reads]") {
  Path home(FarReads::kHome);
  Path copy(FarReads::kCopy);
  const std::uint64_t line = 7;
  Tick t = 1'000'000;
  const Tick near_miss = home.load(home.sm_for(line, true), line, t);
  const Tick near_hit = home.load(home.sm_for(line, true), line, t += 1'000'000);
  const Tick far_hit_home = home.load(home.sm_for(line, false), line, t += 1'000'000);
  CHECK(far_hit_home == near_hit + home.config.l2.far_latency);  // every time, without copies

  const Tick first = copy.load(copy.sm_for(line, false), line, t += 1'000'000);
  const Tick second = copy.load(copy.sm_for(line, false), line, t += 1'000'000);
  // The first misses the copy (a tag lookup, no slice time) and is served by the line's slice.
  CHECK(first == near_miss + copy.config.l2.far_latency);
  CHECK(second == near_hit);
  CHECK(copy.counters.l2_miss_sectors == 4);  // the first load's 4 sectors, once
  CHECK(copy.counters.l2_hit_sectors == 4);
}

TEST_CASE(
    "With l2.far_reads copy, a store from the line's partition invalidates the copy; one from the "
    "other partition leaves it",
    "[l2][far_reads]") {
  Path p(FarReads::kCopy);
  const std::uint64_t line = 7;
  const std::uint32_t near = p.sm_for(line, true);
  const std::uint32_t far = p.sm_for(line, false);
  Tick t = 1'000'000;
  p.load(far, line, t);
  const Tick copy_hit = p.load(far, line, t += 1'000'000);
  p.store(near, line, t += 1'000'000);
  const Tick after_home_store = p.load(far, line, t += 1'000'000);
  // The copy is gone: the line's slice serves it, across the partitions (a hit there).
  CHECK(after_home_store == copy_hit + p.config.l2.far_latency);
  CHECK(p.load(far, line, t += 1'000'000) == copy_hit);  // that load left a new copy
  p.store(far, line, t += 1'000'000);
  CHECK(p.load(far, line, t += 1'000'000) == copy_hit);
  CHECK(p.counters.l2_miss_sectors == 4);  // only the very first load went to the HBM
}

TEST_CASE(
    "With l2.far_reads copy, a line read from both partitions takes two ways of its set: 8 such "
    "lines fit a 16-way set, 9 do not",
    "[l2][far_reads]") {
  for (const FarReads reads : {FarReads::kHome, FarReads::kCopy}) {
    for (const std::size_t count : {std::size_t{8}, std::size_t{9}}) {
      Path p(reads);
      REQUIRE(p.config.l2.ways == 16);
      const std::vector<std::uint64_t> lines = lines_of_one_set(p.memory.l2(), count);
      Tick t = 1'000'000;
      for (int round = 0; round < 2; ++round) {
        for (const bool near : {true, false}) {
          for (const std::uint64_t line : lines) p.load(p.sm_for(line, near), line, t += 1'000'000);
        }
      }
      INFO((reads == FarReads::kCopy ? "copy, " : "home, ") << count << " lines");
      // The first round's loads from the line's partition miss once each; the rest hit unless
      // the set overflowed.
      const std::uint64_t compulsory = count * 4;
      if (reads == FarReads::kCopy && count == 9) {
        CHECK(p.counters.l2_miss_sectors > compulsory);
      } else {
        CHECK(p.counters.l2_miss_sectors == compulsory);
      }
    }
  }
}

TEST_CASE(
    "l2.far_reads copy is refused for more than two partitions and for one way of two; one "
    "partition of one way (memwall io --ideal) never makes a copy and is accepted",
    "[l2][far_reads][config]") {
  HardwareConfig c = chip(FarReads::kCopy);
  c.l2.partitions = 4;
  CHECK_THROWS_WITH(validate_config(c),
                    Catch::Contains("l2.far_reads") && Catch::Contains("two partitions"));
  c = chip(FarReads::kCopy);
  c.l2.ways = 1;
  c.l2.size = Bytes{c.l2.size.count / 16};
  CHECK_THROWS_WITH(validate_config(c),
                    Catch::Contains("l2.far_reads") && Catch::Contains("2 ways"));
  c.l2.partitions = 1;
  c.l2.slices = 1;
  c.l2.size = Bytes{c.l2.line_size.count};
  CHECK_NOTHROW(validate_config(c));
}
