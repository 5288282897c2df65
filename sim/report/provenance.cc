#include "sim/report/provenance.h"

#include "sim/core/version.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_schema.h"

namespace memwall {

RunProvenance make_provenance(const std::string& config, const std::vector<std::string>& overrides,
                              const HardwareConfig& hw) {
  return RunProvenance{config, resolve_config_path(config), overrides, hw};
}

std::string changed_efficiencies_text(const HardwareConfig& hw) {
  const HardwareConfig defaults;  // the struct's initialisers are the schema's defaults
  std::string out;
  for (const KeyDecl& key : config_schema()) {
    const std::string_view path = key.path;
    if (key.fetch == nullptr || !path.starts_with("efficiency.")) continue;
    const KeyValue value = key.fetch(hw);
    if (value == key.fetch(defaults)) continue;
    // No clock: a duration is shown in time only, which is how the config writes it.
    out += (out.empty() ? "" : ", ") + std::string(path.substr(11)) + " " +
           format_key_value(key, value, Frequency{});
  }
  return out;
}

std::string provenance_text(const RunProvenance& p) {
  std::string out = "config " + p.config;
  if (p.config_file != p.config) out += " (" + p.config_file + ")";
  for (const std::string& o : p.overrides) out += " --set " + o;
  const HardwareConfig& c = p.hw;
  out += "\n  " + std::to_string(c.sm.count) + " SMs at " + format_frequency(c.sm.clock) + ", " +
         format_bytes(c.sm.smem_per_sm) + " shared memory per SM, " + format_bytes(c.l2.size) +
         " L2, HBM " + format_bandwidth(c.hbm.bandwidth);
  if (const std::string eff = changed_efficiencies_text(c); !eff.empty())
    out += "; efficiency: " + eff;
  out += "\n" + memwall_build_text() + "\n";
  return out;
}

}  // namespace memwall
