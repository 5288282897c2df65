// The CTA executor on its own: a CTA's ops on a small chip built in code, the events it schedules
// dispatched by hand, its finish time and time split computed from the config and from the memory
// path's own answer for the same access.
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/engine/cta_executor.h"
#include "sim/engine/memory_path.h"
#include "sim/hw/sm.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

/// Records when each CTA is done.
struct DoneLog final : CtaExecutor::Host {
  std::vector<std::pair<std::uint32_t, Tick>> done;
  void cta_done(std::uint32_t id, Tick t) override { done.emplace_back(id, t); }
};

/// A chip's parts around one executor, and the event loop the engine would run.
struct Bench {
  explicit Bench(const HardwareConfig& c, std::uint32_t threads_per_cta = 128)
      : config(c),
        memory(config, one_tensor_workload(1 << 20)),
        sms(config.sm.count, Sm(config)),
        executor(config, memory, sms, queue, nullptr, log) {
    memory.set_kernel_counters(&counters);
    executor.begin_kernel(config.sm.count, threads_per_cta, counters,
                          std::numeric_limits<std::uint64_t>::max());
  }
  void run() {
    while (!queue.empty()) {
      const Event e = queue.pop();
      if (e.kind == CtaExecutor::kFinish) {
        log.cta_done(e.target, e.tick);
      } else if (e.kind == CtaExecutor::kStream) {
        executor.stream(e.target, e.tick);
      } else {
        executor.step(e.target, e.tick);
      }
    }
  }
  HardwareConfig config;
  TrafficCounters counters;
  MemoryPath memory;
  std::vector<Sm> sms;
  EventQueue queue;
  DoneLog log;
  CtaExecutor executor;
};

}  // namespace

TEST_CASE("A CTA of compute ops is done after its op overheads and its pipes' time", "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  Bench b(c);
  b.executor.ops(0) = {compute(ComputeUnit::fp32, 256 * 1000),
                       compute(ComputeUnit::tensor, 1 << 20)};
  b.executor.start(0, 0, 0, 7, 1'000);
  b.run();
  const Tick pipes =
      b.sms[0].pipe_ticks(kFp32Pipe, 256 * 1000) + b.sms[0].pipe_ticks(kTensorPipe, 1 << 20);
  const Tick done = 1'000 + 2 * c.efficiency.op_overhead + pipes;
  REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, done}});
  CHECK(b.executor.time_of(0).compute == done - 1'000);
  CHECK(b.executor.time_of(0).latency == 0);
  CHECK(b.executor.index_of(0) == 7);
  CHECK(b.counters.flops == 256 * 1000 + (1 << 20));
  CHECK(b.executor.take_pipe_use()[kFp32Pipe].requests == 1);
}

TEST_CASE(
    "A CTA of fewer warps than the SM has schedulers gets its load at its warps' rate, the rest "
    "at the port's",
    "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  c.sm.issue_per_cycle = 4;
  // A quarter of the port per warp: four warps fill it, one warp moves a quarter of it.
  c.sm.warp_load_bandwidth = Bandwidth{c.xbar.port_bandwidth.bytes_per_second / 4};
  const Box box{4096, 4, 512, 1024};  // 2 KiB in 16 lines
  MemoryPath fresh(c, one_tensor_workload(1 << 20));
  TrafficCounters scratch;
  fresh.set_kernel_counters(&scratch);
  const Tick issue = c.efficiency.op_overhead;
  const Arrival a = fresh.load(1, box, issue);  // the port's pace
  auto done_with = [&](std::uint32_t threads) {
    Bench b(c, threads);
    b.executor.ops(1) = {load(box.base, box.rows, box.row_bytes, box.pitch, 3), wait(3)};
    b.executor.start(1, 1, 0, 0, 0);
    b.run();
    REQUIRE(b.log.done.size() == 1);
    return std::pair{b.log.done[0].second, b.executor.time_of(1).latency};
  };
  // One warp: the box's bytes at a quarter of the port take 4x the port's time; the difference
  // (3x the port's time for them) comes after the port's pace, and it is latency.
  const double port_ps =
      static_cast<double>(box.bytes()) * 1e12 / c.xbar.port_bandwidth.bytes_per_second;
  const auto extra = static_cast<Tick>(std::ceil(3 * port_ps));
  const auto [one_warp, one_warp_latency] = done_with(32);
  CHECK(one_warp == std::max(a.ready, a.unloaded + extra));
  CHECK(one_warp > a.ready);
  CHECK(one_warp_latency == a.unloaded + extra - 2 * c.efficiency.op_overhead);
  // Two warps: half the port, one port time more. Four or more: the port's pace alone.
  CHECK(done_with(64).first ==
        std::max(a.ready, a.unloaded + static_cast<Tick>(std::ceil(port_ps))));
  CHECK(done_with(128).first == a.ready);
  CHECK(done_with(1024).first == a.ready);
  c.sm.warp_load_bandwidth = Bandwidth{0};  // no limit
  CHECK(done_with(32).first == a.ready);
}

