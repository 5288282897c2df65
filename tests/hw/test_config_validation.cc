// Validation at load: each class of bad config gives one ConfigError naming file:line:col, the key
// path and the reason. Expected positions are computed from the config text itself.
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "tests/hw/config_test_util.h"

using namespace memwall;
using namespace memwall::test;

namespace {

/// Loads `text` from a temp file and returns the error message (fails the test if none).
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  TempDir dir;
  const std::string path = dir.write("gpu.yaml", text);
  try {
    (void)load_config(path, overrides);
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    // Messages name the file first; strip the temp path so tests compare the rest.
    REQUIRE(msg.rfind(path, 0) == 0);
    return msg.substr(path.size());
  }
  FAIL("expected a ConfigError for:\n" << text);
  return {};
}

/// The error of kSmallConfig with `from` replaced by `to`, and the expected ":LINE:COL: " prefix
/// of `needle` in the modified text.
struct Case {
  std::string message;
  std::string expected_prefix;
};
Case bad(const std::string& from, const std::string& to, const std::string& needle) {
  const std::string text = replaced(kSmallConfig, from, to);
  return {error_of(text), ":" + position_of(text, needle) + ": "};
}

}  // namespace

TEST_CASE("The small test config is valid", "[config]") {
  TempDir dir;
  const HardwareConfig c = load_config(dir.write("gpu.yaml", kSmallConfig));
  CHECK(c.sm.count == 4);
  CHECK(c.l2.line_size.count == 128);  // default
  CHECK(c.efficiency.hbm == 1.0);  // default
}

TEST_CASE("An unknown key is rejected at its position with a did-you-mean", "[config]") {
  const Case c = bad("  hit_latency: 200 cycles", "  hit_latncy: 200 cycles", "hit_latncy");
  CHECK(c.message ==
        c.expected_prefix + "l2.hit_latncy: unknown key (did you mean \"l2.hit_latency\"?)");
}

TEST_CASE("A key in the wrong section suggests the section where it belongs", "[config]") {
  const Case c = bad("  ways: 16", "  ways: 16\n  row_size: 1 KiB", "row_size");
  CHECK(c.message ==
        c.expected_prefix + "l2.row_size: unknown key (did you mean \"hbm.row_size\"?)");
}

TEST_CASE("An unknown top-level section lists the valid ones", "[config]") {
  const Case c = bad("hbm:", "dram:\n  x: 1\nhbm:", "dram");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix + "dram: unknown key"));
  CHECK_THAT(c.message, Catch::Contains("hbm"));
}

TEST_CASE("A missing required key is named, at its section", "[config]") {
  const std::string text = replaced(kSmallConfig, "  bandwidth: 100 GB/s\n", "");
  CHECK_THAT(error_of(text), Catch::StartsWith(":" + position_of(text, "hbm:") +
                                               ": hbm.bandwidth: missing required key"));
}

TEST_CASE("A wrong unit gives the unit parser's reason at the value", "[config]") {
  const Case c = bad("  size: 1 MiB", "  size: 1 parsec", "1 parsec");
  CHECK_THAT(c.message,
             Catch::StartsWith(c.expected_prefix + "l2.size: unknown size unit \"parsec\""));
}

TEST_CASE("A number without unit where a size is expected is rejected", "[config]") {
  const Case c = bad("  smem_per_sm: 64 KiB", "  smem_per_sm: 65536", "65536");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix + "sm.smem_per_sm: missing unit"));
}

TEST_CASE("A unit where an integer is expected is rejected", "[config]") {
  const Case c = bad("  count: 4", "  count: 4 SMs", "4 SMs");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix + "sm.count: expected a whole number"));
}

