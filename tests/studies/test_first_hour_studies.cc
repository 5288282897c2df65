// Findings of issue 18 ("a user's first hour, and a hostile input's") in the studies: the
// --resume sidecar and `sweep merge` (finding 4), the measured-CSV reader (finding 5).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "studies/measured_csv.h"
#include "studies/sweep_csv.h"
#include "studies/sweep_plan.h"
#include "studies/sweep_runner.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

using test::slurp;

std::string temp_path(const std::string& name) {
  return test::temp_path("first-hour-studies", name);
}

FlatRow fake_runner(const SweepPoint& p) {
  const std::uint64_t seq = std::stoull(p.at("seq"));
  return {{"dram_bytes", std::to_string(4 * seq * seq)}, {"time_s", std::to_string(seq) + "e-9"}};
}

SweepPlan small_plan() {
  return SweepPlan({{"seq", expand_values("64..512x2", "--seq")},
                    {"head_dim", expand_values("32,64", "--head-dim")}});
}

/// The lines of a file, each without its "\n".
std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const std::string& line : lines) out << line << "\n";
}

/// Runs `plan` under `identity` into `out`, failing at point 5: leaves a sidecar of rows 0..4.
void interrupted_sweep(const SweepPlan& plan, const std::string& identity, const std::string& out) {
  SweepOptions options;
  options.output = out;
  options.identity = identity;
  const PointRunner failing = [](const SweepPoint& p) -> FlatRow {
    if (p.index == 5) throw Error("simulated failure");
    return fake_runner(p);
  };
  CHECK_THROWS(run_sweep(plan, failing, options));
  REQUIRE(std::ifstream(partial_path(out)).good());
}

}  // namespace

TEST_CASE(
    "Finding 4: a --resume sidecar whose rows are damaged, foreign or misplaced is refused "
    "at its line before anything runs",
    "[first-hour][sweep]") {
  const SweepPlan plan = small_plan();
  const std::string out = temp_path("resume.csv");
  const std::string sidecar = partial_path(out);
  std::atomic<int> calls{0};
  const PointRunner counting = [&](const SweepPoint& p) {
    ++calls;
    return fake_runner(p);
  };
  SweepOptions options;
  options.output = out;
  options.identity = "sweep A";
  options.resume = true;

  interrupted_sweep(plan, "sweep A", out);
  std::vector<std::string> good = lines_of(sidecar);
  REQUIRE(good.size() == 6);  // the fingerprint, then points 0..4

  SECTION("a flipped digit in a figure") {
    std::vector<std::string> bad = good;
    const std::size_t digit = bad[3].find_first_of("123456789", bad[3].find("dram_bytes"));
    bad[3][digit] = bad[3][digit] == '9' ? '8' : static_cast<char>(bad[3][digit] + 1);
    write_lines(sidecar, bad);
    CHECK_THROWS_WITH(run_sweep(plan, counting, options),
                      Catch::Contains(sidecar + ":4: the row's checksum does not match"));
  }
  SECTION("rows of another sweep under this sweep's fingerprint") {
    const std::string other = temp_path("other.csv");
    interrupted_sweep(plan, "sweep B", other);
    std::vector<std::string> foreign = lines_of(partial_path(other));
    foreign[0] = good[0];
    write_lines(sidecar, foreign);
    CHECK_THROWS_WITH(run_sweep(plan, counting, options),
                      Catch::Contains(sidecar + ":2: the row's checksum does not match"));
    std::remove(partial_path(other).c_str());
  }
  SECTION("a row whose checksum is right but which claims another point's index") {
    // Forged with the sweep's own fingerprint: the parameters give it away.
    const std::string print =
        fingerprint(std::string("sweep A\n") + plan.describe() + "\nshard=0/1");
    std::vector<std::string> bad = good;
    std::string cells = bad[2].substr(0, bad[2].rfind(','));
    cells[0] = '3';  // point 1's row (seq=64, head_dim=64) now claims to be point 3 (seq=128, 64)
    bad[2] = cells + "," + fingerprint(print + "\n" + cells);
    write_lines(sidecar, bad);
    CHECK_THROWS_WITH(run_sweep(plan, counting, options),
                      Catch::Contains(sidecar + ":3: the row claims point 3 but does not hold its "
                                                "parameters (seq=128, head_dim=64)"));
  }
  SECTION("a row given twice") {
    std::vector<std::string> bad = good;
    bad.push_back(good[2]);
    write_lines(sidecar, bad);
    CHECK_THROWS_WITH(run_sweep(plan, counting, options),
                      Catch::Contains(":7: point 1 appears twice"));
  }
  SECTION("a row without any checksum (the format before it had one)") {
    std::vector<std::string> bad = good;
    bad[1] = "0,dram_bytes,16384,time_s,64e-9";
    write_lines(sidecar, bad);
    CHECK_THROWS_WITH(run_sweep(plan, counting, options),
                      Catch::Contains(":2: the row's checksum"));
  }
  CHECK(calls == 0);  // found before any point was simulated
  CHECK(!std::ifstream(out).good());

  SECTION("an intact sidecar resumes to the uninterrupted CSV") {
    SweepOptions whole = options;
    whole.resume = false;
    whole.output = temp_path("whole.csv");
    run_sweep(plan, fake_runner, whole);
    write_lines(sidecar, good);
    const SweepSummary s = run_sweep(plan, counting, options);
    CHECK(s.resumed == 5);
    CHECK(calls == 3);
    CHECK(slurp(out) == slurp(whole.output));
    std::remove(whole.output.c_str());
  }
  std::remove(sidecar.c_str());
  std::remove(out.c_str());
}

