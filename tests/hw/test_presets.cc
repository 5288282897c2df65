// Every shipped config loads, and its derived values equal a hand computation from the YAML's own
// numbers (read back from the files here, following `extends`, with the unit parsers).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/units.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/topology.h"

using namespace memwall;

namespace {

/// The text of SECTION.KEY in the YAML file `path`, following `extends` when the file lacks it.
std::string yaml_text(const std::string& path, const std::string& section, const std::string& key) {
  const YAML::Node root = YAML::LoadFile(path);
  if (root[section] && root[section][key]) return root[section][key].as<std::string>();
  REQUIRE(root["extends"]);
  const std::string base = root["extends"].as<std::string>();
  return yaml_text(resolve_config_path(base), section, key);
}

}  // namespace

TEST_CASE("Every preset and hypothetical config loads and derives as computed by hand",
          "[presets]") {
  const std::vector<PresetInfo> presets = list_presets();
  REQUIRE(presets.size() >= 8);
  for (const PresetInfo& p : presets) {
    INFO(p.id);
    if (p.id.ends_with("-calibrated")) continue;  // extends a preset, sets efficiencies only
    const HardwareConfig c = load_config(p.id);
    const DerivedConfig d = derive(c);
    auto text = [&](const char* s, const char* k) { return yaml_text(p.path, s, k); };
    const Frequency clock = parse_frequency(text("sm", "clock"));
    const double sms = std::stod(text("sm", "count"));
    const double size = static_cast<double>(parse_bytes(text("l2", "size")).count);
    const double ways = std::stod(text("l2", "ways"));
    const double slices = std::stod(text("l2", "slices"));
    const double line = 128;  // every shipped config uses 128-byte lines
    CHECK(text("l2", "line_size") == "128 B");
    CHECK(static_cast<double>(d.l2_sets) == size / (ways * line));
    CHECK(static_cast<double>(d.l2_sets_per_slice) == size / (ways * line * slices));
    CHECK(static_cast<double>(d.total_smem.count) ==
          sms * static_cast<double>(parse_bytes(text("sm", "smem_per_sm")).count));
    const double tensor = sms * std::stod(text("sm", "tensor_flops_per_cycle")) * clock.hertz;
    CHECK(d.peak_tensor_flops == Approx(tensor).epsilon(1e-12));
    const double hbm = parse_bandwidth(text("hbm", "bandwidth")).bytes_per_second;
    CHECK(d.ridge_point_tensor == Approx(tensor / hbm).epsilon(1e-12));
    CHECK(d.xbar_bandwidth.bytes_per_second ==
          Approx(sms * parse_bandwidth(text("xbar", "port_bandwidth"), &clock).bytes_per_second));
    const Topology topology(c);
    CHECK(topology.sm_count() == c.sm.count);
    CHECK(topology.slice_count() == c.l2.slices);
    CHECK(topology.channel_count() == c.hbm.channels);
  }
}

TEST_CASE("Finding 21: calibrated configs are presets named after their chip",
          "[presets][first-hour]") {
  bool listed = false;
  for (const PresetInfo& p : list_presets()) listed = listed || p.id == "h200-calibrated";
  CHECK(listed);
  const HardwareConfig by_name = load_config("h200-calibrated");
  const HardwareConfig by_folder = load_config("calibrated/h200");
  const HardwareConfig by_path = load_config("configs/calibrated/h200.yaml");
  CHECK(by_name.name == by_path.name);
  CHECK(by_folder.efficiency.mma_sync == by_path.efficiency.mma_sync);
  CHECK(by_name.efficiency.mma_sync < 1.0);  // the fitted value, not the base's
  CHECK(by_name.efficiency.tensor == 1.0);  // fitted on mma.sync kernels only: wgmma keeps its peak
  CHECK_THROWS_WITH(load_config("h300-calibrated"), Catch::Contains("h200-calibrated"));
}

TEST_CASE("Datasheet compute peaks follow from SMs x FLOP/cycle x clock", "[presets]") {
  // H100 SXM: 989 TFLOP/s dense fp16 at the datasheet's 1.83 GHz (the preset runs at the 1980 MHz
  // measured on the chip, as the H200's does); A100: 312 TFLOP/s; RTX 4090: 330 TFLOP/s (fp16
  // accumulate).
  CHECK(derive(load_config("h100-sxm", {"sm.clock=1.83 GHz"})).peak_tensor_flops ==
        Approx(989e12).epsilon(1e-3));
  CHECK(derive(load_config("h100-sxm")).peak_tensor_flops ==
        Approx(derive(load_config("h200")).peak_tensor_flops));
  CHECK(derive(load_config("a100-40gb")).peak_tensor_flops == Approx(312e12).epsilon(1e-3));
  CHECK(derive(load_config("rtx-4090")).peak_tensor_flops == Approx(330e12).epsilon(2e-3));
}

TEST_CASE("The teaching GPU is small and round", "[presets]") {
  const HardwareConfig c = load_config("teaching-gpu");
  const DerivedConfig d = derive(c);
  CHECK(c.sm.count == 4);
  CHECK(c.sm.clock.hertz == 1e9);
  CHECK(c.l2.size.count == 1024 * 1024);
  // 1 MiB / (4 slices x 16 ways x 128 B) = 128 sets per slice.
  CHECK(d.l2_sets_per_slice == 128);
  // 4 x 1024 FLOP x 1 GHz over 100 GB/s.
  CHECK(d.ridge_point_tensor == Approx(4.0 * 1024 * 1e9 / 100e9));
  // Cycles at 1 GHz are nanoseconds.
  CHECK(c.l2.hit_latency == 200'000);
}

TEST_CASE("The H200 preset holds the values read off the device", "[presets]") {
  const HardwareConfig c = load_config("h200");
  CHECK(c.sm.count == 132);
  CHECK(c.sm.clock.hertz == 1980e6);
  CHECK(c.l2.size.count == 60ull * 1024 * 1024);
  CHECK(c.sm.smem_per_sm.count == 228 * 1024);
  CHECK(c.sm.smem_per_block.count == 227 * 1024);
  CHECK(c.hbm.capacity.count == 141'000'000'000ull);
  CHECK(c.hbm.bandwidth.bytes_per_second == 4.8e12);
  CHECK(c.efficiency.tensor == 1.0);
}