TEST_CASE("Zero bandwidths, clocks and counts are rejected", "[config]") {
  CHECK_THAT(bad("  bandwidth: 100 GB/s", "  bandwidth: 0 GB/s", "0 GB/s").message,
             Catch::Contains("hbm.bandwidth: a bandwidth must be positive"));
  CHECK_THAT(bad("  clock: 1 GHz", "  clock: 0 GHz", "0 GHz").message,
             Catch::Contains("sm.clock: a frequency must be positive"));
  const Case zero_sms = bad("  count: 4", "  count: 0", "0\n");
  CHECK(zero_sms.message ==
        zero_sms.expected_prefix + "sm.count: must be greater than zero, got \"0\"");
  CHECK_THAT(bad("  channels: 4", "  channels: -4", "-4").message,
             Catch::Contains("hbm.channels: expected a whole number"));
}

TEST_CASE("A line size that is not a power of two is rejected", "[config]") {
  const Case c = bad("  ways: 16", "  ways: 16\n  line_size: 96 B\n  sector_size: 32 B", "96 B");
  CHECK(c.message == c.expected_prefix + "l2.line_size: 96 B is not a power of two");
}

TEST_CASE("A sector size that does not divide the line is rejected", "[config]") {
  const Case c = bad("  ways: 16", "  ways: 16\n  sector_size: 48 B", "48 B");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix +
                                          "l2.sector_size: 48 B does not divide l2.line_size"));
}

TEST_CASE("An L2 size that is no whole number of sets per slice is rejected", "[config]") {
  // 1 MiB + 128 B is not a multiple of 4 slices x 16 ways x 128 B.
  const Case c = bad("  size: 1 MiB", "  size: 1048704 B", "1048704 B");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix + "l2.size: "));
  CHECK_THAT(c.message,
             Catch::EndsWith("is not a whole number (>= 1) of sets: it must be a multiple of "
                             "l2.slices x l2.ways x l2.line_size = 4 x 16 x 128 B = 8 KiB"));
  // Smaller than one set: 4 x 16 x 128 B = 8 KiB is one set row; 4 KiB is half of it.
  CHECK_THAT(bad("  size: 1 MiB", "  size: 4 KiB", "4 KiB").message,
             Catch::Contains("l2.size: 4 KiB is not a whole number (>= 1)"));
}

TEST_CASE("Sets per slice need not be a power of two", "[config]") {
  TempDir dir;
  // 3 slices x 16 ways x 128 B x 10 sets = 61440 B.
  const std::string text = replaced(replaced(kSmallConfig, "  size: 1 MiB", "  size: 61440 B"),
                                    "  slices: 4", "  slices: 3");
  CHECK(load_config(dir.write("gpu.yaml", text)).l2.size.count == 61440);
}

TEST_CASE("Slices that are not a multiple of partitions are rejected", "[config]") {
  const Case c = bad("  partitions: 1", "  partitions: 3", "partitions");
  CHECK_THAT(c.message,
             Catch::Contains("l2.slices: 4 slices cannot be split evenly into 3 partitions"));
}

TEST_CASE("A block that fits no SM is rejected", "[config]") {
  const Case c = bad("  smem_per_block: 64 KiB", "  smem_per_block: 65 KiB", "65 KiB");
  CHECK(
      c.message ==
      c.expected_prefix +
          "sm.smem_per_block: 65 KiB is more than sm.smem_per_sm (64 KiB): a CTA using it fits no SM");
  const Case t = bad("  max_threads_per_block: 1024", "  max_threads_per_block: 2048", "2048");
  CHECK(t.message ==
        t.expected_prefix +
            "sm.max_threads_per_block: 2048 is more than sm.max_threads_per_sm (1024)");
}

TEST_CASE("Efficiencies outside (0, 1] are rejected", "[config]") {
  const Case c = bad("hbm:", "efficiency:\n  tensor: 1.5\nhbm:", "1.5");
  CHECK(c.message == c.expected_prefix + "efficiency.tensor: must be in (0, 1], got \"1.5\"");
  CHECK_THAT(bad("hbm:", "efficiency:\n  hbm: 0\nhbm:", "0\n").message,
             Catch::Contains("efficiency.hbm: must be in (0, 1]"));
  CHECK_THAT(bad("hbm:", "efficiency:\n  l2_capacity: 1.2\nhbm:", "1.2").message,
             Catch::Contains("efficiency.l2_capacity: must be in (0, 1]"));
}

