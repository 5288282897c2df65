// The footprint-reuse stream of models/cuda/ubench/l2_reuse.cu, simulated: how much of a
// footprint the simulated L2 keeps from one kernel to the next, against what the chip kept
// (a run of models/cuda/ubench/l2_reuse.sh tabulated by l2_reuse_table.py; none is committed
// yet). This is the measurement behind the L2's usable capacity.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/support/csv_rows.h"
#include "tests/support/engine.h"

using namespace memwall;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint32_t kThreads = 1024;
constexpr std::uint64_t kStep = kThreads * 16;  // a CTA's 1024 threads × 16 B
constexpr std::uint64_t kBuffer = std::uint64_t{1} << 32;  // the footprint's address

enum class Pass { kRead, kReverse, kWrite };

/// One pass of l2_reuse.cu over `steps` steps per CTA on `ctas` CTAs: CTA b on the b-th chunk,
/// one 16 KiB load (or store) per step, forward or backward; the loop is unrolled by 4, so a CTA
/// waits for its loads every 4 steps.
test::TestKernel pass_kernel(Pass pass, std::uint64_t steps, std::uint32_t ctas) {
  test::TestKernel k;
  k.info.name = pass == Pass::kWrite ? "first_write" : "read";
  k.info.threads_per_cta = kThreads;
  k.info.registers_per_thread = 32;
  k.ctas.resize(ctas);
  for (std::uint32_t b = 0; b < ctas; ++b) {
    std::vector<Op>& ops = k.ctas[b];
    for (std::uint64_t s = 0; s < steps; ++s) {
      const std::uint64_t step = pass == Pass::kReverse ? steps - 1 - s : s;
      Op op;
      op.kind = pass == Pass::kWrite ? OpKind::store : OpKind::load;
      op.tag = pass == Pass::kWrite ? 0 : 1;
      op.box =
          Box{kBuffer + (b * steps + step) * kStep, 1, static_cast<std::uint32_t>(kStep), kStep};
      ops.push_back(op);
      if (pass != Pass::kWrite && (s % 4 == 3 || s + 1 == steps)) {
        Op wait;
        wait.kind = OpKind::wait;
        wait.tag = 1;
        ops.push_back(wait);
      }
    }
  }
  return k;
}

struct Reuse {
  std::uint64_t bytes;  ///< the footprint
  std::uint64_t first_dram_read;  ///< pass 1's DRAM reads
  std::uint64_t first_dram_write;  ///< pass 1's DRAM writes (write-backs during it)
  std::uint64_t dram_read;  ///< pass 2's DRAM reads
  std::uint64_t dram_write;  ///< pass 2's DRAM writes
  Tick time;  ///< pass 2's duration
};

/// l2_reuse.cu's sequence for a footprint of `bytes` (rounded down as the kernel does: a whole
/// number of steps per CTA) on `config` (its SMs, one CTA each), from a cold L2.
Reuse simulate_reuse(const HardwareConfig& config, const std::string& mode, std::uint64_t bytes) {
  const std::uint32_t ctas = config.sm.count;
  const std::uint64_t steps = bytes / (kStep * ctas);
  WorkloadInfo w;
  w.name = "l2_reuse";
  w.tensors = {{"buf", kBuffer, steps * kStep * ctas}};
  const Pass first = mode == "write-read" ? Pass::kWrite : Pass::kRead;
  const Pass second = mode == "read-reverse" ? Pass::kReverse : Pass::kRead;
  test::VectorTraceSource source(
      w, {pass_kernel(first, steps, ctas), pass_kernel(second, steps, ctas)});
  const RunResult r = simulate(config, source);
  const KernelResult& k = r.kernels.at(1);
  return {steps * kStep * ctas,
          r.kernels.at(0).traffic.dram_read_bytes,
          r.kernels.at(0).traffic.dram_write_bytes,
          k.traffic.dram_read_bytes,
          k.traffic.dram_write_bytes,
          k.duration()};
}

}  // namespace

