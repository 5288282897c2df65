#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "explain/roofline.h"
#include "sim/core/error.h"
#include "sim/core/json.h"
#include "tests/support/cli.h"

using namespace memwall;
using namespace memwall::explain;

namespace {

RooflineChip test_chip() {
  RooflineChip c;
  c.name = "test chip";
  c.peak_tensor_flops = 1000e12;
  c.peak_fp32_flops = 50e12;
  c.peak_sfu_ops = 4e12;
  c.hbm_bandwidth = 4e12;
  c.ridge_tensor = c.peak_tensor_flops / c.hbm_bandwidth;
  c.ridge_fp32 = c.peak_fp32_flops / c.hbm_bandwidth;
  return c;
}

std::string fixture() {
  return memwall::test::slurp(std::string(MEMWALL_TEST_DATA) + "/roofline_report.json");
}

}  // namespace

TEST_CASE("Attainable throughput is the lower of the peak and intensity times bandwidth",
          "[roofline]") {
  const RooflineChip c = test_chip();
  CHECK(attainable_flops(c.peak_tensor_flops, c.hbm_bandwidth, 10.0) == 10.0 * c.hbm_bandwidth);
  CHECK(attainable_flops(c.peak_tensor_flops, c.hbm_bandwidth, c.ridge_tensor) ==
        Approx(c.peak_tensor_flops));
  CHECK(attainable_flops(c.peak_tensor_flops, c.hbm_bandwidth, 1e4) == c.peak_tensor_flops);
  const Roofline r = make_roofline(c, {1.0, 100.0, 1000.0});
  REQUIRE(r.points.size() == 3u);
  CHECK(r.points[0].attainable_tensor == 1.0 * c.hbm_bandwidth);
  CHECK(r.points[1].attainable_fp32 == c.peak_fp32_flops);
  CHECK(r.points[1].attainable_tensor == 100.0 * c.hbm_bandwidth);
  CHECK(r.points[2].attainable_tensor == c.peak_tensor_flops);
}

TEST_CASE("A report's kernels land at flops per DRAM byte and flops per second", "[roofline]") {
  const RooflineChip c = test_chip();
  const std::vector<KernelPoint> k = read_report_kernels(fixture(), "roofline_report.json", c);
  REQUIRE(k.size() == 3u);
  CHECK(k[0].name == "naive/qk");
  CHECK(k[0].dram_bytes == 30000000u + 10000000u);
  CHECK(k[0].intensity == Approx(4e9 / 4e7));
  CHECK(k[0].achieved_flops == Approx(4e9 / 0.001));
  CHECK(k[0].roof_flops == Approx(std::min(c.peak_tensor_flops, 100.0 * c.hbm_bandwidth)));
  CHECK(k[0].fraction_of_roof == Approx(4e12 / 400e12));
  CHECK(k[0].plotted);
  CHECK(k[1].intensity == Approx(2e9 / 3e8));
  CHECK(std::isinf(k[2].intensity));
  CHECK_FALSE(k[2].plotted);
  const std::string text = format_roofline(make_roofline(c, {}, k));
  CHECK(text.find("no DRAM bytes") != std::string::npos);
  CHECK(roofline_json(make_roofline(c, {}, k)).find("\"intensity\": null") != std::string::npos);
}