TEST_CASE("Absurd sizes are rejected before anything is allocated", "[config]") {
  CHECK_THAT(bad("  size: 1 MiB", "  size: 2 GiB", "2 GiB").message,
             Catch::Contains("l2.size: \"2 GiB\" is more than the largest accepted value, 1 GiB"));
  CHECK_THAT(
      bad("  count: 4", "  count: 2000000", "2000000").message,
      Catch::Contains("sm.count: \"2000000\" is more than the largest accepted value, 65536"));
  CHECK_THAT(bad("  capacity: 1 GiB", "  capacity: 2048 TiB", "2048 TiB").message,
             Catch::Contains(
                 "hbm.capacity: \"2048 TiB\" is more than the largest accepted value, 1024 TiB"));
}

TEST_CASE("Malformed YAML gives the parser's position and reason", "[config]") {
  const std::string tab = replaced(kSmallConfig, "  ways: 16", "\tways: 16");
  const std::string tab_line =
      position_of(tab, "\tways").substr(0, position_of(tab, "\tways").find(':'));
  CHECK(error_of(tab) == ":" + position_of(tab, "\tways") +
                             ": malformed YAML: illegal tab when looking for indentation (line " +
                             tab_line + " is indented with a tab: YAML indents with spaces only)");
  // An unclosed list: the parser notices on the next line, and says so.
  const std::string open_list = replaced(kSmallConfig, "  ways: 16", "  ways: [16");
  const std::string msg = error_of(open_list);
  CHECK_THAT(msg, Catch::Matches(":[0-9]+:[0-9]+: malformed YAML: end of sequence flow not found"));
}

TEST_CASE("A list where a value is expected is rejected", "[config]") {
  const Case c = bad("  ways: 16", "  ways: [16, 8]", "[16, 8]");
  CHECK(c.message == c.expected_prefix + "l2.ways: expected a single value, got a list");
}

TEST_CASE("A duplicate key is rejected", "[config]") {
  const std::string text = replaced(kSmallConfig, "  ways: 16", "  ways: 16\n  ways: 8");
  CHECK(error_of(text) == ":" + position_of(text, "ways: 8") + ": l2.ways: duplicate key");
}

TEST_CASE("A file that does not exist is named", "[config]") {
  try {
    (void)load_config("no/such/dir/gpu.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "no/such/dir/gpu.yaml: no such file");
  }
}

TEST_CASE("An unknown preset name lists the presets", "[config]") {
  try {
    (void)load_config("h300");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("h300: no such file or preset (presets: "));
    CHECK_THAT(e.what(), Catch::Contains("h200"));
  }
}

TEST_CASE("An empty file is rejected", "[config]") {
  CHECK(error_of("") == ":1:1: the file is empty; expected a mapping with name, sm, xbar, l2, hbm");
}

TEST_CASE("A hit latency shorter than the crossbar is rejected", "[config]") {
  const Case c = bad("  hit_latency: 200 cycles", "  hit_latency: 40 cycles", "40 cycles");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix +
                                          "l2.hit_latency: 40 ns is less than xbar.latency"));
}

TEST_CASE("Finding 20: an L2 size written in MB says that MB is decimal and suggests MiB",
          "[config][first-hour]") {
  const Case c = bad("  size: 1 MiB", "  size: 2 MB", "2 MB");
  CHECK_THAT(c.message, Catch::Contains("l2.size: 1.907 MiB is not a whole number"));
  CHECK_THAT(c.message, Catch::EndsWith("(2 MB is decimal, 2000000 bytes; did you mean 2 MiB?)"));
  // A size that is a whole number of sets is not second-guessed, however it was written.
  TempDir dir;
  CHECK(load_config(
            dir.write("gpu.yaml", replaced(kSmallConfig, "  size: 1 MiB", "  size: 1048576 B")))
            .l2.size.count == 1048576);
}

