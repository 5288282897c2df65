// libFuzzer harness of the config loader (sim/hw/config_loader.h).
//
// Input layout: "MAIN YAML [\n%%base\nBASE YAML] [\n%%set\nKEY=VALUE\n...]". The main part is
// written to main.yaml and loaded; a base part is written to base.yaml beside it, so
// `extends: base.yaml` (and cycles through `extends: main.yaml`) are reachable; each line of the
// set part is one --set override. `extends: h200` reaches the presets. The only acceptable outcome
// besides a config is a memwall::Error (ConfigError); anything else escapes and is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto set_parts = fuzz::split_at(input, "\n%%set\n");
  const auto files = fuzz::split_at(set_parts[0], "\n%%base\n");
  std::vector<std::string> overrides;
  for (std::size_t p = 1; p < set_parts.size(); ++p) {
    for (const std::string_view line : fuzz::split_at(set_parts[p], "\n")) {
      if (!line.empty()) overrides.emplace_back(line);
    }
  }
  fuzz::write_scratch("base.yaml", files.size() > 1 ? files[1] : std::string_view("{}"));
  const std::string main_path = fuzz::write_scratch("main.yaml", files[0]);
  try {
    const HardwareConfig config = load_config(main_path, overrides);
    // A loaded config must satisfy its own invariants.
    validate_config(config);
  } catch (const Error&) {}
  return 0;
}
