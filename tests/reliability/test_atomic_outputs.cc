// Every output file (run JSON and timeline, trace, trace counts, sweep CSV, merged CSV, io JSON,
// config reference and DOT, traffic and roofline JSON) is written atomically: a run whose output
// cannot be put in place fails with a clear error and leaves neither a file nor a temporary.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/reliability/process.h"

using namespace memwall::reliability;
using namespace std::chrono_literals;

namespace {

/// One command writing one output file at `target` (with whatever else it needs in `dir`).
struct OutputCase {
  std::string what;
  std::function<std::vector<std::string>(const TempDir& dir, const std::string& target)> args;
};

std::vector<OutputCase> output_cases() {
  const std::vector<std::string> small = {"--workload", "flash2",     "--seq",
                                          "256",        "--head-dim", "64"};
  auto join = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  return {
      {"run --json",
       [=](const TempDir&, const std::string& t) {
         return join({"run", "-c", "h200", "--json", t}, small);
       }},
      {"run --timeline",
       [=](const TempDir&, const std::string& t) {
         return join({"run", "-c", "h200", "--timeline", t}, small);
       }},
      {"trace -o",
       [=](const TempDir&, const std::string& t) {
         return join({"trace", "-o", t}, small);
       }},
      {"trace --counts --json",
       [=](const TempDir&, const std::string& t) {
         return join({"trace", "--counts", "--json", t}, small);
       }},
      {"sweep -o",
       [=](const TempDir&, const std::string& t) {
         return std::vector<std::string>{"sweep",   "-c", "h200", "--workload", "flash2", "--seq",
                                         "256,512", "-o", t};
       }},
      {"sweep merge -o",
       [=](const TempDir& d, const std::string& t) {
         std::ofstream(d / "shard.csv") << "point,points,seq\n0,1,128\n";
         return std::vector<std::string>{"sweep", "merge", d / "shard.csv", "-o", t};
       }},
      {"io --json",
       [=](const TempDir&, const std::string& t) {
         return std::vector<std::string>{
             "io", "-c", "h200", "--workload", "flash2", "--seq", "256,512", "--json", t};
       }},
      {"config reference -o",
       [=](const TempDir&, const std::string& t) {
         return std::vector<std::string>{"config", "reference", "-o", t};
       }},
      {"config dot -o",
       [=](const TempDir&, const std::string& t) {
         return std::vector<std::string>{"config", "dot", "h200", "-o", t};
       }},
      {"traffic --json",
       [=](const TempDir&, const std::string& t) {
         return std::vector<std::string>{"traffic", "--seq",  "1024", "--head-dim",
                                         "64",      "--json", t};
       }},
  };
}

/// Entries of `dir` other than the inputs a case made itself and a sweep's resume journal
/// (TARGET.partial: kept on purpose when rows were finished, so --resume can reuse them).
std::vector<std::string> leftovers(const TempDir& dir) {
  std::vector<std::string> names;
  for (const std::string& name : dir.entries()) {
    if (name != "shard.csv" && name != "target" && name != "target.partial") names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("Each output is written in full when its target is writable", "[atomic]") {
  for (const OutputCase& c : output_cases()) {
    SECTION(c.what) {
      const TempDir dir("ok"), logs("ok-logs");
      const Result r = run_memwall(c.args(dir, dir / "out.file"), logs.path());
      INFO(r.err);
      CHECK(r.code == 0);
      CHECK(std::filesystem::file_size(dir.path() / "out.file") > 0);
      // Nothing but the output (and the case's own input).
      for (const std::string& name : leftovers(dir)) CHECK(name == "out.file");
    }
  }
}

TEST_CASE("An output into a missing directory fails clearly and creates nothing", "[atomic]") {
  for (const OutputCase& c : output_cases()) {
    SECTION(c.what) {
      const TempDir dir("missing"), logs("missing-logs");
      const Result r = run_memwall(c.args(dir, dir / "no/such/dir/out.file"), logs.path());
      INFO(r.err);
      CHECK(r.code != 0);
      CHECK(r.err.find("memwall: error: ") != std::string::npos);
      CHECK(r.err.find("no/such/dir/out.file") != std::string::npos);
      CHECK(leftovers(dir).empty());
    }
  }
}

TEST_CASE("An output whose target is a directory fails after writing and leaves no temporary",
          "[atomic]") {
  // The temporary beside the target can be created and filled; only the final rename fails.
  for (const OutputCase& c : output_cases()) {
    SECTION(c.what) {
      const TempDir dir("isdir"), logs("isdir-logs");
      std::filesystem::create_directory(dir.path() / "target");
      const Result r = run_memwall(c.args(dir, dir / "target"), logs.path());
      INFO(r.err);
      CHECK(r.code != 0);
      CHECK(r.err.find("memwall: error: ") != std::string::npos);
      CHECK(r.err.find("internal error") == std::string::npos);
      CHECK(leftovers(dir).empty());
      CHECK(std::filesystem::is_empty(dir.path() / "target"));
      if (std::filesystem::exists(dir.path() / "target.partial")) {
        CHECK(c.what == "sweep -o");
        CHECK(r.err.find("--resume") != std::string::npos);
      }
    }
  }
}
