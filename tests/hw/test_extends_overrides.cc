// `extends` and --set: a derived config overrides only the keys it names; overrides go through the
// same parsing and validation, and their errors name "--set KEY=VALUE".
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "tests/hw/config_test_util.h"

using namespace memwall;
using namespace memwall::test;

namespace {
std::string error_of_set(const std::string& config, const std::vector<std::string>& overrides) {
  try {
    (void)load_config(config, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return {};
}
}  // namespace

TEST_CASE("A hypothetical config changes only the keys it sets over its base", "[extends]") {
  const HardwareConfig base = load_config("h100-sxm");
  const HardwareConfig smem = load_config("hypothetical/h100-2x-smem");
  CHECK(smem.sm.smem_per_sm.count == 2 * base.sm.smem_per_sm.count);
  CHECK(smem.sm.smem_per_block.count == 2 * base.sm.smem_per_block.count);
  CHECK(smem.l2.size == base.l2.size);
  CHECK(smem.hbm.bandwidth == base.hbm.bandwidth);
  CHECK(smem.name != base.name);

  const HardwareConfig hbm = load_config("h100-2x-hbm");  // bare names also find hypothetical/
  CHECK(hbm.hbm.bandwidth.bytes_per_second == 2 * base.hbm.bandwidth.bytes_per_second);
  CHECK(hbm.sm.smem_per_sm == base.sm.smem_per_sm);
}

TEST_CASE("extends accepts a path relative to the extending file", "[extends]") {
  TempDir dir;
  dir.write("base.yaml", kSmallConfig);
  const std::string path =
      dir.write("child.yaml", "extends: base.yaml\nname: Child\nl2:\n  ways: 8\n");
  const HardwareConfig c = load_config(path);
  CHECK(c.name == "Child");
  CHECK(c.l2.ways == 8);
  CHECK(c.sm.count == 4);
}

TEST_CASE("A cycle of extends is an error naming the chain", "[extends]") {
  TempDir dir;
  const std::string a = dir.write("a.yaml", "extends: b.yaml\nname: A\n");
  dir.write("b.yaml", "name: B\nextends: a.yaml\n");
  try {
    (void)load_config(a);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "extends");
    CHECK_THAT(e.reason(), Catch::StartsWith("extends cycle: "));
    CHECK(e.pos().line == 2);  // "extends: a.yaml" is on line 2 of b.yaml
    CHECK(e.pos().column == 10);
  }
}

TEST_CASE("An extends target that does not exist is named", "[extends]") {
  TempDir dir;
  const std::string path = dir.write("c.yaml", "extends: missing.yaml\n");
  CHECK_THAT(error_of_set(path, {}), Catch::Contains(":1:10: extends: no such file: "));
}

TEST_CASE("--set overrides a key after the file and its base", "[set]") {
  const HardwareConfig c =
      load_config("h200", {"l2.size=100 MiB", "sm.count=144", "efficiency.hbm=0.9"});
  CHECK(c.l2.size.count == 100ull * 1024 * 1024);
  CHECK(c.sm.count == 144);
  CHECK(c.efficiency.hbm == 0.9);
  // Quotes, as a shell user may leave them, are stripped.
  CHECK(load_config("h200", {"l2.size=\"120 MiB\""}).l2.size.count == 120ull * 1024 * 1024);
  // Per-cycle values use the (possibly overridden) SM clock.
  CHECK(load_config("teaching-gpu", {"sm.clock=2 GHz"}).xbar.port_bandwidth.bytes_per_second ==
        64 * 2e9);
}

TEST_CASE("A bad --set names the override as the place", "[set]") {
  CHECK(
      error_of_set("h200", {"l2.size=12 parsecs"}) ==
      "--set l2.size=12 parsecs: l2.size: unknown size unit \"parsecs\" in \"12 parsecs\" (use one of "
      "B, KiB, MiB, GiB, TiB, kB, KB, MB, GB, TB)");
  CHECK(error_of_set("h200", {"l2.sise=1 MiB"}) ==
        "--set l2.sise=1 MiB: l2.sise: unknown key (did you mean \"l2.size\"?)");
  CHECK_THAT(error_of_set("h200", {"l2.size"}),
             Catch::StartsWith("--set l2.size: expected KEY.PATH=VALUE"));
  // Cross-field checks see the override too: 100 MiB + 128 B is no whole number of sets.
  CHECK_THAT(error_of_set("h200", {"l2.size=104857728 B"}),
             Catch::StartsWith("--set l2.size=104857728 B: l2.size: "));
}

TEST_CASE("Finding 1: a 5,000-file extends chain is refused at depth 64 with one clear error",
          "[extends][first-hour]") {
  // The chain that once overflowed the loader's stack: c0 extends c1 extends ... extends the base.
  TempDir dir;
  constexpr int kFiles = 5000;
  dir.write("c" + std::to_string(kFiles) + ".yaml", kSmallConfig);
  for (int i = kFiles - 1; i >= 0; --i) {
    dir.write("c" + std::to_string(i) + ".yaml", "extends: c" + std::to_string(i + 1) + ".yaml\n");
  }
  try {
    (void)load_config(dir.path() + "/c0.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "extends");
    CHECK_THAT(e.reason(), Catch::StartsWith("extends chain deeper than 64 files"));
  }
  // A chain of 64 files still loads.
  TempDir ok;
  ok.write("c64.yaml", kSmallConfig);
  for (int i = 63; i >= 0; --i) {
    ok.write("c" + std::to_string(i) + ".yaml", "extends: c" + std::to_string(i + 1) + ".yaml\n");
  }
  CHECK(load_config(ok.path() + "/c1.yaml").name == "Small");
}

TEST_CASE("Finding 6: a YAML file with several documents is refused, naming the second",
          "[extends][first-hour]") {
  TempDir dir;
  const std::string file = dir.write("two.yaml", kSmallConfig + "---\nname: Other\n");
  try {
    (void)load_config(file);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.reason(), Catch::StartsWith("a second YAML document starts here"));
    CHECK(e.pos().file == file);
    // The `---` line: right after the small config's lines.
    CHECK(e.pos().line ==
          static_cast<int>(std::count(kSmallConfig.begin(), kSmallConfig.end(), '\n')) + 1);
  }
  // A leading `---` (an explicit start of the only document) and a trailing `...` are fine.
  CHECK(load_config(dir.write("one.yaml", "---\n" + kSmallConfig + "...\n")).name == "Small");
}

TEST_CASE("Regression (fuzzer): a malformed file on which YAML::LoadAll loops is refused at once",
          "[extends][fuzz]") {
  // tests/fuzz/corpus/config/loadall-loop.yaml: 321 bytes the config fuzzer found; the first
  // version of the multi-document check parsed every document with YAML::LoadAll, which never
  // returned on it.
  CHECK_THROWS_AS(load_config("tests/fuzz/corpus/config/loadall-loop.yaml"), ConfigError);
}
