// The CTA executor on its own: a CTA's ops on a small chip built in code, the events it schedules
// dispatched by hand, its finish time and time split computed from the config and from the memory
// path's own answer for the same access.
#include <catch2/catch.hpp>

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
  explicit Bench(const HardwareConfig& c)
      : config(c),
        memory(config, one_tensor_workload(1 << 20)),
        sms(config.sm.count, Sm(config)),
        executor(config, memory, sms, queue, nullptr, log) {
    memory.set_kernel_counters(&counters);
    executor.begin_kernel(config.sm.count, counters);
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
