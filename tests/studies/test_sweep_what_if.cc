#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "models/model_source.h"
#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/sweep_flatten.h"
#include "studies/what_if.h"

using namespace memwall;

namespace {

HardwareConfig small_config() {
  HardwareConfig c;
  c.name = "test";
  c.l2.size = parse_bytes("4 MiB");
  c.hbm.bandwidth = parse_bandwidth("1.5 TB/s");
  c.sm.smem_bandwidth = parse_bandwidth("128 GB/s");
  return c;
}

/// A fake simulation: time = DRAM bytes / HBM bandwidth, DRAM bytes shrink when L2 grows.
WhatIfOutcome fake_variant(const std::vector<std::string>& overrides) {
  double bandwidth = 1.5e12;
  std::uint64_t dram = 64ull << 20;
  for (const std::string& o : overrides) {
    const std::string value = o.substr(o.find('=') + 1);
    if (o.starts_with("hbm.bandwidth=")) bandwidth = parse_bandwidth(value).bytes_per_second;
    if (o.starts_with("l2.size=")) dram = dram * (4ull << 20) / parse_bytes(value).count;
  }
  return {static_cast<Tick>(static_cast<double>(dram) / bandwidth * 1e12), Bytes{dram}};
}

}  // namespace

TEST_CASE("Each what-if is an explicit override computed from the base config", "[what-if]") {
  const HardwareConfig base = small_config();
  const Bytes footprint = parse_bytes("20 MiB");
  CHECK(make_what_if("hbm-x2", base, footprint).overrides ==
        std::vector<std::string>{"hbm.bandwidth=3000 GB/s"});
  CHECK(make_what_if("l2-x2", base, footprint).overrides ==
        std::vector<std::string>{"l2.size=8 MiB"});
  // 4 MiB doubled until it holds 2 × 20 MiB: 64 MiB.
  CHECK(make_what_if("perfect-l2", base, footprint).overrides ==
        std::vector<std::string>{"l2.size=64 MiB"});
  CHECK(make_what_if("infinite-sram", base, footprint).overrides ==
        std::vector<std::string>{"sm.smem_per_sm=1 GiB", "sm.smem_per_block=1 GiB",
                                 "sm.smem_bandwidth=128000 GB/s"});
  CHECK(parse_bandwidth("3000 GB/s").bytes_per_second == 2 * base.hbm.bandwidth.bytes_per_second);
  CHECK(make_what_if("smem-direct", base, footprint).overrides ==
        std::vector<std::string>{"sm.smem_pipe=own"});
  CHECK(make_what_if("issue-overlap", base, footprint).overrides ==
        std::vector<std::string>{"sm.issue_pipe=own"});
  CHECK(make_what_if("perfect-l2", base, parse_bytes("4 GiB")).overrides ==
        std::vector<std::string>{"l2.size=1 GiB"});
  CHECK_THROWS_WITH(parse_what_ifs("hbm-x3", base, footprint),
                    Catch::Contains("known: perfect-l2"));
  CHECK_THROWS_WITH(parse_what_ifs("hbm-x2,hbm-x2", base, footprint), Catch::Contains("twice"));
  CHECK(parse_what_ifs("perfect-l2, l2-x2", base, footprint).size() == 2);
}

TEST_CASE("The what-if table puts the base first and the time saved against it", "[what-if]") {
  const HardwareConfig base = small_config();
  const auto what_ifs = parse_what_ifs("hbm-x2,l2-x2", base, parse_bytes("20 MiB"));
  const std::vector<WhatIfRow> rows = run_what_ifs(what_ifs, fake_variant, 2);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "base");
  CHECK(rows[0].saved == 0);
  const Tick base_time = fake_variant({}).time;
  CHECK(rows[0].outcome.time == base_time);
  // Twice the bandwidth halves the time of this memory-bound fake; so does half the DRAM traffic.
  CHECK(rows[1].saved == base_time - fake_variant(what_ifs[0].overrides).time);
  CHECK(rows[1].saved_fraction == Approx(0.5).epsilon(1e-9));
  CHECK(rows[2].outcome.dram_bytes.count == (64ull << 20) / 2);

  const std::string text = format_what_if_text(rows);
  CHECK_THAT(text, Catch::Contains("--set hbm.bandwidth=3000 GB/s"));
  CHECK_THAT(text, Catch::Contains("50.0%"));
  JsonWriter w;
  w.open("", '{');
  write_what_if_json(w, "what_if", rows);
  w.close();
  const FlatRow json = flatten_json(w.take(), "json");
  CHECK(json[0] == Field{"what_if.base.description", "the config as given"});
  bool found = false;
  for (const auto& [key, value] : json) {
    if (key == "what_if.hbm-x2.saved_fraction") found = value == "0.500000";
  }
  CHECK(found);
}