TEST_CASE("Finding 4: sweep merge refuses shards of sweeps that differ in what decides their rows",
          "[first-hour][sweep]") {
  const SweepPlan plan = small_plan();
  std::vector<std::string> shards;
  for (std::uint64_t i = 0; i < 2; ++i) {
    SweepOptions options;
    options.output = temp_path("merge" + std::to_string(i) + ".csv");
    options.shard = {i, 2};
    // The same config name, another resolved config: the identity differs.
    options.identity =
        i == 0 ? "config name: h200\nl2.size: 50 MiB" : "config name: h200\nl2.size: 25 MiB";
    run_sweep(plan, fake_runner, options);
    shards.push_back(options.output);
  }
  CHECK(read_csv(shards[0]).header[2] == "sweep");
  CHECK_THROWS_WITH(merge_shards(shards),
                    Catch::Contains(shards[1] + ":2: a row of another sweep") &&
                        Catch::Contains(shards[0] + ":2"));
  for (const auto& s : shards) std::remove(s.c_str());
}

TEST_CASE(
    "Finding 5: the measured-CSV reader accepts exact counts and finite times only, each "
    "problem named at its place",
    "[first-hour][measured]") {
  for (const char* good : {"0", "1638144", "18446744073709551615"}) {
    CHECK_NOTHROW(parse_measured_count(good, "m.csv:2: column dram_read_bytes"));
  }
  for (const char* bad : {"0x10", "1638144.7", "1e300", "18446744073709551616", "-1", "+5", " 5",
                          "5 ", "inf", "nan", "", "1,000"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_measured_count(bad, "m.csv:2: column dram_read_bytes"),
                      Catch::Contains("m.csv:2: column dram_read_bytes: expected a byte count"));
  }
  CHECK_THROWS_WITH(parse_measured_count(std::string("12\0"
                                                     "3",
                                                     4),
                                         "w"),
                    Catch::Contains("\"12\\x003\""));
  for (const char* good : {"0", "1.5e-06", "0.000123", "2E-3"}) {
    CHECK_NOTHROW(parse_measured_seconds(good, "m.csv:2: column time_s"));
  }
  for (const char* bad : {"inf", "nan", "-1e-6", "0x1p3", "1e999", "", "1.5 s", "+1"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_measured_seconds(bad, "m.csv:2: column time_s"),
                      Catch::Contains("m.csv:2: column time_s: expected a time in seconds"));
  }
}

TEST_CASE("Finding 5: a measured CSV with loose lines or headers is refused at its line",
          "[first-hour][measured]") {
  const std::string path = temp_path("m.csv");
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"seq,time_s\r512,1e-6\r", ":1: a carriage return inside the line"},
      {"seq,time_s\n512,1e-6\x01\n", ":2: a control character (byte 1)"},
      {std::string("seq,time_s\n5\0"
                   "12,1e-6\n",
                   22),
       ":2: a control character (byte 0)"},
      {"Seq,time_s\n512,1e-6\n", ":1: header cell 1 \"Seq\" is not an exact column name"},
      {" seq,time_s\n512,1e-6\n", "did you mean \"seq\"?"},
      {"seq,time_s,seq\n512,1e-6,512\n", ":1: column \"seq\" appears twice"},
      {"seq,,time_s\n512,,1e-6\n", ":1: header cell 2 is empty"},
      {"seq,time_s\n512\n", ":2: 1 cells, but the header has 2"},
      {"", "empty CSV file"},
  };
  for (const Case& c : cases) {
    INFO(c.expected);
    { std::ofstream(path, std::ios::binary | std::ios::trunc) << c.text; }
    CHECK_THROWS_WITH(read_measured_csv(path),
                      Catch::Contains(path) && Catch::Contains(c.expected));
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "seq,time_s\r\n512,1e-6\r\n";
  const CsvTable crlf = read_measured_csv(path);
  CHECK(crlf.rows.size() == 1);
  CHECK(crlf.rows[0][1] == "1e-6");
  CHECK_THROWS_WITH(measured_column(crlf, "kernel"),
                    Catch::Contains(path + ":1: missing column \"kernel\""));
  std::remove(path.c_str());
}

TEST_CASE(
    "Finding 11: a rerun without --resume over this sweep's sidecar asks for --resume or --fresh",
    "[first-hour][sweep]") {
  const SweepPlan plan = small_plan();
  const std::string out = temp_path("rerun.csv");
  interrupted_sweep(plan, "sweep A", out);
  const std::string kept = slurp(partial_path(out));
  SweepOptions options;
  options.output = out;
  options.identity = "sweep A";
  CHECK_THROWS_WITH(
      run_sweep(plan, fake_runner, options),
      Catch::Contains(partial_path(out) + " holds the finished rows of this same sweep") &&
          Catch::Contains("--resume to keep them, or --fresh to start over"));
  CHECK(slurp(partial_path(out)) == kept);  // nothing discarded
  options.fresh = true;
  CHECK(run_sweep(plan, fake_runner, options).resumed == 0);
  // A sidecar of another sweep is no one's finished work here: it is replaced without a question.
  interrupted_sweep(plan, "sweep B", out);
  options.fresh = false;
  CHECK(run_sweep(plan, fake_runner, options).ran == plan.count());
  std::remove(out.c_str());
}
