#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "models/closed_forms.h"
#include "sim/core/error.h"
#include "studies/io_check.h"
#include "studies/io_fit.h"
#include "studies/sweep_flatten.h"
#include "studies/sweep_plan.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

constexpr const char* kTeaching = "configs/hypothetical/teaching-gpu.yaml";

IoReport ideal_io(const std::string& workload, const std::string& seq, const std::string& head_dim,
                  const std::string& sram) {
  std::vector<SweepAxis> axes{
      {"workload", {workload}}, {"seq", expand_values(seq, "--seq")}, {"head_dim", {head_dim}}};
  if (!sram.empty()) axes.push_back({"sram_bytes", expand_values(sram, "--sram")});
  IoOptions options;
  options.config = kTeaching;
  options.ideal = true;
  options.threads = 2;
  return run_io(SweepPlan(axes), options, nullptr);
}

const IoFit& fit_of(const IoReport& r, const std::string& over, const std::string& metric) {
  for (const IoFit& f : r.fits) {
    if (f.over == over && f.metric == metric) return f;
  }
  FAIL("no fit over " << over << " of " << metric);
  throw;
}

}  // namespace

TEST_CASE("A log-log fit recovers the exponent of an exact power law", "[io]") {
  std::vector<double> x, y;
  for (double v = 1024; v <= 65536; v *= 2) {
    x.push_back(v);
    y.push_back(3.0 * std::pow(v, 2.5));
  }
  const PowerFit f = fit_power_law(x, y);
  CHECK(f.exponent == Approx(2.5).epsilon(1e-9));
  CHECK(f.coefficient == Approx(3.0).epsilon(1e-6));
  CHECK(f.r_squared == Approx(1.0));
  CHECK_THROWS_WITH(fit_power_law({1, 1}, {2, 3}), Catch::Contains("two distinct"));
  CHECK_THROWS_WITH(fit_power_law({1, 2}, {0, 3}), Catch::Contains("positive"));
}

TEST_CASE(
    "Flash1 in ideal mode with blocks from M: HBM bytes equal the closed form and grow as N^2",
    "[io]") {
  // M = 2 KiB = 1024 fp16 elements, d = 16: Bc = ⌈M/4d⌉ = 16, Br = min(16, d) = 16; N >> M/d = 64.
  const IoReport r = ideal_io("flash1", "2048..8192x2", "16", "2 KiB");
  REQUIRE(r.points.size() == 3);
  for (const IoPoint& p : r.points) {
    WorkloadParams params;
    params.workload = WorkloadKind::flash1;
    params.seq = std::stoull(p.axes.at("seq"));
    params.head_dim = 16;
    params.sram_bytes = 2048;
    const Traffic t = closed_form_traffic(params);
    CHECK(p.closed_form.total() == t.read_bytes + t.write_bytes);
    CHECK(p.sim_dram_bytes() == p.closed_form.total());
  }
  const IoFit& f = fit_of(r, "seq", "sim_dram_bytes");
  CHECK(f.expected == 2.0);
  CHECK(f.fit.exponent == Approx(2.0).margin(0.02));
}

TEST_CASE("Flash1 in ideal mode: HBM bytes fall as 1/M with blocks from M", "[io]") {
  const IoReport r = ideal_io("flash1", "8192", "16", "2048..16384x2");
  REQUIRE(r.points.size() == 4);
  // The blocks follow Algorithm 1: Bc = ⌈M/4d⌉ elements.
  for (const IoPoint& p : r.points) {
    const std::uint64_t m_elems = std::stoull(p.axes.at("sram_bytes")) / 2;
    bool found = false;
    for (const auto& [k, v] : p.params) {
      if (k == "block_kv") found = std::stoull(v) == (m_elems + 63) / 64;
    }
    CHECK(found);
    CHECK(p.sim_dram_bytes() == p.closed_form.total());
  }
  const IoFit& f = fit_of(r, "sram", "sim_dram_bytes");
  CHECK(f.expected == -1.0);
  CHECK(f.fit.exponent == Approx(-1.0).margin(0.05));
}

TEST_CASE("Naive attention in ideal mode grows as N^2 for N >> d", "[io]") {
  const IoReport r = ideal_io("naive", "512..4096x2", "16", "");
  for (const IoPoint& p : r.points) CHECK(p.sim_dram_bytes() == p.closed_form.total());
  const IoFit& f = fit_of(r, "seq", "sim_dram_bytes");
  CHECK(f.expected == 2.0);
  CHECK(f.fit.exponent == Approx(2.0).margin(0.02));
}

