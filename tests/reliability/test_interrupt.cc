// Ctrl-C and SIGTERM during long runs: memwall stops within a second with a clear message and
// exit code 130, leaves no output file and no temporary behind, and an interrupted sweep resumed
// with --resume writes the same bytes as an uninterrupted one.

#include <signal.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/error.h"
#include "tests/reliability/process.h"

using namespace memwall;
using namespace memwall::reliability;
using namespace std::chrono_literals;

namespace {

/// A flash2 run that takes far longer than these tests wait (many seconds on one core).
std::vector<std::string> long_run(const TempDir& out) {
  return {"run",
          "-c",
          "h200",
          "--workload",
          "flash2",
          "--seq",
          "65536",
          "--head-dim",
          "128",
          "--heads",
          "32",
          "--json",
          out / "report.json",
          "--timeline",
          out / "timeline.json"};
}

/// Sends `sig` once the child catches it (memwall installs its handlers first thing) and has run
/// `after` more, then returns (exit code, seconds from the signal to the exit).
/// The child is killed (and -1 returned) if it has not exited `limit` after the signal.
std::pair<int, double> interrupt_after(Child& child, std::chrono::milliseconds after, int sig,
                                       std::chrono::milliseconds limit = 10s) {
  REQUIRE(child.wait_until_catching(sig, 30s));
  std::this_thread::sleep_for(after);
  const auto sent = Clock::now();
  child.signal(sig);
  const int code = child.wait(limit);
  return {code, std::chrono::duration<double>(Clock::now() - sent).count()};
}

}  // namespace

TEST_CASE("SIGINT stops a long memwall run within a second, exit 130, leaving no file",
          "[interrupt]") {
  const TempDir out("int-run"), logs("int-run-logs");
  Child child(long_run(out), logs.path());
  const auto [code, seconds] = interrupt_after(child, 700ms, SIGINT);
  CHECK(code == kExitInterrupted);
  CHECK(seconds < 1.0);
  CHECK(child.err().find("interrupted (SIGINT)") != std::string::npos);
  CHECK(out.entries().empty());
}

TEST_CASE(
    "Finding 9: SIGTERM stops a long memwall run as SIGINT does, but is named as SIGTERM and "
    "exits 143",
    "[interrupt][first-hour]") {
  const TempDir out("term-run"), logs("term-run-logs");
  Child child(long_run(out), logs.path());
  const auto [code, seconds] = interrupt_after(child, 500ms, SIGTERM);
  CHECK(code == 128 + SIGTERM);
  CHECK(seconds < 1.0);
  CHECK(child.err().find("interrupted (SIGTERM)") != std::string::npos);
  CHECK(out.entries().empty());
}

// Regressions: the trace writing path (`memwall trace -o`), `trace --counts` and `verify` never
// polled throw_if_interrupted, so SIGINT was ignored until the work was done (a trace write ran
// 22 s past the signal and exited 0 with a 1 GiB file). Their CTA loops now poll.
TEST_CASE("SIGINT stops a long trace write and leaves no trace file or temporary", "[interrupt]") {
  const TempDir out("int-trace"), logs("int-trace-logs");
  Child child({"trace", "--workload", "naive", "--seq", "65536", "--head-dim", "128", "--heads",
               "32", "-o", out / "naive.mwt"},
              logs.path());
  const auto [code, seconds] = interrupt_after(child, 700ms, SIGINT, 2s);
  CHECK(code == kExitInterrupted);
  CHECK(seconds < 1.0);
  CHECK(out.entries().empty());
}

TEST_CASE("SIGINT stops trace --counts of a long workload within a second", "[interrupt]") {
  const TempDir out("int-counts"), logs("int-counts-logs");
  Child child({"trace", "--counts", "--workload", "naive", "--seq", "65536", "--head-dim", "128",
               "--heads", "32", "--json", out / "counts.json"},
              logs.path());
  const auto [code, seconds] = interrupt_after(child, 700ms, SIGINT, 2s);
  CHECK(code == kExitInterrupted);
  CHECK(seconds < 1.0);
  CHECK(out.entries().empty());
}

