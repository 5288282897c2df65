#include <atomic>
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/core/json_writer.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "sim/report/report_json.h"
#include "studies/sweep_csv.h"
#include "studies/sweep_flatten.h"
#include "studies/sweep_plan.h"
#include "studies/sweep_runner.h"
#include "studies/sweep_workload.h"
#include "studies/workload_config.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

using test::slurp;

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string temp_path(const std::string& name) { return test::temp_path("sweep", name); }

/// A fake simulator: its figures are closed forms of the point's parameters.
FlatRow fake_runner(const SweepPoint& p) {
  const std::uint64_t seq = std::stoull(p.at("seq"));
  const std::uint64_t d = std::stoull(p.at("head_dim"));
  return {{"dram_bytes", std::to_string(4 * seq * d + 4 * seq * seq)},
          {"kernels.qk.ctas", std::to_string(seq / 64)}};
}

SweepPlan small_plan() {
  return SweepPlan({{"seq", expand_values("64..512x2", "--seq")},
                    {"head_dim", expand_values("32,64", "--head-dim")}});
}

}  // namespace

TEST_CASE("Value lists expand single values, geometric and additive ranges", "[sweep]") {
  CHECK(expand_values("512,1024,2048", "--seq") == std::vector<std::string>{"512", "1024", "2048"});
  CHECK(expand_values("512..4096x2", "--seq") ==
        std::vector<std::string>{"512", "1024", "2048", "4096"});
  CHECK(expand_values("64..256+64", "--head-dim") ==
        std::vector<std::string>{"64", "128", "192", "256"});
  CHECK(expand_values("100..300x2", "--seq") == std::vector<std::string>{"100", "200"});
  CHECK(expand_values("fp16, fp32", "--dtype") == std::vector<std::string>{"fp16", "fp32"});
  CHECK(expand_values("16,32..64x2", "--seq") == std::vector<std::string>{"16", "32", "64"});
}

TEST_CASE("Bad value lists are rejected naming the option and the reason", "[sweep]") {
  CHECK_THROWS_WITH(expand_values("512,,1024", "--seq"), Catch::Contains("--seq: empty value"));
  CHECK_THROWS_WITH(expand_values("512..64x2", "--seq"), Catch::Contains("below the start"));
  CHECK_THROWS_WITH(expand_values("1..8x1", "--seq"), Catch::Contains("factor must be at least 2"));
  CHECK_THROWS_WITH(expand_values("1..8", "--seq"), Catch::Contains("expected A..BxF"));
  CHECK_THROWS_WITH(expand_values("a..8x2", "--seq"), Catch::Contains("start is not a whole"));
  CHECK_THROWS_WITH(expand_values("1..10000000+1", "--seq"), Catch::Contains("100000"));
  CHECK_THROWS_AS(parse_shard("3/3"), UsageError);
  CHECK_THROWS_AS(parse_shard("1"), UsageError);
  CHECK(parse_shard("2/5").index == 2);
}

TEST_CASE("Points are numbered with the first axis slowest and the last fastest", "[sweep]") {
  const SweepPlan plan = small_plan();
  REQUIRE(plan.count() == 4 * 2);
  CHECK(plan.point(0).params == FlatRow{{"seq", "64"}, {"head_dim", "32"}});
  CHECK(plan.point(1).params == FlatRow{{"seq", "64"}, {"head_dim", "64"}});
  CHECK(plan.point(2).params == FlatRow{{"seq", "128"}, {"head_dim", "32"}});
  CHECK(plan.point(7).params == FlatRow{{"seq", "512"}, {"head_dim", "64"}});
  CHECK(plan.shard_indices({1, 3}) == std::vector<std::uint64_t>{1, 4, 7});
  CHECK_THROWS_AS(SweepPlan({{"seq", {"1"}}, {"seq", {"2"}}}), UsageError);
}

TEST_CASE("A JSON report flattens to dotted keys, kernels by name, numbers verbatim", "[sweep]") {
  const FlatRow row = flatten_json(
      R"({"time_s": 1.250e-03, "stall": {"compute": 0.5, "memory": 0},
          "dram_bytes_by_tensor": {"Q": {"read": 1024, "write": 0}},
          "kernels": [{"name": "qk", "ctas": 16}, {"name": "pv", "ctas": 8}],
          "list": [1, 2], "config": "a,b \"c\"", "ok": true})",
      "report");
  const FlatRow expected{{"time_s", "1.250e-03"},
                         {"stall.compute", "0.5"},
                         {"stall.memory", "0"},
                         {"dram_bytes_by_tensor.Q.read", "1024"},
                         {"dram_bytes_by_tensor.Q.write", "0"},
                         {"kernels.qk.ctas", "16"},
                         {"kernels.pv.ctas", "8"},
                         {"list.0", "1"},
                         {"list.1", "2"},
                         {"config", "a,b \"c\""},
                         {"ok", "true"}};
  CHECK(row == expected);
  CHECK_THROWS_WITH(flatten_json(R"({"a": 1,)", "r.json"), Catch::Contains("r.json: byte"));
  CHECK_THROWS_WITH(flatten_json(R"({"a": 1, "a": 2})", "r.json"), Catch::Contains("twice"));
}