TEST_CASE("What-ifs on the simulator: the base row is the plain run, each variant its override",
          "[what-if]") {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.seq = 1024;
  p.head_dim = 32;
  const WorkloadParams resolved = resolve_workload(p);
  const std::string config = "configs/hypothetical/teaching-gpu.yaml";
  const std::vector<WhatIfRow> rows =
      run_what_if_list("hbm-x2,perfect-l2", config, {}, resolved, false, 2);
  REQUIRE(rows.size() == 3);
  const HardwareConfig base = load_config(config);
  const RunResult plain = simulate(base, *make_model_source(resolved));
  CHECK(rows[0].outcome.time == plain.time);
  CHECK(rows[0].outcome.dram_bytes.count ==
        plain.traffic.dram_read_bytes + plain.traffic.dram_write_bytes);
  // The hbm-x2 row is exactly the run with its override.
  const HardwareConfig faster = load_config(config, rows[1].overrides);
  CHECK(faster.hbm.bandwidth.bytes_per_second == Approx(2 * base.hbm.bandwidth.bytes_per_second));
  CHECK(rows[1].outcome.time == simulate(faster, *make_model_source(resolved)).time);
  // An L2 twice the footprint leaves only compulsory misses: no more DRAM bytes than the base.
  CHECK(rows[2].outcome.dram_bytes <= rows[0].outcome.dram_bytes);
  CHECK_THROWS_WITH(run_what_if_list("hbm-x2", config, {"l2.sise=1 MiB"}, resolved, false),
                    Catch::Contains("did you mean"));
}

TEST_CASE(
    "smem-direct and issue-overlap let shared-memory reads and warp instructions overlap "
    "the MMAs",
    "[what-if]") {
  WorkloadParams p;
  p.workload = WorkloadKind::flash2;
  p.heads = 64;  // 512 CTAs: several share each SM and its pipes
  p.seq = 1024;
  p.head_dim = 64;
  const WorkloadParams resolved = resolve_workload(p);
  // The A100 preset books shared memory on the tensor pipe, the H200's the warp instructions.
  for (const auto& [what_if, config] : {std::pair{"smem-direct", "configs/a100-80gb.yaml"},
                                        std::pair{"issue-overlap", "configs/h200.yaml"}}) {
    INFO(what_if);
    const std::vector<WhatIfRow> rows = run_what_if_list(what_if, config, {}, resolved, false, 2);
    REQUIRE(rows.size() == 2);
    const HardwareConfig base = load_config(config);
    const HardwareConfig changed = load_config(config, rows[1].overrides);
    if (std::string(what_if) == "smem-direct") {
      REQUIRE(base.sm.smem_pipe == PipeBooking::kTensor);
      CHECK(changed.sm.smem_pipe == PipeBooking::kOwn);
    } else {
      REQUIRE(base.sm.issue_pipe == PipeBooking::kTensor);
      CHECK(changed.sm.issue_pipe == PipeBooking::kOwn);
    }
    CHECK(rows[1].outcome.time == simulate(changed, *make_model_source(resolved)).time);
    CHECK(rows[1].outcome.time < rows[0].outcome.time);  // one pipe fewer to take turns on
    // The same bytes reach the L2; which dirty lines are still there at the end follows the
    // order of the requests (with l2.far_reads: copy the copies take ways too), so the HBM
    // write-backs move a little with the timing.
    const auto base_dram = static_cast<double>(rows[0].outcome.dram_bytes.count);
    CHECK(std::abs(static_cast<double>(rows[1].outcome.dram_bytes.count) - base_dram) <=
          0.005 * base_dram);
  }
}

TEST_CASE("The what-if report of a run reads the workload back from the run's parameters",
          "[what-if]") {
  WorkloadParams p;
  p.workload = WorkloadKind::flash2;
  p.seq = 512;
  p.head_dim = 32;
  const WorkloadParams resolved = resolve_workload(p);
  const std::string config = "configs/hypothetical/teaching-gpu.yaml";
  const RunResult run = simulate(load_config(config), *make_model_source(resolved));
  const std::string text = what_if_report("l2-x2", config, {}, {run}, false);
  const std::vector<WhatIfRow> rows = run_what_if_list("l2-x2", config, {}, resolved, false);
  CHECK_THAT(text, Catch::StartsWith("\nwhat-if: flash2 on Teaching GPU\n"));
  CHECK_THAT(text, Catch::EndsWith(format_what_if_text(rows)));
  CHECK(rows[0].outcome.time == run.time);
  const FlatRow json = flatten_json(what_if_report_json("l2-x2", config, {}, {run}, false), "json");
  CHECK(json[0].first == "flash2.base.description");
}
