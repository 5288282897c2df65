// Findings of the first-hour walkthrough that need the executable: each one as a user met it, and
// the clear error or the behaviour it now gets.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;

using memwall::test::run_memwall;
using memwall::test::slurp;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("memwall-first-hour-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

}  // namespace

TEST_CASE("Finding 7: calibrate -o onto its own base config is refused and the base is untouched",
          "[first-hour][cli]") {
  const Scratch s;
  const std::string base = s / "h.yaml";
  fs::copy_file("configs/h200.yaml", base);
  const std::string before = slurp(base);
  const auto r = run_memwall("calibrate --config " + base +
                             " --measured traces/measured/h200-sweep.csv -o " + base);
  CHECK(r.code == 2);
  CHECK(r.out.find("-o " + base + " is the file --config reads") != std::string::npos);
  CHECK(slurp(base) == before);
}

TEST_CASE("Finding 7: io --json onto its --measured CSV is refused before anything runs",
          "[first-hour][cli]") {
  const Scratch s;
  const std::string csv = s / "m.csv";
  fs::copy_file("traces/measured/h200-sweep.csv", csv);
  const std::string before = slurp(csv);
  const auto r = run_memwall("io --config h200 --workload flash2 --seq 1024 --measured " + csv +
                             " --json " + csv);
  CHECK(r.code == 2);
  CHECK(r.out.find("is the file --measured reads") != std::string::npos);
  CHECK(slurp(csv) == before);
}

TEST_CASE("Finding 12: an unknown command or flag is named with the nearest known one, exit 2",
          "[first-hour][cli]") {
  struct Case {
    const char* args;
    const char* expected;
  };
  for (const Case c :
       {Case{"rn", "memwall: error: unknown command 'rn' for 'memwall' (did you mean run?)"},
        Case{"config lst", "unknown command 'lst' for 'memwall config' (did you mean list?)"},
        Case{"run --confg h200 --workload flash2",
             "unknown option '--confg' for 'memwall run' (did you mean --config?)"},
        Case{"run --config h200 --workload flash2 --seqq 1024",
             "unknown option '--seqq' for 'memwall run' (did you mean --seq?)"}}) {
    INFO(c.args);
    const auto r = run_memwall(c.args);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expected) != std::string::npos);
    CHECK(r.out.find("A subcommand is required") == std::string::npos);
  }
}

TEST_CASE("Finding 12: memwall help [COMMAND] prints that command's help", "[first-hour][cli]") {
  const auto top = run_memwall("help");
  CHECK(top.code == 0);
  CHECK(top.out == run_memwall("--help").out);
  const auto run = run_memwall("help run");
  CHECK(run.code == 0);
  CHECK(run.out == run_memwall("run --help").out);
  CHECK(run_memwall("help config show").out == run_memwall("config show --help").out);
}

TEST_CASE("Finding 13: a negative or non-integer count is refused as such, not wrapped around",
          "[first-hour][cli]") {
  struct Case {
    const char* args;
    const char* expected;
  };
  for (const Case c :
       {Case{"run --config h200 --workload flash2 --seq -5",
             "--seq: must be a positive integer, got -5"},
        Case{"run --config h200 --workload flash2 --seq 1e6",
             "--seq: must be a positive integer, got 1e6"},
        Case{"trace --workload naive --head-dim 2.5 --counts",
             "--head-dim: must be a positive integer, got 2.5"},
        Case{"ledger --row-len -16 --tile 4", "--row-len: must be a positive integer, got -16"},
        Case{"race --seq 64,-3", "--seq: must be a positive integer, got -3"},
        Case{"sweep --config h200 --workload flash2 --seq 1024 -j -2 -o /tmp/memwall-never.csv",
             "--threads: must be a positive integer, got -2"}}) {
    INFO(c.args);
    const auto r = run_memwall(c.args);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expected) != std::string::npos);
    CHECK(r.out.find("18446744073709551") == std::string::npos);
  }
  CHECK_FALSE(fs::exists("/tmp/memwall-never.csv"));
}

TEST_CASE("Finding 7: run, replay and sweep refuse an output that is an input or another output",
          "[first-hour][cli]") {
  const Scratch s;
  const std::string trace = s / "t.mwt";
  REQUIRE(run_memwall("trace --workload flash2 --seq 256 -o " + trace).code == 0);
  const std::string before = slurp(trace);
  const auto replay = run_memwall("replay --config h200 " + trace + " --json " + trace);
  CHECK(replay.code == 2);
  CHECK(replay.out.find("--json " + trace + " is the file trace reads") != std::string::npos);
  CHECK(slurp(trace) == before);

  const auto both = run_memwall("run --config h200 --workload flash2 --seq 256 --json " +
                                (s / "a.json") + " --timeline " + (s / "a.json"));
  CHECK(both.code == 2);
  CHECK(both.out.find("--timeline and --json both write") != std::string::npos);

  const std::string config = s / "c.yaml";
  fs::copy_file("configs/h200.yaml", config);
  const auto sweep =
      run_memwall("sweep --config " + config + " --workload flash2 --seq 256 -o " + config);
  CHECK(sweep.code == 2);
  CHECK(sweep.out.find("is the file --config reads") != std::string::npos);
  CHECK(slurp(config) == slurp("configs/h200.yaml"));
}

