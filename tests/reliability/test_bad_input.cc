// Bad input is rejected with one clear error and exit 2 before anything is allocated or written:
// shapes whose byte counts overflow 64 bits, configs that would need absurd memory (a 1 TB L2, a
// billion SMs), degenerate shapes (N = 0, d = 0, zero-sized tiles), damaged CSV inputs. Every
// input the fuzzers ever failed on is here as a regression test.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/memory_budget.h"
#include "sim/core/units.h"
#include "sim/engine/cta_executor.h"
#include "sim/engine/engine.h"
#include "sim/hw/config_loader.h"
#include "studies/sweep_plan.h"
#include "tests/reliability/process.h"
#include "traces/op.h"
#include "traces/trace_writer.h"

using namespace memwall;
using namespace memwall::reliability;
using namespace std::chrono_literals;

namespace {

/// Runs memwall with `args` plus `--json OUT/report.json` where the command takes it, and checks
/// the contract of bad input: exit 2 within a few seconds, one "memwall: error:" line that
/// contains `reason`, and no file written.
void check_rejected(std::vector<std::string> args, const std::string& reason) {
  const TempDir out("bad"), logs("bad-logs");
  const bool run = args[0] == "run";
  if (run) {
    args.push_back("--json");
    args.push_back(out / "report.json");
  }
  INFO("memwall " << [&] {
    std::string line;
    for (const auto& a : args) line += a + " ";
    return line;
  }());
  const Result r = run_memwall(args, logs.path(), 20s);
  CHECK(r.code == kExitBadInput);
  CHECK(r.seconds < 5.0);
  CHECK(r.err.rfind("memwall: error: ", 0) == 0);
  CHECK(r.err.find(reason) != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(out.entries().empty());
}

std::vector<std::string> run_h200(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", "-c", "h200"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("Degenerate attention shapes (N = 0, d = 0, zero batch or heads) are rejected",
          "[bad-input]") {
  check_rejected(run_h200({"--seq", "0"}), "seq");
  check_rejected(run_h200({"--head-dim", "0"}), "head_dim");
  check_rejected(run_h200({"--batch", "0"}), "batch");
  check_rejected(run_h200({"--heads", "0"}), "heads");
  check_rejected(run_h200({"--workload", "naive", "--seq", "0"}), "seq");
  check_rejected({"trace", "--workload", "flash2", "--seq", "0", "-o", "/nonexistent/x.mwt"},
                 "seq");
}

TEST_CASE("Zero-sized tiles are rejected", "[bad-input]") {
  check_rejected(run_h200({"--block-q", "0"}), "block_q");
  check_rejected(run_h200({"--block-kv", "0"}), "block_kv");
  check_rejected(run_h200({"--stages", "0"}), "stages");
  check_rejected(run_h200({"--workload", "naive", "--block-k", "0"}), "block_k");
  check_rejected(run_h200({"--workload", "naive", "--softmax-rows", "0"}), "softmax_rows");
  check_rejected(run_h200({"--workload", "gemm", "--tile-m", "0"}), "tile_m");
  check_rejected(run_h200({"--workload", "gemm", "--tile-k", "0"}), "tile_k");
  check_rejected(run_h200({"--workload", "gemm", "--m", "0"}), "m must be");
  check_rejected(run_h200({"--workload", "flash1", "--sram", "1B"}), "sram_bytes");
}

TEST_CASE("Shapes whose byte counts overflow 64 bits are rejected before any work", "[bad-input]") {
  // 2^32 · 2^32 · 2^32 elements of 2 bytes: far past 2^64.
  check_rejected(
      run_h200({"--seq", "4294967296", "--head-dim", "4294967296", "--heads", "4294967296"}),
      "overflows 64 bits");
  check_rejected(run_h200({"--seq", "18446744073709551615"}), "too large");
  // Naive attention's N² score matrix: N = 2^32 - 1 gives ~2^64 elements.
  check_rejected(run_h200({"--workload", "naive", "--seq", "4294967295", "--head-dim", "1"}),
                 "seq");
  check_rejected(run_h200({"--workload", "gemm", "--m", "18446744073709551615", "--n",
                           "18446744073709551615"}),
                 "");
}

TEST_CASE("Configs that would need absurd memory are rejected at load time", "[bad-input]") {
  check_rejected(run_h200({"--set", "l2.size=1 TB"}), "l2.size");
  check_rejected(run_h200({"--set", "sm.count=1000000000"}), "sm.count");
  check_rejected(run_h200({"--set", "hbm.channels=1000000000"}), "hbm.channels");
  check_rejected(run_h200({"--set", "l2.slices=1073741824"}), "l2.slices");
  check_rejected(run_h200({"--set", "l2.ways=1000000000"}), "l2.ways");
  check_rejected(run_h200({"--set", "l2.size=18446744073709551615 B"}), "l2.size");
  check_rejected(run_h200({"--set", "sm.count=0"}), "sm.count");
  check_rejected(run_h200({"--set", "hbm.bandwidth=0 B/s"}), "hbm.bandwidth");
  check_rejected(run_h200({"--set", "sm.clock=0 Hz"}), "sm.clock");
}

TEST_CASE("A config file that extends itself is rejected naming the cycle", "[bad-input]") {
  const TempDir dir("cycle");
  {
    std::ofstream(dir / "a.yaml") << "extends: b.yaml\n";
    std::ofstream(dir / "b.yaml") << "extends: a.yaml\n";
  }
  check_rejected({"run", "-c", dir / "a.yaml"}, "extends cycle");
}

TEST_CASE("A damaged trace file is rejected with its byte offset", "[bad-input]") {
  const TempDir dir("trace");
  {
    std::ofstream(dir / "bad.mwt", std::ios::binary)
        << std::string("MWTRACE\0\1\0\0\0\0\0\0\0", 16) << "garbage";
  }
  check_rejected({"replay", "-c", "h200", dir / "bad.mwt"}, "bad.mwt");
}

// Regression (fixed in b8c6a13): a shard file whose `points` cell is huge made `memwall sweep
// merge` allocate a row for every claimed point before checking anything: points = 2^64 - 1 ended
// in "internal error: cannot create std::vector larger than max_size()" (exit 1), points = 10^12
// in "internal error: std::bad_alloc", and 10^9 would have tried to allocate tens of GB. Found by
// fuzz_csv on its first run.
TEST_CASE("sweep merge refuses a shard claiming more points than it could hold",
          "[bad-input][csv]") {
  const TempDir dir("merge");
  std::ofstream(dir / "s.csv") << "point,points,seq\n0,18446744073709551615,128\n";
  check_rejected({"sweep", "merge", dir / "s.csv", "-o", dir / "merged.csv"}, "s.csv");
  std::ofstream(dir / "t.csv") << "point,points,seq\n0,1000000000000,128\n";
  check_rejected({"sweep", "merge", dir / "t.csv", "-o", dir / "merged.csv"}, "t.csv");
}

TEST_CASE("sweep merge names a shard file with a bad point index", "[bad-input][csv]") {
  const TempDir dir("merge-ok");
  std::ofstream(dir / "s.csv") << "point,points,seq\nx,2,128\n";
  check_rejected({"sweep", "merge", dir / "s.csv", "-o", dir / "merged.csv"}, "s.csv:2");
  std::ofstream(dir / "u.csv") << "point,points,seq\n0,2,\"128\n";
  check_rejected({"sweep", "merge", dir / "u.csv", "-o", dir / "merged.csv"}, "unterminated");
}

// Regression (fixed in b8c6a13): `memwall io --measured FILE` read the dram_read_bytes /
// dram_write_bytes cells of a joined row with std::stod, so a non-numeric cell ("abc") or one out
// of double range ("1e999") ended in "memwall: internal error: stod" with exit 1 instead of an
// error naming FILE:LINE and the column, exit 2.
TEST_CASE("io --measured names a non-numeric measured byte count", "[bad-input][csv]") {
  const TempDir dir("measured");
  const std::string header =
      "workload,batch,heads,seq,head_dim,dtype,dram_read_bytes,dram_write_bytes\n";
  std::ofstream(dir / "m.csv") << header << "flash2,1,1,128,64,fp16,abc,12\n";
  check_rejected({"io", "-c", "h200", "--workload", "flash2", "--seq", "128", "--head-dim", "64",
                  "--measured", dir / "m.csv"},
                 "m.csv:2");
  std::ofstream(dir / "n.csv") << header << "flash2,1,1,128,64,fp16,1e999,12\n";
  check_rejected({"io", "-c", "h200", "--workload", "flash2", "--seq", "128", "--head-dim", "64",
                  "--measured", dir / "n.csv"},
                 "n.csv:2");
}

// Regression of fuzz_sweep_resume's only failing input (tests/fuzz/corpus/sweep_resume/
// many-ranges-over-100000-values): the harness assumed a value list holds at most 100000 values,
// but that bound is per range; a list of several ranges may hold more. The reader was right.
TEST_CASE("A value list of several ranges may hold more than 100000 values in all",
          "[bad-input][sweep]") {
  const std::vector<std::string> values = expand_values("1..100000+1,1..100000+1", "--seq");
  CHECK(values.size() == 200000);
  CHECK_THROWS_AS(expand_values("1..100001+1", "--seq"), UsageError);
  const std::string input = slurp("tests/fuzz/corpus/sweep_resume/many-ranges-over-100000-values");
  const std::string first_line = input.substr(0, input.find('\n'));
  try {
    CHECK(!expand_values(first_line, "--seq").empty());
  } catch (const Error&) {}
}

// Regression: a sweep whose axes multiply to a huge but 64-bit point count was not rejected up
// front: `memwall sweep --seq 1..100000+1 --head-dim 1..100000+1` (10^10 points) listed every index
// of the shard in memory (SweepPlan::shard_indices) and ended in "memwall: internal error:
// std::bad_alloc" (exit 1) under a 4 GB address-space limit. Sweeps over kMaxSweepPoints points
// are now refused when the plan is built.
TEST_CASE("A sweep of 10^10 points is refused with a clear error before allocating",
          "[bad-input][sweep]") {
  if (kAddressSanitizer) {
    WARN("skipped under AddressSanitizer (it cannot run with an address-space limit)");
    return;
  }
  const TempDir out("huge-sweep"), logs("huge-sweep-logs");
  const Result r = run_memwall({"sweep", "-c", "h200", "--workload", "flash2", "--seq",
                                "1..100000+1", "--head-dim", "1..100000+1", "-o", out / "s.csv"},
                               logs.path(), std::chrono::seconds(30), std::uint64_t{4} << 30);
  INFO(r.err);
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(out.entries().empty());
}

// Issue 18, finding 2: the record of DRAM sectors fetched was a flat bitmap sized from each
// tensor's declared extent, so a 150-byte trace declaring a 1 TiB tensor took 4.2 GB and one of
// 4 TiB ended in "internal error: std::bad_alloc". Now it grows with the sectors read.
TEST_CASE(
    "Finding 2: a forged trace declaring tensors of up to 2^62 bytes replays in little memory",
    "[bad-input][first-hour][memory]") {
  const TempDir dir("forged");
  for (const int log2 : {40, 42, 50, 62}) {
    INFO("2^" << log2 << " bytes");
    const std::string path = dir / ("forged" + std::to_string(log2) + ".mwt");
    {
      TraceWriter w(path);
      WorkloadInfo info;
      info.name = "forged";
      info.tensors.push_back(TensorInfo{"huge", 0, std::uint64_t{1} << log2});
      w.begin(info);
      KernelInfo k;
      k.name = "k";
      k.ctas = 1;
      k.threads_per_cta = 32;
      w.kernel(k);
      w.cta_begin();
      Op load;
      load.kind = OpKind::load;
      load.box = Box{0, 1, 128, 128};
      w.op(load);
      Op wait;
      wait.kind = OpKind::wait;
      w.op(wait);
      w.cta_end();
      w.end();
    }
    // The record of fetched sectors counts against --max-memory: one page for the line read.
    const TempDir logs("forged-logs");
    const Result r =
        run_memwall({"replay", "-c", "h200", path, "--max-memory", "64 MiB"}, logs.path(), 20s);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
  }
}

TEST_CASE("Finding 2: --max-memory below what the chip's model needs is refused with the figure",
          "[bad-input][first-hour][memory]") {
  const std::uint64_t model_bytes = Engine::fixed_memory_bytes(load_config("h200"));
  REQUIRE(model_bytes > (1u << 20));
  check_rejected(
      {"run", "-c", "h200", "--workload", "flash2", "--seq", "1024", "--max-memory", "1 MiB"},
      "the simulation would need " + format_bytes(Bytes{model_bytes}) +
          " of memory for the model of NVIDIA H200");
  check_rejected(
      {"run", "-c", "h200", "--workload", "flash2", "--seq", "1024", "--max-memory", "0 B"},
      "--max-memory: must be greater than zero");
  check_rejected(
      {"run", "-c", "h200", "--workload", "flash2", "--seq", "1024", "--max-memory", "lots"},
      "--max-memory: expected a size");
}

// Issue 18, finding 3: `--set "hbm.bandwidth=0.001 B/s"` reported the same time as 4.8 TB/s (the
// ticks wrapped), `sm.clock=0.001 Hz` ended in "internal: event scheduled ... before now".
TEST_CASE("Finding 3: rates and clocks too slow to simulate are refused with the key and the bound",
          "[bad-input][first-hour][ticks]") {
  for (const char* set : {"hbm.bandwidth=0.001 B/s", "hbm.bandwidth=0.01 B/s", "sm.clock=0.001 Hz",
                          "sm.clock=1e-300 Hz", "l2.bandwidth=1 B/s", "hbm.write_rate=1e-12",
                          "hbm.mixed_write_rate=1e-300", "sm.warp_load_bandwidth=1 B/s"}) {
    INFO(set);
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    check_rejected({"run", "-c", "h200", "--workload", "flash2", "--seq", "256", "--set", set},
                   key + ": ");
  }
}

TEST_CASE("The HBM write rates are fractions in (0, 1]; the mix window a duration of one step",
          "[bad-input][config]") {
  check_rejected(run_h200({"--set", "hbm.write_rate=0"}), "hbm.write_rate: must be in (0, 1]");
  check_rejected(run_h200({"--set", "hbm.mixed_write_rate=1.5"}),
                 "hbm.mixed_write_rate: must be in (0, 1]");
  check_rejected(run_h200({"--set", "hbm.mix_window=2 s"}),
                 "hbm.mix_window: \"2 s\" is 2 s, more than 1 s, the simulator's bound");
  check_rejected(run_h200({"--set", "hbm.mix_window=-1 ns"}),
                 "hbm.mix_window: a duration cannot be negative");
}

TEST_CASE("Finding 22: naive attention with rows of S longer than the shared memory streams them",
          "[bad-input][first-hour]") {
  // 4 rows of 2048 fp16 keys are 16 KiB, twice the 8 KiB this config gives a CTA.
  const std::vector<std::string> args = {
      "run",        "-c",        "h200",  "--set",      "sm.smem_per_block=8 KiB",
      "--workload", "naive",     "--seq", "2048",       "--head-dim",
      "64",         "--block-q", "16",    "--block-kv", "16",
      "--block-k",  "16"};
  const TempDir logs("f22");
  const Result r = run_memwall(args, logs.path(), 60s);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Catch::Contains("softmax_chunk=1024"));
  std::vector<std::string> kept = args;
  kept.insert(kept.end(), {"--softmax-chunk", "0"});
  check_rejected(kept, "--softmax-chunk 1024 streams the rows");
}

// Found by fuzz_sim_config (tests/fuzz/findings/sim-config-million-sms): `extends: h200` with
// `sm.count=1000000` took 10 s under the sanitizers (1.4 s and 763 MB in release) building and
// tearing down the topology of a million SMs, none of it counted against --max-memory. sm.count
// is now at most 65,536.
TEST_CASE("Fuzz finding: a million SMs are refused at load, naming sm.count and its bound",
          "[bad-input][fuzz]") {
  check_rejected(run_h200({"--set", "sm.count=1000000"}), "sm.count");
  check_rejected(run_h200({"--set", "sm.count=65537"}), "65536");
}

// Found while bounding that input: a chip whose occupancy allows thousands of CTAs per SM
// allocated a slot for each, whatever the grid, and died in `internal error: std::bad_alloc`
// (100,000 SMs × 7,812 CTAs each). The slots are now as many as the grid can fill at once, and
// what they take counts against --max-memory.
TEST_CASE("Slots for the resident CTAs are sized by the grid and counted against --max-memory",
          "[bad-input][memory]") {
  const std::vector<std::string> huge_occupancy = {"--set", "sm.count=65536",
                                                   "--set", "sm.max_ctas_per_sm=1000000",
                                                   "--set", "sm.max_threads_per_sm=1000000",
                                                   "--set", "sm.registers_per_sm=100000000",
                                                   "--set", "sm.smem_per_sm=1 GiB",
                                                   "--set", "sm.smem_per_block=1 GiB"};
  std::vector<std::string> tiny = run_h200(huge_occupancy);
  tiny.insert(tiny.end(), {"--workload", "flash2", "--seq", "128", "--heads", "1"});
  const TempDir logs("slots");
  const Result r = run_memwall(tiny, logs.path(), 60s);
  CHECK(r.code == 0);  // one CTA: one slot per SM, not 7,812
  CHECK(r.err.find("internal error") == std::string::npos);
  // 262,144 qk CTAs over 65,536 SMs: 4 slots each, 75 MiB with the chip's model, over 64 MiB
  // (mma_sync's grid: the wgmma kernel, a Hopper config's default, is one CTA per SM).
  std::vector<std::string> many = run_h200(huge_occupancy);
  many.insert(many.end(), {"--workload", "naive", "--gemm", "mma_sync", "--seq", "16384", "--heads",
                           "16", "--max-memory", "64 MiB"});
  check_rejected(many, "the slots of the resident CTAs");
}

// A persistent kernel's CTA (one per SM, looping over its tiles) records its whole loop as ops:
// `memwall run -c h200 --workload naive --seq 10000000` (the wgmma qk) grew to 17 GB of ops and
// ignored SIGTERM for minutes while it did; at --seq 100000000 it ended in "internal error:
// std::bad_alloc". A CTA's ops are now held to its share of half of --max-memory, and a CTA with
// more is refused before they are allocated, the kernel, the CTA and the limit named.
TEST_CASE("An absurd shape whose CTAs' ops pass --max-memory is refused before they are allocated",
          "[bad-input][memory]") {
  if (kAddressSanitizer) {
    WARN("skipped under AddressSanitizer (it cannot run with an address-space limit)");
    return;
  }
  for (const char* workload : {"naive", "flash2", "flash3"}) {
    INFO(workload);
    const TempDir out("huge-cta"), logs("huge-cta-logs");
    const Result r = run_memwall({"run", "-c", "h200", "--workload", workload, "--seq", "100000000",
                                  "--max-memory", "1 GiB", "--json", out / "r.json"},
                                 logs.path(), std::chrono::seconds(30), std::uint64_t{4} << 30);
    INFO(r.err);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("internal error") == std::string::npos);
    CHECK(r.err.find(", CTA 0: more than ") != std::string::npos);
    CHECK(r.err.find("--max-memory") != std::string::npos);
    CHECK(out.entries().empty());
  }
  // The trace commands hold one CTA at a time, within trace's own --max-memory.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"trace", "-c", "h200", "--workload", "naive", "--seq", "100000000",
                                 "--counts", "--max-memory", "256 MiB"},
        std::vector<std::string>{"trace", "-c", "h200", "--workload", "flash3", "--seq",
                                 "100000000", "--max-memory", "256 MiB", "-o",
                                 "/tmp/memwall-huge-cta.mwt"}}) {
    INFO(args[4]);
    const TempDir logs("huge-cta-trace-logs");
    const Result r =
        run_memwall(args, logs.path(), std::chrono::seconds(60), std::uint64_t{4} << 30);
    INFO(r.err);
    CHECK(r.code == kExitBadInput);
    // A CTA's list may hold twice its ops: 256 MiB holds 256 MiB / (2 · sizeof(Op)) of them.
    const std::uint64_t limit = (std::uint64_t{256} << 20) / (2 * sizeof(Op));
    CHECK(r.err.find("trace: a CTA of more than " + std::to_string(limit) + " ops (" +
                     format_bytes(Bytes{limit * sizeof(Op)}) + ")") != std::string::npos);
    CHECK(!std::filesystem::exists("/tmp/memwall-huge-cta.mwt"));
  }
}

