// Same inputs, same bytes: the run JSON, the timeline, the sweep CSV at -j 1 and -j 2 and the
// trace file are byte-identical across repeated runs, while another process keeps a core busy
// (so thread interleavings and timings differ from run to run).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/reliability/process.h"

using namespace memwall::reliability;

namespace {

/// Runs memwall with `args` (each "{OUT}" replaced by `out`) in a fresh directory and returns
/// the bytes of `out` there.
std::string output_of(std::vector<std::string> args, const std::string& out) {
  const TempDir dir("det"), logs("det-logs");
  for (std::string& a : args) {
    if (a == "{OUT}") a = dir / out;
  }
  const Result r = run_memwall(args, logs.path());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string bytes = slurp(dir.path() / out);
  REQUIRE(!bytes.empty());
  return bytes;
}

}  // namespace

TEST_CASE("Repeated runs under load give byte-identical outputs", "[determinism]") {
  const BusyLoop busy;  // the other core is busy throughout

  SECTION("run JSON of naive and flash2 side by side") {
    const std::vector<std::string> args = {
        "run",        "-c", "h200",    "--workload", "naive,flash2", "--seq", "1024",
        "--head-dim", "64", "--heads", "4",          "--json",       "{OUT}"};
    const std::string first = output_of(args, "r.json");
    CHECK(output_of(args, "r.json") == first);
    CHECK(output_of(args, "r.json") == first);
  }
  SECTION("timeline") {
    const std::vector<std::string> args = {"run",   "-c",  "h200",       "--workload", "flash2",
                                           "--seq", "512", "--timeline", "{OUT}"};
    const std::string first = output_of(args, "t.json");
    CHECK(output_of(args, "t.json") == first);
  }
  SECTION("trace file") {
    const std::vector<std::string> args = {"trace",   "--workload", "naive", "--seq", "512",
                                           "--heads", "2",          "-o",    "{OUT}"};
    const std::string first = output_of(args, "n.mwt");
    CHECK(output_of(args, "n.mwt") == first);
  }
  SECTION("sweep CSV at -j 1 and -j 2") {
    const std::vector<std::string> base = {"sweep",
                                           "-c",
                                           "h200",
                                           "--workload",
                                           "naive",
                                           "--seq",
                                           "256..4096x2",
                                           "--heads",
                                           "1,2",
                                           "--set",
                                           "l2.size=10 MiB,60 MiB",
                                           "-o",
                                           "{OUT}"};
    auto with_j = [&](const char* j) {
      std::vector<std::string> a = base;
      a.push_back("-j");
      a.push_back(j);
      return a;
    };
    const std::string serial = output_of(with_j("1"), "s.csv");
    CHECK(output_of(with_j("2"), "s.csv") == serial);
    CHECK(output_of(with_j("2"), "s.csv") == serial);
    CHECK(output_of(with_j("1"), "s.csv") == serial);
  }
}
