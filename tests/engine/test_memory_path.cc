// The memory path on its own: how an issue step books the SM port for a box's lines (back to back
// from the step's issue, whole lines and partial ones with their own sector counts), where a step
// stops at the issue window, and that a box issued in several steps arrives as it does in one.
// Expectations from the test chip's numbers: a 32-byte sector crosses the port in 500 ps.
#include <catch2/catch.hpp>

#include <limits>

#include "sim/engine/memory_path.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

constexpr Tick kSectorAtPort = 500;  // 32 B at xbar.port_bandwidth = 64 GB/s
constexpr Tick kLineAtPort = 4 * kSectorAtPort;

/// A memory path on the test chip, with its own counters.
struct Path {
  Path() : config(small_config()), memory(config, one_tensor_workload(1 << 20)) {
    memory.set_kernel_counters(&counters);
  }
  ResourceUse port_use() {
    ResourceUses uses{};
    memory.take_resource_use(uses);
    return uses[static_cast<std::size_t>(ResourceClass::kSmPort)];
  }
  HardwareConfig config;
  TrafficCounters counters;
  MemoryPath memory;
};

Box contiguous(std::uint64_t base, std::uint32_t bytes) { return Box{base, 1, bytes, bytes}; }

}  // namespace

TEST_CASE("An issue step stops before the first line that would start past its window",
          "[memory_path]") {
  Path p;
  const Box box = contiguous(0, 64 * 128);
  BoxCursor cursor;
  Arrival arrival{1'000, 1'000};
  // Line i starts at 1'000 + i·kLineAtPort; with the window at 1'000 + 10 lines, lines 0..10
  // issue (line 10 starts exactly at the limit) and line 11 waits for the next step.
  const Tick limit = 1'000 + 10 * kLineAtPort;
  CHECK_FALSE(p.memory.issue(0, box, OpKind::load, 1'000, 1'000, limit, cursor, arrival));
  CHECK(cursor.line == 11);
  CHECK(p.counters.l2_line_accesses == 11);
  CHECK(p.memory.port_free(0, false) == 1'000 + 11 * kLineAtPort);
  // The step's first line always issues, even when the port is already booked past the window.
  CHECK_FALSE(p.memory.issue(0, box, OpKind::load, 1'000, 1'000, 0, cursor, arrival));
  CHECK(cursor.line == 12);
}

TEST_CASE("A box issued in several steps arrives and queues as it does in one", "[memory_path]") {
  const Box box = contiguous(4096, 100 * 128);
  Path whole;
  const Arrival once = whole.memory.load(0, box, 2'000);
  Path steps;
  BoxCursor cursor;
  Arrival arrival{2'000, 2'000};
  int calls = 0;
  for (Tick limit = 2'000;
       !steps.memory.issue(0, box, OpKind::load, 2'000, 2'000, limit, cursor, arrival);
       limit += 7 * kLineAtPort) {
    ++calls;
  }
  CHECK(calls > 5);
  CHECK(arrival.ready == once.ready);
  CHECK(arrival.unloaded == once.unloaded);
  CHECK(steps.counters.l2_line_accesses == whole.counters.l2_line_accesses);
  CHECK(steps.counters.dram_read_bytes == whole.counters.dram_read_bytes);
  const ResourceUse a = whole.port_use();
  const ResourceUse b = steps.port_use();
  CHECK(b.requests == a.requests);
  CHECK(b.queue == a.queue);
  CHECK(b.busiest_busy == a.busiest_busy);
  // Issued at one tick, the 100 lines queue back to back: line i waits i line times.
  CHECK(a.queue == static_cast<TickSum>(kLineAtPort * (100 * 99 / 2)));
}

TEST_CASE("A box's partial first and last lines cross the port with their own sectors",
          "[memory_path]") {
  Path p;
  // Bytes 32 .. 415: line 0 from its second sector (3 sectors), lines 1 and 2 whole, line 3's
  // first sector.
  const Box box = contiguous(32, 3 * 128);
  const Arrival a = p.memory.load(0, box, 0);
  CHECK(a.ready > 0);
  CHECK(p.counters.l2_line_accesses == 4);
  CHECK(p.counters.l2_read_bytes == 3 * 128);
  const ResourceUse port = p.port_use();
  CHECK(port.requests == 4);
  CHECK(port.busiest_busy == (3 + 4 + 4 + 1) * kSectorAtPort);
  // Waits: line 1 behind line 0's 3 sectors, line 2 behind 3 + 4, line 3 behind 3 + 4 + 4.
  CHECK(port.queue == static_cast<TickSum>((3 + 7 + 11) * kSectorAtPort));
}
