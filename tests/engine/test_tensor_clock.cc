// sm.tensor_clock_scope: whether only the tensor pipe runs at sm.tensor_clock (`pipe`) or the
// whole SM, from its first tensor or mma_sync op of a kernel to the kernel's end (`sm`).
// Expectations from the test chip's numbers (tests/support/engine.h): 1 GHz SM clock, 1024
// tensor FLOP and 4 warp instructions per cycle; the tensor clock here is 0.5 GHz.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

constexpr std::uint64_t kInstructions = 400'000;  // 100 us at 4 per cycle and 1 GHz
constexpr std::uint64_t kFlops = 1'024'000;  // 1000 cycles of the tensor pipe

HardwareConfig chip(TensorClockScope scope) {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  c.sm.issue_per_cycle = 4;
  c.sm.tensor_clock = Frequency{0.5e9};
  c.sm.tensor_clock_scope = scope;
  return c;
}

Tick at(double cycles, double hz) { return static_cast<Tick>(std::llround(cycles / hz * 1e12)); }

/// Three kernels of one CTA each: warp instructions alone; tensor work, then warp instructions;
/// warp instructions alone again.
std::vector<TestKernel> kernels() {
  return {TestKernel{kernel_info("issue"), {{compute(ComputeUnit::issue, kInstructions)}}},
          TestKernel{
              kernel_info("mma"),
              {{compute(ComputeUnit::tensor, kFlops), compute(ComputeUnit::issue, kInstructions)}}},
          TestKernel{kernel_info("issue again"), {{compute(ComputeUnit::issue, kInstructions)}}}};
}

RunResult run(const HardwareConfig& c) {
  VectorTraceSource source(one_tensor_workload(0), kernels());
  return simulate(c, source, SimOptions{});
}

}  // namespace

TEST_CASE(
    "sm.tensor_clock_scope pipe: tensor ops run at sm.tensor_clock, the SM's other pipes at "
    "sm.clock",
    "[run][compute][tensor_clock]") {
  const HardwareConfig c = chip(TensorClockScope::kPipe);
  const RunResult r = run(c);
  REQUIRE(r.kernels.size() == 3);
  const Tick issue = at(static_cast<double>(kInstructions) / 4, c.sm.clock.hertz);
  const Tick tensor = at(static_cast<double>(kFlops) / 1024, c.sm.tensor_clock.hertz);
  CHECK(r.kernels[0].duration() == issue);
  CHECK(r.kernels[1].duration() == tensor + issue);
  CHECK(r.kernels[2].duration() == issue);
}

TEST_CASE(
    "sm.tensor_clock_scope sm: after a kernel's first tensor op its SM's other pipes run at "
    "sm.tensor_clock too, and the next kernel starts at sm.clock again",
    "[run][compute][tensor_clock]") {
  const HardwareConfig c = chip(TensorClockScope::kSm);
  const RunResult r = run(c);
  REQUIRE(r.kernels.size() == 3);
  const double cycles = static_cast<double>(kInstructions) / 4;
  const Tick tensor = at(static_cast<double>(kFlops) / 1024, c.sm.tensor_clock.hertz);
  CHECK(r.kernels[0].duration() == at(cycles, c.sm.clock.hertz));
  CHECK(r.kernels[1].duration() == tensor + at(cycles, c.sm.tensor_clock.hertz));
  CHECK(r.kernels[2].duration() == at(cycles, c.sm.clock.hertz));
}

TEST_CASE(
    "sm.tensor_clock_scope sm: a latency op's cycles after the kernel's tensor work pass at "
    "sm.tensor_clock",
    "[run][compute][tensor_clock]") {
  constexpr std::uint64_t kCycles = 50'000;
  for (const TensorClockScope scope : {TensorClockScope::kPipe, TensorClockScope::kSm}) {
    const HardwareConfig c = chip(scope);
    VectorTraceSource source(one_tensor_workload(0),
                             {TestKernel{kernel_info("mma then latency"),
                                         {{compute(ComputeUnit::tensor, kFlops),
                                           compute(ComputeUnit::latency, kCycles)}}}});
    const RunResult r = simulate(c, source, SimOptions{});
    const double hz = scope == TensorClockScope::kSm ? c.sm.tensor_clock.hertz : c.sm.clock.hertz;
    CHECK(r.kernels.at(0).duration() ==
          at(static_cast<double>(kFlops) / 1024, c.sm.tensor_clock.hertz) +
              at(static_cast<double>(kCycles), hz));
  }
}

TEST_CASE(
    "sm.tensor_clock_scope: a config key, `pipe` by default, `sm` on the H200 and H100 presets; "
    "any other value is refused",
    "[config][tensor_clock]") {
  CHECK(load_config("a100-80gb").sm.tensor_clock_scope == TensorClockScope::kPipe);
  CHECK(load_config("h100-sxm").sm.tensor_clock_scope == TensorClockScope::kSm);
  CHECK(load_config("h200").sm.tensor_clock_scope == TensorClockScope::kSm);
  CHECK(load_config("h200", {"sm.tensor_clock_scope=pipe"}).sm.tensor_clock_scope ==
        TensorClockScope::kPipe);
  CHECK_THROWS_WITH(load_config("h200", {"sm.tensor_clock_scope=chip"}),
                    Catch::Contains("sm.tensor_clock_scope") && Catch::Contains("`pipe`"));
}