TEST_CASE(
    "A wait blocks until its tag's loads arrive, split into latency and its own lines' queueing",
    "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  const Box box{4096, 4, 512, 1024};  // 4 rows of 4 lines each
  // What the memory path answers for that load on an idle chip, issued when the op issues.
  MemoryPath fresh(c, one_tensor_workload(1 << 20));
  TrafficCounters scratch;
  fresh.set_kernel_counters(&scratch);
  const Tick issue = c.efficiency.op_overhead;
  const Arrival a = fresh.load(1, box, issue);

  Bench b(c);
  b.executor.ops(1) = {load(box.base, box.rows, box.row_bytes, box.pitch, 3), wait(3)};
  b.executor.start(1, 1, 0, 0, 0);
  b.run();
  REQUIRE(b.log.done.size() == 1);
  CHECK(b.log.done[0].second == a.ready);
  const Tick wait_issue = 2 * c.efficiency.op_overhead;
  CHECK(b.executor.time_of(1).compute == wait_issue);
  // The 16 lines queue behind one another at the SM port: that part of the wait is bandwidth.
  CHECK(b.executor.time_of(1).latency == a.unloaded - wait_issue);
  CHECK(b.executor.time_of(1).bandwidth == a.ready - a.unloaded);
  CHECK(a.ready > a.unloaded);
  CHECK(b.counters.l2_read_bytes == box.bytes());
}

TEST_CASE(
    "An asynchronous compute op books its pipe and lets the CTA go on; a wait on its tag, and the "
    "CTA's end, wait for it",
    "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  Bench probe(c);
  const Tick tensor = probe.sms[0].pipe_ticks(kTensorPipe, 1 << 22);
  const Tick fp32 = probe.sms[0].pipe_ticks(kFp32Pipe, 256 * 100);
  REQUIRE(tensor > fp32 + 2 * c.efficiency.op_overhead);
  Op async = compute(ComputeUnit::tensor, 1 << 22);
  async.tag = 9;
  const Tick o = c.efficiency.op_overhead;
  {
    // The fp32 op runs while the tensor op does; the wait ends at the tensor op's end, and the
    // CTA with it: compute time all of it.
    Bench b(c);
    b.executor.ops(0) = {async, compute(ComputeUnit::fp32, 256 * 100), wait(9)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    const Tick done = o + tensor;  // the tensor op starts when it issues, one overhead in
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, done}});
    CHECK(b.executor.time_of(0).compute == done);
    CHECK(b.executor.time_of(0).latency == 0);
    CHECK(b.counters.flops == (1 << 22) + 256 * 100);
  }
  {
    // Without a wait the CTA still ends when the op does; a synchronous op after the wait starts
    // only then.
    Bench b(c);
    b.executor.ops(0) = {async};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, o + tensor}});
    Bench b2(c);
    b2.executor.ops(0) = {async, wait(9), compute(ComputeUnit::fp32, 256 * 100)};
    b2.executor.start(0, 0, 0, 0, 0);
    b2.run();
    REQUIRE(b2.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, o + tensor + o + fp32}});
  }
  {
    // Two asynchronous ops on one pipe queue one after the other (the pipe is the SM's); the
    // wait on the first tag ends with the first.
    Bench b(c);
    Op second = async;
    second.tag = 10;
    b.executor.ops(0) = {async, second, wait(9), compute(ComputeUnit::fp32, 256 * 100), wait(10)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    const Tick first_end = o + tensor, second_end = first_end + tensor;
    // The fp32 op after the first wait: its overhead, then its pipe time, well before the second.
    REQUIRE(first_end + o + fp32 < second_end);
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, second_end}});
  }
}