TEST_CASE("A document written as flat cells gives the cells of its JSON text, flattened",
          "[sweep]") {
  // The same document written twice: as JSON, then flattened, and directly as cells.
  const auto write = [](DocumentWriter& w) {
    w.open("", '{');
    w.number("time_s", 1.25e-3);
    w.number("inf", std::numeric_limits<double>::infinity());
    w.open("stall", '{', DocumentWriter::Layout::kInline);
    w.number("compute", 0.5);
    w.integer("memory", 0);
    w.close();
    w.open("empty", '{');
    w.close();
    w.open("kernels", '[');
    for (const char* name : {"qk", "pv"}) {
      w.open("", '{');
      w.string("name", name);
      w.integer("ctas", 16);
      w.open("resources", '{');
      w.boolean("busy", true);
      w.close();
      w.close();
    }
    w.open("", '{');  // no name: placed by its index
    w.integer("ctas", 1);
    w.close();
    w.close();
    w.open("list", '[');
    w.string("", "x");
    w.param("", "42");
    w.param("", "auto");
    w.null("");
    w.close();
    w.string("config", "a,b \"c\"");
    w.raw("fixed", "1.000000000e+00");
    w.close();
  };
  JsonWriter json;
  write(json);
  const FlatRow from_json = flatten_json(json.take(), "json");
  FlatRowWriter cells("cells");
  write(cells);
  const FlatRow direct = cells.take();
  CHECK(direct == from_json);
  CHECK(direct.size() == 15);
  CHECK(direct[6] == FlatRow::value_type{"kernels.pv.ctas", "16"});
  CHECK(direct[8] == FlatRow::value_type{"kernels.2.ctas", "1"});

  FlatRowWriter twice("report of point 3");
  twice.open("", '{');
  twice.integer("a", 1);
  twice.integer("a", 2);
  CHECK_THROWS_WITH(twice.close(),
                    Catch::Contains("report of point 3") && Catch::Contains("twice"));
}

TEST_CASE("CSV cells with commas and quotes round-trip", "[sweep]") {
  const std::vector<std::string> cells{"plain", "a,b", "say \"hi\"", ""};
  const std::string line = csv_line(cells);
  CHECK(line == "plain,\"a,b\",\"say \"\"hi\"\"\",\n");
  CHECK(csv_split(line.substr(0, line.size() - 1), "x") == cells);
}

TEST_CASE("A sweep's CSV is byte-identical for any thread count", "[sweep]") {
  const SweepPlan plan = small_plan();
  const std::string one = temp_path("j1.csv");
  const std::string four = temp_path("j4.csv");
  SweepOptions options;
  options.output = one;
  options.threads = 1;
  const SweepSummary s1 = run_sweep(plan, fake_runner, options);
  options.output = four;
  options.threads = 4;
  run_sweep(plan, fake_runner, options);
  CHECK(s1.points == plan.count());
  const std::string text = slurp(one);
  CHECK(text == slurp(four));
  CHECK(!exists(partial_path(one)));

  const CsvTable table = read_csv(one);
  CHECK(table.header ==
        std::vector<std::string>{"seq", "head_dim", "dram_bytes", "kernels.qk.ctas"});
  REQUIRE(table.rows.size() == plan.count());
  for (std::uint64_t i = 0; i < plan.count(); ++i) {
    const SweepPoint p = plan.point(i);
    CHECK(table.rows[i][0] == p.at("seq"));
    CHECK(table.rows[i][2] == fake_runner(p)[0].second);
  }
  std::remove(one.c_str());
  std::remove(four.c_str());
}

TEST_CASE("Merged shards equal the file of one unsharded run", "[sweep]") {
  const SweepPlan plan = small_plan();
  const std::string whole = temp_path("whole.csv");
  SweepOptions options;
  options.output = whole;
  run_sweep(plan, fake_runner, options);
  std::vector<std::string> shards;
  for (std::uint64_t i = 0; i < 3; ++i) {
    options.output = temp_path("shard" + std::to_string(i) + ".csv");
    options.shard = {i, 3};
    options.threads = 2;
    run_sweep(plan, fake_runner, options);
    shards.push_back(options.output);
  }
  const CsvTable shard1 = read_csv(shards[1]);
  CHECK(shard1.header[0] == "point");
  CHECK(shard1.rows.size() == plan.shard_indices({1, 3}).size());
  CHECK(merge_shards({shards[2], shards[0], shards[1]}) == slurp(whole));

  SECTION("a missing shard is named as missing points") {
    CHECK_THROWS_WITH(merge_shards({shards[0], shards[1]}),
                      Catch::Contains("point 2 of 8 is in none of the shard files"));
  }
  SECTION("a shard given twice is a duplicate point") {
    CHECK_THROWS_WITH(merge_shards({shards[0], shards[1], shards[0], shards[2]}),
                      Catch::Contains("also appears at"));
  }
  SECTION("an unsharded file is not a shard") {
    CHECK_THROWS_WITH(merge_shards({whole}), Catch::Contains("not a shard file"));
  }
  std::remove(whole.c_str());
  for (const auto& s : shards) std::remove(s.c_str());
}