TEST_CASE("sm.smem_pipe and sm.issue_pipe take own, tensor or turns and nothing else", "[config]") {
  const std::string line = "  fp32_flops_per_cycle: 128";
  for (const auto& [key, member] : {std::pair{"smem_pipe", &SmConfig::smem_pipe},
                                    std::pair{"issue_pipe", &SmConfig::issue_pipe}}) {
    INFO(key);
    const Case c = bad(line, line + "\n  " + key + ": tmem", "tmem");
    CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix + "sm." + key +
                                            ": \"tmem\" is none of `own`, `tensor` and `turns`"));
    TempDir dir;
    for (const char* ok : {"own", "tensor", "turns"}) {
      const HardwareConfig cfg = load_config(
          dir.write("gpu.yaml", replaced(kSmallConfig, line, line + "\n  " + key + ": " + ok)));
      CHECK(to_string(cfg.sm.*member) == std::string(ok));
    }
    CHECK(load_config(dir.write("gpu.yaml", kSmallConfig)).sm.*member ==
          PipeBooking::kOwn);  // the default
  }
}

TEST_CASE("An empty name is rejected", "[config]") {
  const Case c = bad("name: Small", "name: \"\"", "\"\"");
  CHECK(c.message == c.expected_prefix + "name: must not be empty");
}

TEST_CASE("validate_config checks a config built in code and names its source", "[config]") {
  HardwareConfig c = load_config("teaching-gpu");
  c.source_file = "built-in";
  CHECK_NOTHROW(validate_config(c));
  c.sm.smem_per_block = Bytes{c.sm.smem_per_sm.count + 1};
  CHECK_THROWS_WITH(validate_config(c), Catch::StartsWith("built-in: sm.smem_per_block: ") &&
                                            Catch::EndsWith("fits no SM"));
  c = load_config("teaching-gpu");
  c.l2.sector_size = Bytes{48};
  CHECK_THROWS_WITH(validate_config(c),
                    Catch::Contains("l2.sector_size: 48 B does not divide l2.line_size"));
  // Each key's own range too, as the loader applies it to the text: the models of the chip are
  // built from validated configs only and do not check their geometry again.
  c = load_config("teaching-gpu");
  c.source_file = "built-in";
  c.l2.ways = 0;
  CHECK_THROWS_WITH(validate_config(c),
                    Catch::StartsWith("built-in: l2.ways: must be greater than zero"));
  c = load_config("teaching-gpu");
  c.source_file = "built-in";
  c.efficiency.hbm = 1.5;
  CHECK_THROWS_WITH(validate_config(c),
                    Catch::StartsWith("built-in: efficiency.hbm: must be in (0, 1]"));
}

TEST_CASE("A line of more sectors than the L2 model holds is refused at load, naming the key",
          "[config]") {
  // 128-byte lines of 8-byte sectors: 16 sectors, twice the model's kMaxSectorsPerLine.
  const Case c = bad("  ways: 16", "  ways: 16\n  sector_size: 8 B", "8 B\n");
  CHECK_THAT(c.message, Catch::StartsWith(c.expected_prefix +
                                          "l2.sector_size: 8 B makes 16 sectors per 128 B line") &&
                            Catch::Contains("at most 8"));
}

TEST_CASE("A key without a value is reported at the key", "[config]") {
  const Case c = bad("  ways: 16", "  ways:", "ways:");
  CHECK(c.message == c.expected_prefix + "l2.ways: has no value");
}

TEST_CASE("A directory is not a config", "[config]") {
  TempDir dir;
  CHECK_THROWS_WITH(load_config(dir.path()),
                    Catch::StartsWith(dir.path() + ": is a directory, not a config file"));
}