// verify polls once per CTA, and a CTA's numerics grow with N (flash2: 4·Br·N·d FLOPs in double,
// about 50 ms at N = 8192 on one idle core, several times that on a loaded one or under the
// sanitizers). N = 2048 with 32 heads keeps the tensors as large (64 MiB each) and the run longer
// than the test waits, with CTAs a quarter as long, so that the second holds there too.
TEST_CASE("SIGINT stops verify of a large workload within a second", "[interrupt]") {
  const TempDir logs("int-verify-logs");
  Child child(
      {"verify", "--workload", "flash2", "--seq", "2048", "--head-dim", "128", "--heads", "32"},
      logs.path());
  const auto [code, seconds] = interrupt_after(child, 700ms, SIGINT, 2s);
  CHECK(code == kExitInterrupted);
  CHECK(seconds < 1.0);
}

TEST_CASE(
    "An interrupted sweep stops within a second and --resume then writes the same CSV "
    "bytes as an uninterrupted run",
    "[interrupt][sweep]") {
  const TempDir ref("sweep-ref"), out("sweep-int"), logs("sweep-logs");
  const std::vector<std::string> axes = {"sweep",  "-c",         "h200",         "--workload",
                                         "flash2", "--head-dim", "128",          "--heads",
                                         "4",      "--seq",      "1024..16384x2"};
  auto with_output = [&](const std::string& csv, std::vector<std::string> extra) {
    std::vector<std::string> args = axes;
    args.push_back("-o");
    args.push_back(csv);
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };

  // The uninterrupted reference, timed to choose when to interrupt.
  const Result whole = run_memwall(with_output(ref / "sweep.csv", {}), logs.path());
  REQUIRE(whole.code == 0);
  const std::string expected = slurp(ref.path() / "sweep.csv");
  REQUIRE(!expected.empty());

  Child child(with_output(out / "sweep.csv", {}), logs.path());
  const auto wait_ms = std::chrono::milliseconds(static_cast<long>(whole.seconds * 1000 / 2));
  const auto [code, seconds] = interrupt_after(child, wait_ms, SIGINT);
  if (code == 0) {
    WARN("the sweep finished before the signal arrived; the resume below starts from a done run");
  } else {
    CHECK(code == kExitInterrupted);
    CHECK(seconds < 1.0);
    CHECK(child.err().find("interrupted") != std::string::npos);
    // No CSV and no temporary: at most the sidecar that --resume reads.
    for (const std::string& name : out.entries()) CHECK(name == "sweep.csv.partial");
    // Finding 11: one message, and a true one, about what was kept.
    if (!out.entries().empty()) {
      CHECK(child.err().find("the finished rows are kept in") != std::string::npos);
      CHECK(child.err().find("no partial output was left behind") == std::string::npos);
    }
  }

  const Result resumed = run_memwall(with_output(out / "sweep.csv", {"--resume"}), logs.path());
  REQUIRE(resumed.code == 0);
  CHECK(slurp(out.path() / "sweep.csv") == expected);
  CHECK(out.entries() == std::vector<std::string>{"sweep.csv"});
}

TEST_CASE("SIGINT stops a parallel sweep (-j 2) with exit 130 and no CSV", "[interrupt][sweep]") {
  const TempDir out("sweep-j2"), logs("sweep-j2-logs");
  Child child({"sweep", "-c", "h200", "--workload", "flash2", "--head-dim", "128", "--heads", "32",
               "--seq", "32768,65536", "-j", "2", "-o", out / "sweep.csv"},
              logs.path());
  const auto [code, seconds] = interrupt_after(child, 700ms, SIGINT);
  CHECK(code == kExitInterrupted);
  CHECK(seconds < 1.0);
  for (const std::string& name : out.entries()) CHECK(name == "sweep.csv.partial");
}