// The CTAs resident at once are the slots or, where the grid has fewer CTAs, the grid: flash1's
// main kernel is one CTA per head, and on the A100 preset a kernel of one CTA once got 1/108 of
// the ops' share ("run -c a100-40gb --workload flash1 --seq 32768" was refused at 731,283 ops and
// runs in 51 MB). Under --max-memory 1 GiB its CTA's 931,220 ops fit the whole share (6.7 M) and
// would not fit a 108th of it.
TEST_CASE("A grid of fewer CTAs than SMs gives each CTA the ops' whole share",
          "[bad-input][memory]") {
  const TempDir out("one-cta"), logs("one-cta-logs");
  const Result r = run_memwall({"run", "-c", "a100-40gb", "--workload", "flash1", "--seq", "32768",
                                "--max-memory", "1 GiB", "--json", out / "r.json"},
                               logs.path(), std::chrono::seconds(120));
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("A trace CTA of more ops than its share of --max-memory is refused, a small one runs",
          "[bad-input][memory]") {
  // --max-memory 8 MiB on the H200: what the chip's model and the CTA slots take is counted first,
  // half of the rest goes to the ops, each of the 132 slots of a 132-CTA kernel its share (an op
  // list may hold twice its size).
  const std::uint64_t limit = 8u << 20;
  const std::uint64_t used =
      Engine::fixed_memory_bytes(load_config("h200")) + 132 * CtaExecutor::kSlotBytes;
  REQUIRE(used < limit);
  const std::uint64_t share = (limit - used) / 2 / (132 * 2 * sizeof(Op));
  const TempDir dir("long-cta");
  for (const std::uint64_t ops : {share, share + 1}) {
    INFO(ops << " ops per CTA, share " << share);
    const std::string path = dir / ("t" + std::to_string(ops) + ".mwt");
    {
      TraceWriter w(path);
      WorkloadInfo info;
      info.name = "long";
      info.tensors.push_back(TensorInfo{"x", 0, 1u << 20});
      w.begin(info);
      KernelInfo k;
      k.name = "k";
      k.ctas = 132;
      k.threads_per_cta = 128;
      w.kernel(k);
      for (int c = 0; c < 132; ++c) {
        w.cta_begin();
        Op compute;
        compute.kind = OpKind::compute;
        compute.unit = ComputeUnit::fp32;
        compute.amount = 128;
        for (std::uint64_t i = 0; i < ops; ++i) w.op(compute);
        w.cta_end();
      }
      w.end();
    }
    const TempDir logs("long-cta-logs");
    const Result r =
        run_memwall({"replay", "-c", "h200", path, "--max-memory", "8 MiB"}, logs.path(), 60s);
    INFO(r.err);
    if (ops == share) {
      CHECK(r.code == 0);
    } else {
      CHECK(r.code == kExitBadInput);
      CHECK(r.err.find("kernel k, CTA 0: more than " + std::to_string(share) + " ops") !=
            std::string::npos);
    }
  }
}
