#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/support/cli.h"

namespace {

using memwall::test::run_memwall;
using memwall::test::slurp;
using Result = memwall::test::CliResult;

std::string tmp(const std::string& name) { return memwall::test::temp_path("sweep_cli", name); }

const std::string kSweep =
    "sweep --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 256..1024x2 "
    "--head-dim 16,32 --set \"l2.size=512 KiB,1 MiB\"";

}  // namespace

TEST_CASE("memwall sweep and io document every option with examples", "[cli][sweep]") {
  for (const char* command : {"sweep --help", "sweep merge --help", "io --help"}) {
    const Result r = run_memwall(command);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("Examples:"));
  }
  const Result sweep = run_memwall("sweep --help");
  for (const char* flag : {"--seq", "--head-dim", "--set", "--shard", "--resume", "-j,--threads"}) {
    CHECK_THAT(sweep.out, Catch::Contains(flag));
  }
  const Result io = run_memwall("io --help");
  for (const char* flag : {"--sram", "--ideal", "--measured", "--json"}) {
    CHECK_THAT(io.out, Catch::Contains(flag));
  }
}

TEST_CASE("A sweep's CSV does not depend on the thread count, and shards merge into it",
          "[cli][sweep]") {
  const std::string one = tmp("j1.csv"), two = tmp("j2.csv"), merged = tmp("merged.csv");
  REQUIRE(run_memwall(kSweep + " -j 1 -o " + one).code == 0);
  REQUIRE(run_memwall(kSweep + " -j 2 -o " + two).code == 0);
  const std::string text = slurp(one);
  CHECK(text == slurp(two));
  // 3 seq × 2 head_dim × 2 l2.size points, plus the header.
  CHECK(std::count(text.begin(), text.end(), '\n') == 3 * 2 * 2 + 1);
  CHECK_THAT(text, Catch::StartsWith("workload,seq,head_dim,l2.size,"));
  CHECK_THAT(text, Catch::Contains("kernels.flash2_fwd.dram_read_bytes"));

  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string shard = tmp("shard" + std::to_string(i) + ".csv");
    REQUIRE(run_memwall(kSweep + " --shard " + std::to_string(i) + "/2 -o " + shard).code == 0);
    shards += " " + shard;
  }
  REQUIRE(run_memwall("sweep merge" + shards + " -o " + merged).code == 0);
  CHECK(slurp(merged) == text);

  const Result missing = run_memwall("sweep merge " + tmp("shard0.csv") + " -o " + merged);
  CHECK(missing.code == 2);
  CHECK_THAT(missing.out, Catch::Contains("point 1 of 12 is in none of the shard files"));
  for (const auto& f : {one, two, merged, tmp("shard0.csv"), tmp("shard1.csv")})
    std::remove(f.c_str());
}

TEST_CASE("A switch is a sweep axis (--causal alone, or 0,1), and every row lists every parameter",
          "[cli][sweep][variants]") {
  const std::string both = tmp("causal.csv"), on = tmp("causal_on.csv");
  const std::string base =
      "sweep --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 256 "
      "--head-dim 16 --heads 2,4 --kv-heads 2";
  REQUIRE(run_memwall(base + " --causal 0,1 -o " + both).code == 0);
  const std::string text = slurp(both);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2 * 2 + 1);
  CHECK_THAT(text, Catch::StartsWith("workload,heads,seq,head_dim,kv_heads,causal,"));
  // kv_heads equals heads at one point and not at the other; both rows carry it, and causal.
  for (const char* column : {"workload.params.kv_heads", "workload.params.seq_kv",
                             "workload.params.causal", "workload.params.splits"}) {
    CHECK_THAT(text, Catch::Contains(column));
  }
  REQUIRE(run_memwall(base + " --causal -o " + on).code == 0);
  const std::string causal_only = slurp(on);
  CHECK(std::count(causal_only.begin(), causal_only.end(), '\n') == 2 + 1);
  CHECK(causal_only.find(",1,") != std::string::npos);
  const Result bad = run_memwall(base + " --causal 2 -o " + on);
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("causal: expected 0 (off) or 1 (on), got \"2\""));
  for (const auto& f : {both, on}) std::remove(f.c_str());
}

TEST_CASE("Bad sweep input is one clear error with exit code 2 and no output file",
          "[cli][sweep]") {
  const std::string out = tmp("bad.csv");
  const Result range = run_memwall(
      "sweep --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 1024..512x2 -o " +
      out);
  CHECK(range.code == 2);
  CHECK_THAT(range.out,
             Catch::Contains("--seq: bad range \"1024..512x2\": the end is below the start"));
  const Result key = run_memwall(
      "sweep --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 256 "
      "--set l2.sise=1MiB -o " +
      out);
  CHECK(key.code == 2);
  CHECK_THAT(key.out, Catch::Contains("did you mean \"l2.size\""));
  const Result shard = run_memwall(kSweep + " --shard 2/2 -o " + out);
  CHECK(shard.code == 2);
  CHECK_THAT(shard.out, Catch::Contains("--shard"));
  CHECK_FALSE(std::ifstream(out).good());
  CHECK_FALSE(std::ifstream(out + ".partial").good());
}

TEST_CASE("memwall io prints the fits and writes points and fits as JSON", "[cli][io]") {
  const std::string json = tmp("io.json");
  const Result r = run_memwall(
      "io --config configs/hypothetical/teaching-gpu.yaml --workload flash1 --head-dim 16 "
      "--seq 1024,2048 --sram \"2 KiB\" --ideal --json " +
      json);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("sim_dram_bytes"));
  const std::string text = slurp(json);
  CHECK_THAT(text, Catch::Contains("\"points\": ["));
  CHECK_THAT(text, Catch::Contains("\"over\": \"seq\", \"metric\": \"sim_dram_bytes\""));
  CHECK_THAT(text, Catch::Contains("\"sim_equals_closed_form\": true"));
  std::remove(json.c_str());
  const Result bad =
      run_memwall("io --config configs/hypothetical/teaching-gpu.yaml --workload flash9");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("unknown workload"));
}
