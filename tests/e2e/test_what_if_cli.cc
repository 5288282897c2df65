// `memwall run --what-if`: each variant is an explicit config override derived from the config,
// shown beside the base run, with its JSON table.
#include <catch2/catch.hpp>

#include <string>

#include "sim/core/units.h"
#include "sim/hw/config_loader.h"
#include "tests/support/cli.h"

using namespace memwall;
using memwall::test::run_memwall;

TEST_CASE("run --what-if shows each variant's override computed from the config",
          "[cli][what-if]") {
  const HardwareConfig hw = load_config("configs/hypothetical/teaching-gpu.yaml");
  const std::string json = memwall::test::temp_path("what_if", "w.json");
  const auto r = run_memwall(
      "run --config configs/hypothetical/teaching-gpu.yaml --workload naive --seq 256 "
      "--head-dim 32 --what-if hbm-x2,l2-x2 --what-if-json " +
      json);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("what-if: naive"));
  // The override is twice the configured bandwidth, written in GB/s.
  const double doubled_gb_per_s = 2 * hw.hbm.bandwidth.bytes_per_second / 1e9;
  CHECK_THAT(r.out,
             Catch::Contains("--set hbm.bandwidth=" +
                             std::to_string(static_cast<long long>(doubled_gb_per_s)) + " GB/s"));
  CHECK_THAT(r.out, Catch::Contains("--set l2.size=" + format_bytes(Bytes{2 * hw.l2.size.count})));
  const std::string text = memwall::test::slurp(json);
  CHECK_THAT(text, Catch::Contains("\"hbm-x2\""));
  CHECK_THAT(text, Catch::Contains("\"saved_s\""));
}

TEST_CASE("run --what-if with an unknown variant is a usage error", "[cli][what-if]") {
  const auto r = run_memwall(
      "run --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 256 "
      "--head-dim 32 --block-kv 32 --what-if hbm-x3");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("hbm-x3"));
}

TEST_CASE("run --what-if-json without --what-if is a usage error", "[cli][what-if]") {
  const auto r = run_memwall(
      "run --config configs/hypothetical/teaching-gpu.yaml --workload flash2 --seq 256 "
      "--head-dim 32 --block-kv 32 --what-if-json /tmp/x.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--what-if-json needs --what-if"));
}