// Hidden (run on demand): the simulated curve, to set beside the measured one.
TEST_CASE("l2_reuse's curve on the presets", "[.][l2-reuse-curve]") {
  for (const char* name : {"h200", "h200-calibrated", "h100-sxm"}) {
    const HardwareConfig c = load_config(name);
    for (const char* mode : {"read-read", "read-reverse", "write-read"}) {
      // l2_reuse.cu's footprints from 8 steps per CTA (kStepsPerCta there).
      for (const std::uint64_t steps : {8, 16, 18, 20, 21, 22, 24, 26, 28, 30, 32, 48, 64}) {
        const Reuse r = simulate_reuse(c, mode, steps * kStep * c.sm.count);
        std::printf("%s %s %5.1f MiB: pass 2 DRAM read %.3f of F, write %.3f, %.1f us\n", name,
                    mode, double(r.bytes) / kMiB, double(r.dram_read) / double(r.bytes),
                    double(r.dram_write) / double(r.bytes), double(r.time) / 1e6);
      }
    }
  }
}

namespace {

/// l2_reuse_table.py's rows (DIR/reuse.csv): mode, footprint, pass 1's and pass 2's DRAM bytes,
/// pass 2's ncu time (ns); its hit and miss sectors and event time are not compared here.
struct MeasuredReuse {
  std::string mode;
  std::uint64_t bytes;
  double pass1_read, pass1_write, pass2_read, pass2_write, ncu_ns;
};

std::vector<MeasuredReuse> measured_reuse(const std::string& dir) {
  std::vector<MeasuredReuse> out;
  for (const auto& c : test::csv_rows(dir + "/reuse.csv", 10)) {
    out.push_back({c[0], std::stoull(c[1]), std::stod(c[2]), std::stod(c[3]), std::stod(c[4]),
                   std::stod(c[5]), std::stod(c[8])});
  }
  return out;
}

void print_comparison(const std::string& config, const std::string& dir) {
  const HardwareConfig c = load_config(config);
  std::printf("%s against %s\n", config.c_str(), dir.c_str());
  std::printf("%-13s %7s | %9s %9s %9s | %9s %9s %9s | %8s %8s %8s\n", "mode", "MiB", "chip rd",
              "chip wr", "chip us", "sim rd", "sim wr", "sim us", "pass1 rd", "chip p1w",
              "sim p1w");
  for (const MeasuredReuse& m : measured_reuse(dir)) {
    const Reuse r = simulate_reuse(c, m.mode, m.bytes);
    INFO(m.mode << ", " << m.bytes << " bytes: the config's SM count rounds them otherwise");
    REQUIRE(r.bytes == m.bytes);  // the same footprint: the config has the chip's SM count
    const double f = static_cast<double>(m.bytes);
    std::printf("%-13s %7.1f | %9.3f %9.3f %9.2f | %9.3f %9.3f %9.2f | %8.3f %8.3f %8.3f\n",
                m.mode.c_str(), f / kMiB, m.pass2_read / f, m.pass2_write / f, m.ncu_ns / 1e3,
                static_cast<double>(r.dram_read) / f, static_cast<double>(r.dram_write) / f,
                static_cast<double>(r.time) / 1e6, m.pass1_read / f, m.pass1_write / f,
                static_cast<double>(r.first_dram_write) / f);
  }
}

}  // namespace

// Hidden (run on demand): the simulated curve beside a measured one, e.g.
//   MEMWALL_REUSE="h200-calibrated traces/measured/h200-l2-reuse" build/tests/test_engine '[l2-reuse-compare]'
TEST_CASE("l2_reuse measured against simulated", "[.][l2-reuse-compare]") {
  const char* spec = std::getenv("MEMWALL_REUSE");
  REQUIRE(spec != nullptr);
  const std::string s = spec;
  print_comparison(s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1));
}