TEST_CASE("A resumed sweep keeps finished rows and ends with the uninterrupted CSV", "[sweep]") {
  const SweepPlan plan = small_plan();
  const std::string reference = temp_path("ref.csv");
  const std::string out = temp_path("resumed.csv");
  SweepOptions options;
  options.output = reference;
  options.identity = "fake";
  run_sweep(plan, fake_runner, options);

  // First attempt fails at point 5 after finishing the points before it (one thread, in order).
  options.output = out;
  const PointRunner failing = [](const SweepPoint& p) -> FlatRow {
    if (p.index == 5) throw Error("simulated failure");
    return fake_runner(p);
  };
  CHECK_THROWS_WITH(run_sweep(plan, failing, options), Catch::Contains("simulated failure"));
  CHECK(!exists(out));
  REQUIRE(exists(partial_path(out)));
  {  // an interruption mid-write leaves a torn last line, which resume ignores
    std::ofstream torn(partial_path(out), std::ios::app | std::ios::binary);
    torn << "6,dram_bytes,12";
  }

  std::atomic<int> calls{0};
  const PointRunner counting = [&](const SweepPoint& p) {
    ++calls;
    return fake_runner(p);
  };
  options.resume = true;
  const SweepSummary s = run_sweep(plan, counting, options);
  CHECK(s.resumed == 5);
  CHECK(calls == static_cast<int>(plan.count()) - 5);
  CHECK(slurp(out) == slurp(reference));
  CHECK(!exists(partial_path(out)));

  SECTION("a sidecar of another sweep is refused") {
    std::ofstream(partial_path(out)) << "# memwall sweep partial 0000000000000000\n";
    CHECK_THROWS_WITH(run_sweep(plan, counting, options), Catch::Contains("different sweep"));
    std::remove(partial_path(out).c_str());
  }
  std::remove(reference.c_str());
  std::remove(out.c_str());
}

TEST_CASE("Points with different figure names cannot share a CSV", "[sweep]") {
  const SweepPlan plan = small_plan();
  const PointRunner odd = [](const SweepPoint& p) -> FlatRow {
    if (p.index == 3) return {{"other", "1"}};
    return fake_runner(p);
  };
  SweepOptions options;
  options.output = temp_path("odd.csv");
  CHECK_THROWS_WITH(run_sweep(plan, odd, options),
                    Catch::Contains("point 3 has other figures than point 0"));
  std::remove(partial_path(options.output).c_str());
}

TEST_CASE("A point splits into workload parameters and config overrides by the dot", "[sweep]") {
  const SweepPlan plan({{"workload", {"flash2"}},
                        {"seq", {"2048"}},
                        {"sram_bytes", {"64 KiB"}},
                        {"l2.size", {"25 MiB"}}});
  const SweepPoint p = plan.point(0);
  const WorkloadParams params = workload_params_of(p);
  CHECK(params.workload == WorkloadKind::flash2);
  CHECK(params.seq == 2048);
  CHECK(params.sram_bytes == 64u * 1024u);
  CHECK(config_overrides_of(p) == std::vector<std::string>{"l2.size=25 MiB"});
  WorkloadParams bad;
  CHECK_THROWS_WITH(set_workload_param(bad, "seq", "12x"),
                    Catch::Contains("seq: expected a whole number"));
  CHECK_THROWS_WITH(set_workload_param(bad, "sram_bytes", "64 parsecs"),
                    Catch::Contains("sram_bytes"));
}

TEST_CASE("Regression: a shard claiming 2^64-1 points is refused without allocating for them",
          "[sweep]") {
  const std::string path = temp_path("huge.csv");
  std::ofstream(path) << "point,points,seq\n0,18446744073709551615,128\n";
  CHECK_THROWS_WITH(
      merge_shards({path}),
      Catch::Contains("point 1 of 18446744073709551615 is in none of the shard files"));
  std::ofstream(path) << "point,points,seq\n0,0,128\n";
  CHECK_THROWS_WITH(merge_shards({path}), Catch::Contains(":2: a sweep of 0 points"));
  std::remove(path.c_str());
}

TEST_CASE("A sweep point's cells are its run report's JSON, flattened", "[sweep]") {
  // The columns used to come from writing the JSON report and parsing it back; they come from
  // the report's members directly now, and must be the same cells in the same order.
  const HardwareConfig h200 = load_config("h200");
  for (const char* workload : {"naive", "flash2-bwd"}) {
    const SweepPlan plan({{"workload", {workload}},
                          {"seq", {"512"}},
                          {"head_dim", {"64"}},
                          {"heads", {"2"}},
                          {"kv_heads", {"1"}},
                          {"causal", {"1"}}});
    const WorkloadParams params =
        resolve_workload_options(workload_params_of(plan.point(0)), &h200);
    const RunResult result = simulate_workload(h200, params);
    FlatRowWriter cells("cells");
    write_run_document(cells, result);
    INFO(workload);
    const FlatRow direct = cells.take();
    CHECK(direct == flatten_json(run_to_json(result), "json"));
    CHECK(direct.size() > 50);
  }
}
