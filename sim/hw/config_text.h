#pragma once
/// A resolved config as text: what `memwall config show` prints, and YAML that loads back to the
/// same config (the Python module's Config.to_yaml), both generated from the key table of
/// sim/hw/config_schema.h.

#include <string>
#include <vector>

#include "sim/hw/config.h"

namespace memwall {

/// `memwall config show`: name, description and source, every key in table order with its value
/// and units (durations also in cycles of sm.clock), then the derived values and the topology's
/// node counts. Deterministic (fixed formats).
std::string config_show_text(const HardwareConfig& config);

/// The config as a YAML document that load_config reads back to an equal config: every key of
/// the table in its order, each value exact in base units ("52428800 B", "4.8e+12 B/s", "1.98e+09
/// Hz", "273000 ps"), with the readable value in a comment. No `extends`: it stands alone.
std::string config_to_yaml(const HardwareConfig& config);

/// One derived value of a config, in base units.
struct DerivedValue {
  std::string name;  ///< as `config show` labels it ("total_smem", "peak_tensor")
  double value = 0;
  std::string unit;  ///< "B", "B/s", "FLOP/s", "op/s", "FLOP/B", or "" for a count
};

/// The values of derive(config), in `config show` order.
std::vector<DerivedValue> derived_values(const HardwareConfig& config);

}  // namespace memwall