TEST_CASE("Finding 15: an unknown --what-if name is refused before anything is simulated",
          "[first-hour][cli]") {
  // A workload that takes minutes to simulate: the error must come first, at once.
  const auto r = run_memwall(
      "run --config h200 --workload flash2 --seq 262144 --heads 64 --what-if perfect-l3");
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown what-if \"perfect-l3\"") != std::string::npos);
  CHECK(r.out.find("on NVIDIA H200") == std::string::npos);  // no report was printed
}

TEST_CASE("Finding 23: a one-point sweep says \"1 point\", and -o with a non-CSV name is refused",
          "[first-hour][cli]") {
  const Scratch s;
  const auto one = run_memwall("sweep --config h200 --workload flash2 --seq 256 --head-dim 64 -o " +
                               s / "one.csv");
  CHECK(one.code == 0);
  CHECK(one.out.find("wrote " + s / "one.csv" + ": 1 point (0 kept") != std::string::npos);
  for (const char* name : {"r.json", "r.yaml", "r.html"}) {
    INFO(name);
    const auto r = run_memwall("sweep --config h200 --workload flash2 --seq 256 -o " + s / name);
    CHECK(r.code == 2);
    CHECK(r.out.find("a sweep writes CSV") != std::string::npos);
    CHECK(!fs::exists(s / name));
  }
}

TEST_CASE("Finding 23: a what-if table shows a zero saving as 0, not \"0 ps\"",
          "[first-hour][cli]") {
  const auto r = run_memwall(
      "run --config h200 --workload flash2 --seq 512 --head-dim 64 --heads 2 "
      "--what-if hbm-x2");
  REQUIRE(r.code == 0);
  const std::size_t base = r.out.find("\nbase ");
  REQUIRE(base != std::string::npos);
  const std::string line = r.out.substr(base + 1, r.out.find('\n', base + 1) - base - 1);
  CHECK(line.find("0 ps") == std::string::npos);
  CHECK(line.find(" 0 ") != std::string::npos);
}

TEST_CASE(
    "Finding 18: what the timeline's budget leaves out is counted in its metadata and said on "
    "stderr; --timeline-budget sets it",
    "[first-hour][cli]") {
  const Scratch s;
  const std::string path = s / "t.json";
  const std::string run =
      "run --config h200 --workload flash2 --seq 1024 --head-dim 64 --heads 4 --timeline " + path;
  const auto small = run_memwall(run + " --timeline-budget 100");
  REQUIRE(small.code == 0);
  CHECK(small.out.find("memwall: note: the timeline " + path + " lacks op-level events from") !=
        std::string::npos);
  CHECK(small.out.find("its budget of 100 (--timeline-budget) left out") != std::string::npos);
  const std::string text = slurp(path);
  CHECK(text.find("\"op_events_written\":100,") != std::string::npos);
  CHECK(text.find("\"op_events_dropped\":0,") == std::string::npos);
  CHECK(text.find("\"op_event_budget\":100,") != std::string::npos);
  // With room for everything, nothing is dropped and nothing is said.
  const auto whole = run_memwall(run);
  REQUIRE(whole.code == 0);
  CHECK(whole.out.find("memwall: note") == std::string::npos);
  CHECK(slurp(path).find("\"op_events_dropped\":0,") != std::string::npos);
  CHECK(run_memwall(run + " --timeline-budget -3").code == 2);
}

TEST_CASE(
    "Finding 15: an output path that cannot be written is refused before anything is simulated",
    "[first-hour][cli]") {
  const Scratch s;
  fs::create_directories(s / "adir");
  // A large run, so that a check made only after simulating would take seconds, not milliseconds.
  const std::string run =
      "run --config h200 --workload flash2 --seq 65536 --head-dim 128 --heads 32 ";
  struct Case {
    std::string args;
    std::string expected;
  };
  for (const Case& c :
       {Case{"--json /proc/x.json", "--json /proc/x.json: cannot create a file in /proc"},
        Case{"--json ''", "--json: an empty file name"},
        Case{"--timeline ''", "--timeline: an empty file name"},
        Case{"--json " + s / "adir", "--json " + s / "adir" + ": is a directory"},
        Case{"--json " + s / "missing/r.json", ": no such directory"},
        Case{"--what-if hbm-x2 --what-if-json " + s / "adir", ": is a directory"}}) {
    INFO(c.args);
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_memwall(run + c.args);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expected) != std::string::npos);
  }
  CHECK(fs::is_empty(s / "adir"));
  const auto sweep =
      run_memwall("sweep --config h200 --workload flash2 --seq 256 -o " + s / "adir");
  CHECK(sweep.code == 2);
  CHECK(sweep.out.find("is a directory") != std::string::npos);
}
