// `--allow-spill` and the too-large-tiles error from the command line: exit codes, the message,
// the spill tensor in the reports, and `memwall verify` with spilling.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "tests/support/cli.h"

namespace {

using memwall::test::run_memwall;
using memwall::test::slurp;
using Result = memwall::test::CliResult;

std::string tmp(const std::string& name) { return memwall::test::temp_path("spill_cli", name); }

/// The report without its first line (the title, which lists the parameters).
std::string body(const std::string& report) { return report.substr(report.find('\n') + 1); }

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("memwall run rejects flash tiles over smem_per_block in one line saying what fits",
          "[cli][spill]") {
  // H200: smem_per_block 227 KiB = 232448 B. d = 128, fp16: 256 B per row, 908 rows fit.
  const Result f2 = run_memwall(
      "run --config h200 --workload flash2 --head-dim 128 --block-q 256 --block-kv 256");
  CHECK(f2.code == 2);
  CHECK(lines(f2.out) == 1);
  CHECK_THAT(f2.out, Catch::Contains(std::to_string((256 + 2 * 2 * 256) * 256) + " B"));
  CHECK_THAT(f2.out, Catch::Contains("232448 B, sm.smem_per_block of"));
  CHECK_THAT(f2.out, Catch::Contains("block_kv <= " + std::to_string((908 - 256) / 4) +
                                     " fits at block_q 256"));
  CHECK_THAT(f2.out, Catch::Contains("--allow-spill"));

  const Result f1 = run_memwall(
      "run --config h200 --workload flash1 --seq 2048 --head-dim 128 --block-q 512 --block-kv 512");
  CHECK(f1.code == 2);
  CHECK(lines(f1.out) == 1);
  CHECK_THAT(f1.out, Catch::Contains("block_kv <= " + std::to_string((908 - 512) / 2) +
                                     " fits at block_q 512"));
}

TEST_CASE("memwall run --allow-spill shows the spill traffic and a longer time", "[cli][spill]") {
  const std::string shape =
      "run --config teaching-gpu --workload flash2 --seq 1024 --heads 4 --head-dim 64 ";
  const std::string fit_json = tmp("fit.json"), spill_json = tmp("spill.json");
  // 64 KiB per block: (128 + 2·2·32)·128 B = 32 KiB fits; (128 + 2·2·128)·128 B = 80 KiB does not.
  const Result fit = run_memwall(shape + "--block-q 128 --block-kv 32 --json " + fit_json);
  const Result fit_flag =
      run_memwall(shape + "--block-q 128 --block-kv 32 --allow-spill --json " + tmp("fit2.json"));
  REQUIRE(fit.code == 0);
  REQUIRE(fit_flag.code == 0);
  CHECK(body(fit.out) == body(fit_flag.out));  // fitting tiles: nothing changes but the title
  CHECK_THAT(fit.out, !Catch::Contains("spill"));

  const Result rejected = run_memwall(shape + "--block-q 128 --block-kv 128");
  CHECK(rejected.code == 2);
  const Result spill =
      run_memwall(shape + "--block-q 128 --block-kv 128 --allow-spill --json " + spill_json);
  REQUIRE(spill.code == 0);
  CHECK_THAT(spill.out, Catch::Contains("allow_spill=1 smem_limit_bytes=65536"));
  CHECK_THAT(spill.out, Catch::Contains("  spill "));
  const std::string j = slurp(spill_json);
  CHECK_THAT(j, Catch::Contains("\"spill\": {"));
  // Longer simulated time: compare the time_s fields.
  const auto time_of = [](const std::string& json) {
    const std::size_t at = json.find("\"time_s\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(json.substr(at + 10));
  };
  CHECK(time_of(j) > time_of(slurp(fit_json)));
  for (const std::string& f : {fit_json, spill_json, tmp("fit2.json")}) std::remove(f.c_str());
}

TEST_CASE("memwall trace --counts with --allow-spill matches the closed form", "[cli][spill]") {
  const std::string json = tmp("counts.json");
  const Result r = run_memwall(
      "trace --config teaching-gpu --workload flash1 --seq 300 --head-dim 64 --block-q 128 "
      "--block-kv 256 --allow-spill --counts --json " +
      json);
  REQUIRE(r.code == 0);
  const std::string j = slurp(json);
  CHECK_THAT(j, Catch::Contains("\"spill\": {\"read_bytes\""));
  CHECK_THAT(j, Catch::Contains("\"matches_closed_form\": true"));
  std::remove(json.c_str());
}

TEST_CASE("memwall verify --allow-spill passes: spilled values are the same values",
          "[cli][spill]") {
  for (const char* args :
       {"verify --workload flash2 --seq 500 --head-dim 64 --block-q 128 --block-kv 128 "
        "--allow-spill --sram 24KiB",
        "verify --workload flash1 --seq 300 --head-dim 64 --block-q 128 --block-kv 128 "
        "--allow-spill --config teaching-gpu --sram 20KiB",
        "verify --workload flash2 --seq 200 --head-dim 32 --block-q 64 --block-kv 64 "
        "--allow-spill --sram 100B"}) {
    const Result r = run_memwall(args);
    INFO(args << "\n" << r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("allow_spill=1"));
    CHECK_THAT(r.out, Catch::Contains("PASS"));
  }
}

TEST_CASE("--allow-spill is documented in --help", "[cli][spill]") {
  for (const char* command : {"run --help", "trace --help", "verify --help"}) {
    const Result r = run_memwall(command);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("--allow-spill"));
  }
}
