// Findings of issue 18 ("a user's first hour, and a hostile input's") met inside the engine: the
// memory a simulation takes and the range of its clock.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "sim/core/error.h"
#include "sim/core/memory_budget.h"
#include "sim/core/reservation.h"
#include "sim/core/sparse_bitmap.h"
#include "sim/engine/memory_path.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/support/cli.h"
#include "tests/support/engine.h"
#include "traces/trace_format.h"
#include "traces/trace_reader.h"

using namespace memwall;
using namespace memwall::test;

namespace {

/// A workload of one tensor of `declared` bytes at address 0.
WorkloadInfo one_tensor(std::uint64_t declared) {
  WorkloadInfo w;
  w.name = "forged";
  w.tensors.push_back(TensorInfo{"huge", 0, declared});
  return w;
}

}  // namespace

TEST_CASE(
    "Finding 2: the record of fetched sectors takes memory for what is read, not for what "
    "a tensor declares",
    "[first-hour][memory]") {
  const HardwareConfig c = small_config();
  const std::uint64_t line = c.l2.line_size.count;
  // Declared sizes from a few GiB to 2^60 B (a flat bitmap of the last would be 2^52 bytes); the
  // lines read lie within the 2^32 lines the L2 can tag.
  for (const std::uint64_t declared :
       {std::uint64_t{1} << 32, std::uint64_t{1} << 40, std::uint64_t{1} << 42,
        std::uint64_t{1} << 50, std::uint64_t{1} << 60}) {
    INFO("declared " << declared);
    MemoryBudget budget(Bytes{64 << 20});
    MemoryPath path(c, one_tensor(declared));
    path.set_memory_budget(&budget);
    TrafficCounters counters;
    path.set_kernel_counters(&counters);
    const std::uint64_t far = (std::min<std::uint64_t>(declared, std::uint64_t{1} << 38) - line);
    for (const std::uint64_t addr : {std::uint64_t{0}, far / 2 / line * line, far}) {
      (void)path.load(0, Box{addr, 1, static_cast<std::uint32_t>(line), line}, 0);
    }
    path.flush_l2();  // so that the next reads go to DRAM again
    (void)path.load(0, Box{0, 1, static_cast<std::uint32_t>(line), line}, 0);
    // Three distinct lines fetched, the first one twice: the reasons are exact, as before.
    CHECK(path.reason_traffic().compulsory == 3 * line);
    CHECK(path.reason_traffic().reread == line);
    // Three pages, and a directory of page pointers up to the farthest page (at most doubled).
    const std::uint64_t far_page = far / c.l2.sector_size.count >> SparseBitmap::kPageShift;
    CHECK(budget.used_bytes() <= 3 * SparseBitmap::kPageBytes + 2 * (far_page + 1) * sizeof(void*));
  }
}

TEST_CASE(
    "Finding 2: a simulation whose record of fetched sectors would pass --max-memory stops "
    "with the figure",
    "[first-hour][memory]") {
  const HardwareConfig c = small_config();
  const std::uint64_t line = c.l2.line_size.count;
  // One page of the record covers kPageShift bits, i.e. that many sectors: touch a line per page.
  const std::uint64_t page_span =
      (std::uint64_t{1} << SparseBitmap::kPageShift) * c.l2.sector_size.count;
  MemoryBudget budget(Bytes{4 * SparseBitmap::kPageBytes + 1024});  // four pages and the directory
  MemoryPath path(c, one_tensor(std::uint64_t{1} << 36));
  path.set_memory_budget(&budget);
  TrafficCounters counters;
  path.set_kernel_counters(&counters);
  for (std::uint64_t i = 0; i < 4; ++i) (void)path.load(0, Box{i * page_span, 1, 128, line}, 0);
  CHECK_THROWS_WITH(path.load(0, Box{4 * page_span, 1, 128, line}, 0),
                    Catch::Contains("more memory than the limit of 17 KiB (--max-memory") &&
                        Catch::Contains("would reach 20.06 KiB"));
}

