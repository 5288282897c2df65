// End-to-end tests of the explainer commands (ledger, race, traffic, roofline) through the
// built `memwall` executable.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/closed_forms.h"
#include "sim/core/json.h"
#include "sim/hw/config.h"
#include "sim/hw/config_loader.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

using memwall::test::run_memwall;
using memwall::test::slurp;
using Result = memwall::test::CliResult;

std::string temp_path(const std::string& name) {
  return memwall::test::temp_path("explain_cli", name);
}

}  // namespace

TEST_CASE("memwall ledger prints the same ledger twice and rejects a zero row", "[cli][explain]") {
  const Result a = run_memwall("ledger --row-len 64 --tile 16 --late-max --seed 9");
  const Result b = run_memwall("ledger --row-len 64 --tile 16 --late-max --seed 9");
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("streamed, no rescale") != std::string::npos);
  const Result bad = run_memwall("ledger --row-len 0 --tile 4");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--row-len must be at least 1") != std::string::npos);
}

TEST_CASE("memwall race prints one row per N with the CPU caveat", "[cli][explain]") {
  const Result r = run_memwall("race --seq 32,64 --head-dim 8 --repeat 1");
  CHECK(r.code == 0);
  CHECK(r.out.find("no HBM/SRAM split") != std::string::npos);
  CHECK(r.out.find("MISMATCH") == std::string::npos);
  CHECK(run_memwall("race --seq 0 --head-dim 8").code == 2);
}

TEST_CASE("memwall traffic --json carries the closed-form bytes", "[cli][explain]") {
  const std::string json = temp_path("traffic.json");
  const Result r =
      run_memwall("traffic --seq 2048 --head-dim 64 --heads 2 --sram \"64 KiB\" --json " + json);
  REQUIRE(r.code == 0);
  const JsonValue doc = parse_json(slurp(json), json);
  std::filesystem::remove(json);
  const JsonValue* variants = doc.get("variants");
  REQUIRE(variants != nullptr);
  REQUIRE(variants->items.size() == 4u);  // naive, flash1, flash2, flash3
  for (const JsonValue& v : variants->items) {
    WorkloadParams p;
    p.workload = parse_workload_kind(v.get("workload")->text);
    p.seq = 2048;
    p.head_dim = 64;
    p.heads = 2;
    p.sram_bytes = 64 * 1024;
    const Traffic t = closed_form_traffic(p);
    CHECK(v.get("read_bytes")->text == std::to_string(t.read_bytes));
    CHECK(v.get("write_bytes")->text == std::to_string(t.write_bytes));
  }
  CHECK(run_memwall("traffic --seq 64 --head-dim 64 --sram 12").code == 2);
}

TEST_CASE("memwall traffic takes the attention variants and its bytes are their closed forms",
          "[cli][explain][variants]") {
  const std::string json = temp_path("traffic_variants.json");
  const Result r = run_memwall(
      "traffic --seq 1 --seq-kv 4096 --head-dim 64 --heads 8 --kv-heads 2 "
      "--config h200 --splits auto --json " +
      json);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Nkv = 4096, kv heads 2"));
  const JsonValue doc = parse_json(slurp(json), json);
  std::filesystem::remove(json);
  CHECK(doc.get("kv_heads")->text == "2");
  CHECK(doc.get("seq_kv")->text == "4096");
  for (const JsonValue& v : doc.get("variants")->items) {
    WorkloadParams p;
    p.workload = parse_workload_kind(v.get("workload")->text);
    p.seq = 1;
    p.seq_kv = 4096;
    p.head_dim = 64;
    p.heads = 8;
    p.kv_heads = 2;
    p.sram_bytes = p.smem_limit_bytes = 232448;  // the h200 preset's smem_per_block
    if (p.workload == WorkloadKind::flash2)
      p.splits = static_cast<std::uint32_t>(std::stoul(v.get("splits")->text));
    CHECK(v.get("read_bytes")->text == std::to_string(closed_form_traffic(p).read_bytes));
  }
  // Causal: the FLOPs are those of the visible pairs, Nq(Nkv − Nq) + Nq(Nq + 1)/2 per head.
  const Result c =
      run_memwall("traffic --seq 1000 --seq-kv 3000 --head-dim 64 --causal --sram 64KiB");
  REQUIRE(c.code == 0);
  char flops[64];
  std::snprintf(flops, sizeof flops, "%.6e", 4.0 * (1000.0 * 2000.0 + 1000.0 * 1001.0 / 2) * 64);
  CHECK_THAT(c.out, Catch::Contains(flops));
  CHECK(run_memwall("traffic --seq 300 --seq-kv 200 --head-dim 64 --causal --sram 64KiB").code ==
        2);
}

TEST_CASE("memwall roofline's ridge point is the config's peak over its HBM bandwidth",
          "[cli][explain]") {
  const HardwareConfig config = load_config("h200");
  const double peak = config.sm.tensor_flops_per_cycle * config.sm.clock.hertz * config.sm.count;
  const double ridge = peak / config.hbm.bandwidth.bytes_per_second;
  const std::string json = temp_path("roof.json");
  const Result r =
      run_memwall("roofline --config h200 --intensity 2 --intensity 5000 --json " + json);
  REQUIRE(r.code == 0);
  const JsonValue doc = parse_json(slurp(json), json);
  std::filesystem::remove(json);
  CHECK(doc.get("chip")->get("ridge_point_tensor")->number == Approx(ridge).epsilon(1e-8));
  const JsonValue& points = *doc.get("points");
  REQUIRE(points.items.size() == 2u);
  CHECK(points.items[0].get("attainable_tensor")->number ==
        Approx(2 * config.hbm.bandwidth.bytes_per_second).epsilon(1e-8));
  CHECK(points.items[1].get("attainable_tensor")->number == Approx(peak).epsilon(1e-8));
}

TEST_CASE("memwall roofline places a report's kernels and rejects a bad report", "[cli][explain]") {
  const Result r = run_memwall(std::string("roofline --config h200 --from ") + MEMWALL_TEST_DATA +
                               "/roofline_report.json");
  CHECK(r.code == 0);
  CHECK(r.out.find("naive/qk") != std::string::npos);
  CHECK(r.out.find("naive/softmax") != std::string::npos);
  const std::string bad = temp_path("bad.json");
  {
    std::ofstream out(bad);
    out << "{\"kernels\": [{\"name\": \"k\", \"flops\": -1}]}";
  }
  const Result e = run_memwall("roofline --config h200 --from " + bad);
  std::filesystem::remove(bad);
  CHECK(e.code == 2);
  CHECK(e.out.find("kernels[0].flops") != std::string::npos);
  CHECK(run_memwall("roofline --config h200 --from /nonexistent/report.json").code == 2);
}