TEST_CASE("A kernel's time bound is its slowest resource alone at its peak", "[roofline]") {
  const RooflineChip c = test_chip();
  // One kernel per binding resource: (DRAM bytes, tensor FLOPs, fp32 FLOPs, SFU ops).
  const std::uint64_t rows[4][4] = {{8'000'000'000, 1'000'000'000'000, 0, 0},
                                    {4'000'000, 1'000'000'000'000, 10'000'000'000, 1'000'000'000},
                                    {4'000'000, 0, 100'000'000'000, 0},
                                    {4'000'000, 512'000'000'000, 1'000'000'000, 4'000'000'000}};
  std::string text = R"({"kernels": [)";
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t* r = rows[i];
    const std::uint64_t flops = r[1] + r[2] + r[3];
    text += std::string(i ? ", " : "") + R"({"name": "k)" + std::to_string(i) + R"(", "flops": )" +
            std::to_string(flops) + R"(, "dram_read_bytes": )" + std::to_string(r[0]) +
            R"(, "dram_write_bytes": 0, "time_s": 0.004, "tensor_flops": )" + std::to_string(r[1]) +
            R"(, "fp32_flops": )" + std::to_string(r[2]) + R"(, "sfu_ops": )" +
            std::to_string(r[3]) + "}";
  }
  text += "]}";
  const std::vector<KernelPoint> k = read_report_kernels(text, "bounds.json", c);
  REQUIRE(k.size() == 4u);
  const char* by[4] = {"HBM", "tensor", "fp32", "SFU"};
  for (int i = 0; i < 4; ++i) {
    INFO("kernel " << i);
    const std::uint64_t* r = rows[i];
    REQUIRE(k[i].has_pipes);
    CHECK(k[i].hbm_s == Approx(static_cast<double>(r[0]) / c.hbm_bandwidth));
    CHECK(k[i].tensor_s == Approx(static_cast<double>(r[1]) / c.peak_tensor_flops));
    CHECK(k[i].fp32_s == Approx(static_cast<double>(r[2]) / c.peak_fp32_flops));
    CHECK(k[i].sfu_s == Approx(static_cast<double>(r[3]) / c.peak_sfu_ops));
    CHECK(k[i].bound_s == std::max({k[i].hbm_s, k[i].tensor_s, k[i].fp32_s, k[i].sfu_s}));
    CHECK(k[i].bound_by == by[i]);
  }
  const Roofline roof = make_roofline(c, {}, k);
  const std::string out = format_roofline(roof);
  CHECK(out.find("time bounds") != std::string::npos);
  // The SFU-bound kernel: 4e9 ops at 4e12 op/s = 1 ms of the 4 ms it took.
  const std::size_t at = out.find("\nD  run/k3 ", out.find("time bounds"));
  REQUIRE(at != std::string::npos);
  const std::string row = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  CHECK(row.find(" SFU ") != std::string::npos);
  CHECK(row.find(" 4 ms ") != std::string::npos);
  CHECK(row.ends_with(" 25.0%"));
  CHECK(roofline_json(roof).find("\"bound_by\": \"SFU\"") != std::string::npos);
}

TEST_CASE("A report without flops by pipe places its kernels and says it has no bounds",
          "[roofline]") {
  const RooflineChip c = test_chip();
  const std::vector<KernelPoint> k = read_report_kernels(fixture(), "roofline_report.json", c);
  REQUIRE_FALSE(k.empty());
  for (const KernelPoint& p : k) CHECK_FALSE(p.has_pipes);
  // The table is there only when some kernel has the split.
  CHECK(format_roofline(make_roofline(c, {}, k)).find("time bounds") == std::string::npos);
  std::vector<KernelPoint> mixed = k;
  mixed.front().has_pipes = true;
  CHECK(format_roofline(make_roofline(c, {}, mixed)).find("no bounds: the report has no flops") !=
        std::string::npos);
}

TEST_CASE("A report that is an array of runs names each kernel by its run", "[roofline]") {
  const std::string two =
      "[{\"workload\": {\"name\": \"a\"}, \"kernels\": [{\"name\": \"k\", \"flops\": 10, "
      "\"dram_read_bytes\": 1, \"dram_write_bytes\": 1, \"time_s\": 1}]}, "
      "{\"kernels\": []}]";
  const std::vector<KernelPoint> k = read_report_kernels(two, "two", test_chip());
  REQUIRE(k.size() == 1u);
  CHECK(k[0].name == "a/k");
  CHECK(k[0].intensity == 5.0);
}

TEST_CASE("A report with a missing or mistyped key names the key and the byte offset",
          "[roofline]") {
  const RooflineChip c = test_chip();
  CHECK_THROWS_WITH(read_report_kernels("{\"kernels\": [{\"name\": \"k\"}]}", "r.json", c),
                    Catch::Contains("r.json: byte 13: kernels[0].flops: missing"));
  CHECK_THROWS_WITH(
      read_report_kernels("{\"kernels\": [{\"name\": \"k\", \"flops\": \"x\"}]}", "r.json", c),
      Catch::Contains("kernels[0].flops: expected a non-negative number"));
  CHECK_THROWS_WITH(read_report_kernels("{}", "r.json", c), Catch::Contains("kernels: missing"));
  CHECK_THROWS_AS(read_report_kernels("{\"kernels\": [1,]}", "r.json", c), UsageError);
}

TEST_CASE("The JSON reader parses every kind of value and rejects bad syntax with an offset",
          "[json]") {
  const JsonValue v =
      parse_json(R"( {"a": [1, -2.5e3, true, false, null], "s": "x\"\u00e9\n"} )", "t");
  REQUIRE(v.type == JsonValue::Type::object);
  const JsonValue* a = v.get("a");
  REQUIRE(a != nullptr);
  REQUIRE(a->items.size() == 5u);
  CHECK(a->items[1].number == -2500.0);
  CHECK(a->items[1].text == "-2.5e3");
  CHECK(a->items[2].boolean);
  CHECK(a->items[4].type == JsonValue::Type::null);
  CHECK(v.get("s")->text == "x\"\xc3\xa9\n");
  CHECK_THROWS_WITH(parse_json("{\"a\": 1,}", "t"),
                    Catch::Contains("t: byte 8: expected a member name"));
  CHECK_THROWS_WITH(parse_json("[1 2]", "t"), Catch::Contains("byte 3: expected ',' or ']'"));
  CHECK_THROWS_WITH(parse_json("01", "t"), Catch::Contains("unexpected content"));
  CHECK_THROWS_WITH(parse_json("\"abc", "t"), Catch::Contains("unterminated string"));
  CHECK_THROWS_WITH(parse_json("1e999", "t"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(parse_json(std::string(300, '['), "t"), Catch::Contains("nesting"));
  CHECK_THROWS_WITH(parse_json("", "t"), Catch::Contains("unexpected end"));
}

TEST_CASE("Negative intensities and empty chips are usage errors", "[roofline]") {
  CHECK_THROWS_AS(make_roofline(test_chip(), {-1.0}), UsageError);
  CHECK_THROWS_AS(make_roofline(RooflineChip{}, {}), UsageError);
}

TEST_CASE("The chart is the asked size and marks the roofs and the kernels", "[roofline]") {
  const RooflineChip c = test_chip();
  const Roofline r = make_roofline(c, {10.0}, read_report_kernels(fixture(), "f", c));
  const std::string text = format_roofline(r, 60, 16);
  const std::size_t start = text.find("FLOP/s (log)\n");
  REQUIRE(start != std::string::npos);
  std::istringstream lines(text.substr(start));
  std::string line;
  std::getline(lines, line);
  int rows = 0;
  std::string plot;
  while (std::getline(lines, line) && line.find('|') != std::string::npos) {
    CHECK(line.size() == 8u + 60u);
    plot += line;
    ++rows;
  }
  CHECK(rows == 16);
  for (char mark : {'/', '=', '-', 'o', 'A', 'B'}) CHECK(plot.find(mark) != std::string::npos);
  CHECK(plot.find('+') == std::string::npos);

  // A second copy of kernel A lands in its cell: the cell says '+', and A is gone from the chart.
  std::vector<KernelPoint> twice = r.kernels;
  twice.push_back(twice.front());
  const std::string both = format_roofline(make_roofline(c, {10.0}, twice), 60, 16);
  const std::string chart = both.substr(both.find("FLOP/s (log)\n"));
  const std::string rows_only = chart.substr(0, chart.find("       +---"));
  CHECK(rows_only.find('+') != std::string::npos);
  CHECK(rows_only.find('A') == std::string::npos);
}