TEST_CASE(
    "Finding 2: a chip whose model alone needs more than --max-memory is refused before it "
    "runs",
    "[first-hour][memory]") {
  const HardwareConfig c = small_config();
  VectorTraceSource source(one_tensor(1024),
                           {TestKernel{kernel_info("k"), {{load(0, 1, 128, 128), wait()}}}});
  SimOptions options;
  options.max_memory = Bytes{1024};
  CHECK_THROWS_WITH(
      simulate(c, source, options),
      Catch::Contains("would need") && Catch::Contains("more than the limit of 1 KiB"));
  options.max_memory = Bytes{};  // the default, half the machine's memory
  CHECK_NOTHROW(simulate(c, source, options));
}

TEST_CASE("Finding 3: a time that passes the simulator's bound is an error, never a wrap-around",
          "[first-hour][ticks]") {
  SECTION("a reservation") {
    Reservations r(1);
    Tick wait = 0;
    CHECK(r.reserve(0, kMaxTick - 100, 100, wait) == kMaxTick);
    CHECK_THROWS_WITH(r.reserve(0, 0, 1, wait), Catch::Contains("the simulated time would pass"));
  }
  SECTION("an op of 2^64 - 1 units on each pipe") {
    for (const ComputeUnit unit : {ComputeUnit::tensor, ComputeUnit::fp32, ComputeUnit::sfu}) {
      VectorTraceSource source(
          one_tensor(1024), {TestKernel{kernel_info("k"), {{compute(unit, ~std::uint64_t{0})}}}});
      CHECK_THROWS_WITH(
          simulate(small_config(), source),
          Catch::Contains("units on the") && Catch::Contains("more than the simulator's bound"));
    }
    VectorTraceSource source(one_tensor(1024),
                             {TestKernel{kernel_info("k"), {{smem_op(~std::uint64_t{0})}}}});
    CHECK_THROWS_WITH(simulate(small_config(), source),
                      Catch::Contains("more than the simulator's bound"));
  }
  SECTION("many long ops in a row") {
    // Each op takes 2^42 cycles of 1 ns on the sfu pipe (16 units a cycle), about 4.4e15 ps:
    // a few more than a thousand of them pass 2^62 ps.
    std::vector<Op> ops(2048, compute(ComputeUnit::sfu, std::uint64_t{16} << 42));
    VectorTraceSource source(one_tensor(1024), {TestKernel{kernel_info("k"), {ops}}});
    CHECK_THROWS_WITH(simulate(small_config(), source),
                      Catch::Contains("the simulated time would pass"));
  }
}

// fuzz_replay's finding (tests/fuzz/findings/replay-pipe-queue-overflow): a forged trace whose CTAs
// each wait close to the 2^62 ps time bound for a pipe made the sum of that pipe class's waits
// overflow a signed 64-bit Tick (UBSan; in release the reported mean wait wrapped). The sums are
// 128-bit now: the summed wait is more than 2^63 ps and the mean is the sum over the requests.
TEST_CASE("Fuzz finding: queueing sums of waits near the time bound do not overflow",
          "[engine][fuzz]") {
  std::ifstream in(
      std::string(MEMWALL_SOURCE_DIR) + "/tests/fuzz/findings/replay-pipe-queue-overflow",
      std::ios::binary);
  REQUIRE(in.good());
  const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(input.size() > 1);
  REQUIRE((static_cast<unsigned char>(input[0]) & 1) == 1);  // the harness frames the rest
  const std::string_view stream = std::string_view(input).substr(1);
  const std::size_t chunk = (static_cast<unsigned char>(input[0]) >> 1) + 1u;
  // The finding was made when the harness framed version 3 (stores without tags).
  const std::string file = frame_trace(stream, chunk, 3);
  const std::string path = memwall::test::temp_path("engine", "queue-overflow.mwt");
  std::ofstream(path, std::ios::binary) << file;
  TraceReader reader(path);
  SimOptions options;
  options.flush_l2_between_kernels = true;
  const RunResult r = simulate(load_config("hypothetical/teaching-gpu"), reader, options);
  bool over = false;
  for (const KernelResult& k : r.kernels) {
    for (const ResourceUse& u : k.resources) {
      if (u.requests == 0) continue;
      CHECK(u.mean_queue() ==
            Approx(static_cast<double>(u.queue) / static_cast<double>(u.requests)));
      over = over || u.queue > (TickSum{1} << 63);
    }
  }
  CHECK(over);
}