TEST_CASE("Measured rows join on the resolved parameters and are fitted like the rest", "[io]") {
  const std::string path = memwall::test::temp_path("io", "measured.csv");
  {
    std::ofstream out(path);
    out << "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,stages,kernel,dram_read_bytes,"
           "dram_write_bytes,l2_read_bytes,l2_write_bytes,gpu\n";
    // Twice and thrice the closed form of two points (N = 1024, 2048), none for N = 4096.
    for (const std::uint64_t n : {1024u, 2048u}) {
      WorkloadParams p;
      p.workload = WorkloadKind::flash2;
      p.seq = n;
      p.head_dim = 32;
      p.block_q = 64;
      p.block_kv = 64;
      const Traffic t = closed_form_traffic(p);
      // One row per kernel and a "total" row: only the total is joined.
      for (const char* kernel : {"flash2_fwd", "total"}) {
        out << "flash2,1,1," << n << ",32,fp16,64,64,2," << kernel << "," << 2 * t.read_bytes << ","
            << 3 * t.write_bytes << "," << t.read_bytes << "," << t.write_bytes << ",test\n";
      }
    }
  }
  const CsvTable measured = read_csv(path);
  IoOptions options;
  options.config = kTeaching;
  const SweepPlan plan({{"workload", {"flash2"}},
                        {"seq", {"1024", "2048", "4096"}},
                        {"head_dim", {"32"}},
                        {"block_q", {"64"}},
                        {"block_kv", {"64"}}});
  const IoReport r = run_io(plan, options, &measured);
  REQUIRE(r.points.size() == 3);
  REQUIRE(r.points[0].measured.has_value());
  CHECK(*r.points[0].measured_dram_bytes() ==
        Approx(2.0 * static_cast<double>(r.points[0].closed_form.read) +
               3.0 * static_cast<double>(r.points[0].closed_form.write)));
  CHECK(*r.points[0].measured_l2_bytes() ==
        Approx(static_cast<double>(r.points[0].closed_form.total())));
  CHECK(r.points[1].measured_where == path + ":5");
  CHECK_FALSE(r.points[2].measured.has_value());
  // A metric missing at some point of a group is not fitted there.
  for (const IoFit& f : r.fits) CHECK(!f.metric.starts_with("measured"));

  // The JSON carries points and fits with over, metric, exponent and expected.
  const FlatRow json = flatten_json(io_to_json(r), "io json");
  bool has_fit = false;
  for (const auto& [k, v] : json) {
    if (k == "fits.0.over") has_fit = v == "seq";
  }
  CHECK(has_fit);

  std::ofstream(path, std::ios::app) << "flash2,1,1,1024,32,fp16,64,64,2,total,1,1,1,1,dup\n";
  const CsvTable dup = read_csv(path);
  CHECK_THROWS_WITH(run_io(plan, options, &dup), Catch::Contains(":6: the same point as line 3"));
  std::remove(path.c_str());
}

TEST_CASE("Gemm in ideal mode with square tiles from M: HBM bytes equal the closed form", "[io]") {
  std::vector<SweepAxis> axes{{"workload", {"gemm"}},
                              {"seq", {"512"}},
                              {"sram_bytes", expand_values("8192..32768x2", "--sram")}};
  IoOptions options;
  options.config = kTeaching;
  options.ideal = true;
  const IoReport r = run_io(SweepPlan(axes), options, nullptr);
  REQUIRE(r.points.size() == 3);
  for (const IoPoint& p : r.points) {
    // m = n = k = seq; the tile T is the largest with T² + 2·32·T <= M (elements), in whole sectors.
    const std::uint64_t m_elems = std::stoull(p.axes.at("sram_bytes")) / 2;
    std::uint64_t t = 1;
    while ((t + 1) * (t + 1) + 64 * (t + 1) <= m_elems) ++t;
    t -= t % 16;
    WorkloadParams g;
    g.workload = WorkloadKind::gemm;
    g.m = g.n = g.k = 512;
    g.tile_m = g.tile_n = static_cast<std::uint32_t>(t);
    const Traffic expected = closed_form_traffic(g);
    CHECK(p.closed_form.total() == expected.read_bytes + expected.write_bytes);
    CHECK(p.sim_dram_bytes() == p.closed_form.total());
  }
  CHECK(fit_of(r, "sram", "sim_dram_bytes").fit.exponent < 0);
  CHECK(fit_of(r, "sram", "sim_dram_bytes").expected == -0.5);
}