TEST_CASE("l2_reuse on the H200 preset: a footprint that fits is kept, one twice the L2 is not",
          "[run][l2]") {
  const HardwareConfig c = load_config("h200");
  const std::uint64_t l2 = c.l2.size.count;
  SECTION("a quarter of the L2, read twice: pass 2 all hits, whatever partition reads it") {
    // Even with every line held twice (a copy in each partition) it fits in half the L2.
    for (const char* mode : {"read-read", "read-reverse", "write-read"}) {
      INFO(mode);
      const Reuse r = simulate_reuse(c, mode, l2 / 4);
      // Pass 1 found a cold L2 (a read fetched all of it; a write of whole sectors fetches
      // nothing), pass 2 only hits.
      CHECK(r.first_dram_read == (std::string(mode) == "write-read" ? 0 : r.bytes));
      CHECK(r.dram_read == 0);
      CHECK(r.dram_write == 0);
    }
  }
  SECTION("twice the L2, read twice in the same order: LRU keeps nothing pass 2 reads first") {
    const Reuse r = simulate_reuse(c, "read-read", 2 * l2);
    CHECK(r.dram_read == r.bytes);
    // In the reverse order pass 2 first meets the lines pass 1 left: at most an L2's worth hit.
    const Reuse back = simulate_reuse(c, "read-reverse", 2 * l2);
    CHECK(back.dram_read < back.bytes);
    CHECK(back.dram_read >= back.bytes - l2);
  }
  SECTION(
      "l2.dirty_ways caps the dirty lines a streaming write leaves: the rest is written back "
      "during it") {
    // Twice the L2 written: without a limit the write-backs are what the L2 could not hold; with
    // at most half the ways of a set dirty, the L2 holds at most half its size dirty.
    HardwareConfig unlimited = c;
    unlimited.l2.dirty_ways = 0;
    const Reuse free = simulate_reuse(unlimited, "write-read", 2 * l2);
    HardwareConfig capped = c;
    capped.l2.dirty_ways = c.l2.ways / 2;
    const Reuse half = simulate_reuse(capped, "write-read", 2 * l2);
    REQUIRE(half.bytes == free.bytes);
    CHECK(free.first_dram_write < free.bytes - l2 / 2);
    CHECK(half.first_dram_write >= half.bytes - l2 / 2);
    // What was written back during the write is not written again: each byte reaches the HBM once.
    CHECK(free.first_dram_write + free.dram_write == free.bytes);
    CHECK(half.first_dram_write + half.dram_write == half.bytes);
  }
}

TEST_CASE(
    "l2_reuse on the H100 preset: a streaming write is written back while it runs, as on the chip",
    "[run][l2][measured]") {
  // traces/measured/h100-l2-reuse: during the first kernel of write-read the chip holds at most
  // about 24.7 MB dirty and writes the rest back. The preset's l2.dirty_ways is that cleaning:
  // its first kernel's write-backs are within 0.05 of the footprint of the chip's at every
  // footprint past the knee (33 MiB and up), where without the limit they fall short by up to
  // 0.28 of it (at least 0.15 up to 54 MiB: the dirty lines the L2 could hold).
  const HardwareConfig c = load_config("h100-sxm");
  REQUIRE(c.l2.dirty_ways == c.l2.ways / 2);
  HardwareConfig unlimited = c;
  unlimited.l2.dirty_ways = 0;
  int compared = 0;
  for (const MeasuredReuse& m : measured_reuse("traces/measured/h100-l2-reuse")) {
    if (m.mode != "write-read" || m.bytes < 33 * kMiB) continue;
    INFO(m.bytes << " bytes written, chip wrote back " << m.pass1_write);
    const double f = static_cast<double>(m.bytes);
    const Reuse r = simulate_reuse(c, m.mode, m.bytes);
    REQUIRE(r.bytes == m.bytes);
    CHECK(std::abs(static_cast<double>(r.first_dram_write) - m.pass1_write) / f <= 0.05);
    if (m.bytes <= 54 * kMiB) {  // near the knee the L2's share is large: the limit is what matters
      const Reuse u = simulate_reuse(unlimited, m.mode, m.bytes);
      CHECK((m.pass1_write - static_cast<double>(u.first_dram_write)) / f >= 0.15);
    }
    ++compared;
  }
  CHECK(compared >= 10);
}