TEST_CASE(
    "Finding 3: a config value whose simulation cannot be represented is refused with the key "
    "and the bound",
    "[config][first-hour]") {
  TempDir dir;
  const std::string path = dir.write("gpu.yaml", kSmallConfig);
  struct Case {
    const char* set;
    const char* key;
    const char* reason;
  };
  for (const Case c :
       {Case{"hbm.bandwidth=0.001 B/s", "hbm.bandwidth", "the least accepted value here is"},
        Case{"hbm.bandwidth=0.01 B/s", "hbm.bandwidth", "the least accepted value here is"},
        Case{"l2.bandwidth=1 B/s", "l2.bandwidth", "the least accepted value here is"},
        Case{"xbar.port_bandwidth=0.5 B/s", "xbar.port_bandwidth", "bound for a single transfer"},
        Case{"sm.smem_bandwidth=0.1 B/s", "sm.smem_bandwidth", "bound for a single transfer"},
        Case{"sm.clock=0.001 Hz", "sm.clock", "below 1 Hz"},
        Case{"sm.clock=1e-300 Hz", "sm.clock", "below 1 Hz"},
        Case{"xbar.latency=2 s", "xbar.latency", "bound for a single latency"},
        Case{"hbm.latency=5000 ms", "hbm.latency", "bound for a single latency"},
        Case{"sm.tensor_flops_per_cycle=1e-12", "sm.tensor_flops_per_cycle",
             "bound for a single step"}}) {
    INFO(c.set);
    try {
      (void)load_config(path, {c.set});
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK(e.key_path() == c.key);
      CHECK_THAT(e.reason(), Catch::Contains(c.reason));
    }
  }
  // The bound is not in the way of any real chip, nor of one a thousand times slower.
  CHECK_NOTHROW(load_config(path, {"hbm.bandwidth=3 GB/s", "sm.clock=1 MHz", "hbm.latency=1 s"}));
}

TEST_CASE("A power limit at or below the static power is rejected at the limit's key", "[config]") {
  const Case c = bad("hbm:", "power:\n  limit_watts: 100\n  static_watts: 120\nhbm:", "100\n");
  CHECK(c.message == c.expected_prefix +
                         "power.limit_watts: 100 W is not above power.static_watts (120 W): no "
                         "clock keeps the board under it, since the static power alone reaches it");
  const Case typo = bad("hbm:", "power:\n  limit_wats: 700\nhbm:", "limit_wats");
  CHECK(typo.message == typo.expected_prefix +
                            "power.limit_wats: unknown key (did you mean \"power.limit_watts\"?)");
}

TEST_CASE("An invariant between keys broken by --set names the override and the other key's place",
          "[config]") {
  TempDir dir;
  const std::string path = dir.write("gpu.yaml", kSmallConfig);
  const std::string size_at = path + ":" + position_of(kSmallConfig, "1 MiB");
  const auto error_with = [&](const std::string& override_text) -> std::string {
    try {
      (void)load_config(path, {override_text});
    } catch (const ConfigError& e) {
      return e.what();
    }
    FAIL("expected a ConfigError for --set " << override_text);
    return {};
  };
  // 1 MiB over 4 slices x 1024 ways x 128 B (512 KiB) is 2 sets; over 4 x 1000 x 128 B it is not
  // whole: the ways were changed, the size was not.
  CHECK(error_with("l2.ways=1000") ==
        "--set l2.ways=1000: l2.ways: with this value, l2.size (" + size_at +
            ") 1 MiB is not a whole number (>= 1) of sets: it must be a multiple of l2.slices x "
            "l2.ways x l2.line_size = 4 x 1000 x 128 B = 500 KiB");
  // The key the invariant is stated on, overridden itself, is named as before.
  CHECK_THAT(error_with("l2.size=1048704 B"),
             Catch::StartsWith("--set l2.size=1048704 B: l2.size: 1 MiB (1048704 B) is not a whole "
                               "number"));
}