TEST_CASE(
    "A latency op takes its cycles at the SM clock on no pipe; asynchronous, it only delays "
    "a wait on its tag",
    "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  const Tick o = c.efficiency.op_overhead;
  const Tick cycles = c.sm.clock.cycles_to_ticks(1000);
  Op latency = compute(ComputeUnit::latency, 1000);
  {
    Bench b(c);
    b.executor.ops(0) = {latency, compute(ComputeUnit::fp32, 256 * 100)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    const Tick fp32 = b.sms[0].pipe_ticks(kFp32Pipe, 256 * 100);
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, o + cycles + o + fp32}});
    CHECK(b.counters.flops == 256 * 100);  // cycles are no FLOPs
    CHECK(b.executor.take_pipe_use()[kFp32Pipe].requests == 1);
  }
  {
    // Asynchronous beside an fp32 op under the same tag: the wait ends with the longer of the two.
    Bench b(c);
    latency.tag = 4;
    Op fp32 = compute(ComputeUnit::fp32, 256 * 100);
    fp32.tag = 4;
    b.executor.ops(0) = {latency, fp32, wait(4)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    const Tick fp32_end = 2 * o + b.sms[0].pipe_ticks(kFp32Pipe, 256 * 100);
    REQUIRE(b.log.done ==
            std::vector<std::pair<std::uint32_t, Tick>>{{0, std::max(o + cycles, fp32_end)}});
  }
}

TEST_CASE(
    "An asynchronous smem op books the shared-memory pipe and lets the CTA go on; a wait on its "
    "tag waits for it",
    "[executor]") {
  HardwareConfig c = small_config();
  c.efficiency.op_overhead = 5'000;
  const Tick o = c.efficiency.op_overhead;
  Bench probe(c);
  const Tick smem = probe.sms[0].pipe_ticks(kSmemPipe, 1 << 20);
  const Tick fp32 = probe.sms[0].pipe_ticks(kFp32Pipe, 256 * 100);
  REQUIRE(smem > fp32 + 2 * o);
  Op bytes = smem_op(1 << 20);
  {
    // Synchronous (tag 0): the fp32 op waits for it.
    Bench b(c);
    b.executor.ops(0) = {bytes, compute(ComputeUnit::fp32, 256 * 100)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, o + smem + o + fp32}});
  }
  {
    // Asynchronous: the fp32 op runs beside it; the wait on its tag ends with it.
    Bench b(c);
    bytes.tag = 3;
    b.executor.ops(0) = {bytes, compute(ComputeUnit::fp32, 256 * 100), wait(3)};
    b.executor.start(0, 0, 0, 0, 0);
    b.run();
    REQUIRE(b.log.done == std::vector<std::pair<std::uint32_t, Tick>>{{0, o + smem}});
    CHECK(b.counters.smem_bytes == 1 << 20);
    CHECK(b.executor.take_pipe_use()[kSmemPipe].requests == 1);
  }
}

TEST_CASE("A kernel frees op lists it does not use and those grown past its share", "[executor]") {
  Bench b(small_config());
  const std::uint32_t slots = b.config.sm.count;
  REQUIRE(slots >= 2);
  // An earlier kernel left 1000 ops' room in slot 0 and 10 in slot 1.
  b.executor.ops(0).reserve(1000);
  b.executor.ops(1).reserve(10);
  // The next kernel allows 100 ops per CTA and uses one slot: slot 0's room is over its share,
  // slot 1 is not used; both are freed.
  b.executor.begin_kernel(1, 128, b.counters, 100);
  CHECK(b.executor.ops(0).capacity() == 0);
  CHECK(b.executor.ops(1).capacity() == 0);
  // Room within the share in a used slot is kept for the next CTA.
  b.executor.ops(0).reserve(50);
  const std::size_t kept = b.executor.ops(0).capacity();
  b.executor.begin_kernel(1, 128, b.counters, 100);
  CHECK(b.executor.ops(0).capacity() == kept);
}