TEST_CASE("Regression: a non-numeric measured byte count names the file, line and column", "[io]") {
  const std::string path = memwall::test::temp_path("io", "bad.csv");
  const SweepPlan plan({{"workload", {"flash2"}}, {"seq", {"256"}}, {"head_dim", {"32"}}});
  IoOptions options;
  options.config = kTeaching;
  for (const char* bad : {"abc", "1e999", "-5"}) {
    std::ofstream(path) << "workload,seq,head_dim,dram_read_bytes,dram_write_bytes\n"
                        << "flash2,256,32," << bad << ",12\n";
    const CsvTable measured = read_csv(path);
    CHECK_THROWS_WITH(run_io(plan, options, &measured),
                      Catch::Contains(":2: column dram_read_bytes: expected a byte count"));
  }
  std::remove(path.c_str());
}

TEST_CASE(
    "Measured rows join on kv_heads, seq_kv, causal and splits; a missing variant column or "
    "an empty cell is the default",
    "[io]") {
  const std::string path = memwall::test::temp_path("io", "variants.csv");
  IoOptions options;
  options.config = kTeaching;
  const SweepPlan plan({{"workload", {"flash2"}},
                        {"heads", {"2"}},
                        {"kv_heads", {"1", "2"}},
                        {"seq", {"256"}},
                        {"head_dim", {"32"}}});
  const auto join = [&](const std::string& csv) {
    std::ofstream(path) << csv;
    const CsvTable measured = read_csv(path);
    return run_io(plan, options, &measured);
  };

  // kv_heads 1 and kv_heads 2 (= heads, the default written out) are two points.
  IoReport r = join(
      "workload,heads,kv_heads,seq,seq_kv,causal,splits,head_dim,dram_read_bytes\n"
      "flash2,2,1,256,256,0,1,32,100\n"
      "flash2,2,2,256,,0,,32,200\n");
  REQUIRE(r.points.size() == 2);
  CHECK(r.points[0].measured_where == path + ":2");
  CHECK(r.points[1].measured_where == path + ":3");

  // Without the column a row is kv_heads = heads: it joins that point only.
  r = join("workload,heads,seq,head_dim,dram_read_bytes\nflash2,2,256,32,300\n");
  CHECK_FALSE(r.points[0].measured.has_value());
  CHECK(r.points[1].measured_where == path + ":2");

  // A causal or split row is another point than the unvaried one: rows that join no point of the
  // run are an error (a measured file that matches nothing is a mistake, first-hour finding 5).
  CHECK_THROWS_WITH(
      join("workload,heads,seq,head_dim,causal,splits,dram_read_bytes\n"
           "flash2,2,256,32,1,1,300\nflash2,2,256,32,0,2,300\n"),
      Catch::Contains("no \"total\" row joins any point of this run") && Catch::Contains("causal"));

  // The default written out and left out are the same point.
  CHECK_THROWS_WITH(join("workload,heads,kv_heads,seq,head_dim,dram_read_bytes\n"
                         "flash2,2,,256,32,1\nflash2,2,2,256,32,2\n"),
                    Catch::Contains(":3: the same point as line 2") &&
                        Catch::Contains("softmax_rows, kv_heads; the file has no column batch"));

  // A malformed variant cell names the file, the line and the column.
  CHECK_THROWS_WITH(
      join("workload,heads,seq,head_dim,causal,dram_read_bytes\nflash2,2,256,32,yes,1\n"),
      Catch::Contains(path + ":2: column causal: expected 0 or 1, got \"yes\""));
  CHECK_THROWS_WITH(
      join("workload,heads,seq,head_dim,kv_heads,dram_read_bytes\nflash2,2,256,32,-1,1\n"),
      Catch::Contains(path + ":2: column kv_heads: expected a positive whole number"));
  std::remove(path.c_str());
}

TEST_CASE(
    "On a Hopper config naive runs wgmma and joins no measured row (the measured naive kernels "
    "are mma.sync) unless --gemm mma_sync is asked",
    "[io][wgmma]") {
  const std::string path = memwall::test::temp_path("io", "gemm.csv");
  std::ofstream(path) << "workload,heads,seq,head_dim,dram_read_bytes\nnaive,2,256,64,300\n";
  const CsvTable measured = read_csv(path);
  IoOptions options;
  options.config = "configs/h200.yaml";
  const auto plan = [](std::vector<std::string> gemm) {
    std::vector<SweepAxis> axes = {
        {"workload", {"naive"}}, {"heads", {"2"}}, {"seq", {"256"}}, {"head_dim", {"64"}}};
    if (!gemm.empty()) axes.push_back({"gemm", gemm});
    return SweepPlan(axes);
  };
  CHECK_THROWS_WITH(run_io(plan({}), options, &measured),
                    Catch::Contains("no \"total\" row joins any point of this run"));
  const IoReport pinned = run_io(plan({"mma_sync"}), options, &measured);
  REQUIRE(pinned.points.size() == 1);
  CHECK(pinned.points[0].measured_where == path + ":2");
  std::remove(path.c_str());
}
