// Findings 8 and 10 of the first-hour walkthrough: two sweeps writing one output, and Ctrl-C
// arriving where nothing used to poll for it (a short replay's setup, between kernels, the
// calibration's long stretches).

#include <signal.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "models/model_source.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/file_lock.h"
#include "sim/core/interrupt.h"
#include "sim/hw/config_loader.h"
#include "studies/workload_config.h"
#include "tests/reliability/process.h"
#include "traces/interruptible_source.h"

using namespace memwall;
using namespace memwall::reliability;
using namespace std::chrono_literals;

namespace {

/// A sweep that takes many seconds on one core.
std::vector<std::string> long_sweep(const std::string& csv) {
  return {"sweep",
          "-c",
          "h200",
          "-w",
          "flash2",
          "--head-dim",
          "128",
          "--heads",
          "32",
          "--seq",
          "16384,32768,65536",
          "-o",
          csv};
}

/// Waits until `path` exists (at most `limit`).
bool wait_for_file(const std::string& path, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE(
    "Finding 8: a second sweep onto the output a running sweep writes is refused at once, "
    "naming the holder; the first is unharmed",
    "[first-hour][sweep]") {
  const TempDir out("lock-sweep"), logs("lock-first"), logs2("lock-second");
  const std::string csv = out / "s.csv";
  Child first(long_sweep(csv), logs.path());
  REQUIRE(wait_for_file(csv + ".lock", 10s));
  const Result second = run_memwall(long_sweep(csv), logs2.path(), 10s);
  CHECK(second.code == kExitBadInput);
  CHECK(second.seconds < 5.0);
  CHECK(second.err.find("memwall: error: -o " + csv + ": another memwall (pid ") !=
        std::string::npos);
  CHECK(second.err.find("is writing this output (it holds " + csv + ".lock)") != std::string::npos);
  // The first still runs; interrupted, it leaves at most its sidecar, and no lock file.
  first.signal(SIGINT);
  CHECK(first.wait(5s) == kExitInterrupted);
  for (const std::string& name : out.entries()) CHECK(name == "s.csv.partial");
}

TEST_CASE(
    "Finding 8: the output lock is released with its holder, and a lock file left by a killed "
    "process does not block the next writer",
    "[first-hour][sweep]") {
  const TempDir out("lock-unit");
  const std::string csv = out / "r.csv";
  {
    const OutputLock lock("-o", csv);
    CHECK(std::filesystem::exists(lock.path()));
  }
  CHECK(out.entries().empty());
  // A stale lock file (its process gone, so nobody holds the flock) is taken over.
  { std::ofstream(csv + ".lock") << "999999\n"; }
  {
    const OutputLock lock("-o", csv);
    CHECK(slurp(lock.path()) == std::to_string(::getpid()) + "\n");
  }
  CHECK(out.entries().empty());
  // Two sweeps one after the other onto one -o both succeed.
  const TempDir logs("lock-seq");
  const std::vector<std::string> small = {"sweep", "-c",         "h200", "-w", "flash2", "--seq",
                                          "128",   "--head-dim", "64",   "-o", csv};
  CHECK(run_memwall(small, logs.path()).code == 0);
  CHECK(run_memwall(small, logs.path()).code == 0);
  CHECK(out.entries() == std::vector<std::string>{"r.csv"});
}

TEST_CASE(
    "Finding 10: a simulation whose interrupt arrived during its setup stops at its first "
    "kernel, however few events it has",
    "[first-hour][interrupt]") {
  const HardwareConfig hw = load_config("h200");
  WorkloadParams p;
  p.workload = parse_workload_kind("flash2");
  p.seq = 128;
  p.head_dim = 64;
  // Far fewer than the engine's 4096 events between polls: only the source's poll can see it.
  REQUIRE_NOTHROW(simulate_workload(hw, p));
  request_interrupt();
  CHECK_THROWS_AS(simulate_workload(hw, p), Interrupted);
  clear_interrupt();
  // Between kernels: a source interrupted after its first kernel stops before the second.
  const std::unique_ptr<TraceSource> source = make_model_source(resolve_workload_options(
      [] {
        WorkloadParams n;
        n.workload = parse_workload_kind("naive");
        n.seq = 128;
        n.head_dim = 64;
        return n;
      }(),
      &hw));
  InterruptibleSource polled(*source);
  KernelInfo kernel;
  REQUIRE(polled.next_kernel(kernel));
  std::vector<Op> ops;
  REQUIRE(polled.next_cta(ops));
  request_interrupt();
  CHECK_THROWS_AS(polled.next_cta(ops), Interrupted);
  CHECK_THROWS_AS(polled.next_kernel(kernel), Interrupted);
  clear_interrupt();
}

TEST_CASE("Finding 10: a replay of a short trace sent SIGINT at once writes no report",
          "[first-hour][interrupt]") {
  const TempDir out("int-replay"), logs("int-replay-logs");
  REQUIRE(run_memwall(
              {"trace", "-w", "flash2", "--seq", "128", "--head-dim", "64", "-o", out / "t.mwt"},
              logs.path())
              .code == 0);
  // The signal is sent before the process can have finished its setup; whatever it had done, it
  // must not exit 0 with a report.
  Child child({"replay", "-c", "h200", out / "t.mwt", "--json", out / "r.json"}, logs.path());
  // Not before the exec: until then the child is a copy of this test, with its handlers.
  child.wait_until_execed(5s);
  child.signal(SIGINT);
  const int code = child.wait(10s);
  CHECK((code == kExitInterrupted || code == 128 + SIGINT));
  CHECK(!std::filesystem::exists(out / "r.json"));
}

TEST_CASE("Finding 10: calibrate stops within a second of SIGINT", "[first-hour][interrupt]") {
  // Early (reading and counting the measured cases) and later (the load check's counts, then the
  // fit's simulations).
  for (const auto after : {300ms, 2500ms}) {
    INFO("SIGINT after " << after.count() << " ms");
    const TempDir out("int-calibrate"), logs("int-calibrate-logs");
    Child child({"calibrate", "-c", "h200", "--measured", "traces/measured/h200-sweep.csv", "-o",
                 out / "cal.yaml", "-j", "2"},
                logs.path());
    // Counted from when memwall's handler is in place (a default SIGINT would also exit 130).
    REQUIRE(child.wait_until_catching(SIGINT, 30s));
    std::this_thread::sleep_for(after);
    const auto sent = Clock::now();
    child.signal(SIGINT);
    const int code = child.wait(10s);
    const double seconds = std::chrono::duration<double>(Clock::now() - sent).count();
    CHECK(code == kExitInterrupted);
    CHECK(seconds < 1.0);
    CHECK(out.entries().empty());
  }
}
