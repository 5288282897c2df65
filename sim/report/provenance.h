#pragma once
/// What a report says about how it was produced: the memwall build, the config as given and the
/// file it resolved to, every --set override in order, and the resolved values that decide the
/// result. Written into the text header (provenance_text) and the JSON report ("memwall",
/// "config"; report_json.h), so that a report read later, or a --set run beside a plain one,
/// says what was simulated.

#include <string>
#include <vector>

#include "sim/hw/config.h"

namespace memwall {

/// How a run's config was obtained.
struct RunProvenance {
  std::string config;  ///< --config as given: a path or a preset name
  std::string config_file;  ///< the file it resolved to (resolve_config_path)
  std::vector<std::string> overrides;  ///< the --set KEY=VALUE texts, in the order applied
  HardwareConfig hw;  ///< the resolved config (file, bases and overrides)
};

/// The provenance of `hw`, loaded from `config` (a path or preset) with `overrides`.
RunProvenance make_provenance(const std::string& config, const std::vector<std::string>& overrides,
                              const HardwareConfig& hw);

/// The efficiency keys of `hw` whose values differ from their defaults (a calibrated config's
/// fitted factors), as "tensor 0.3666, hbm 0.7301"; empty when all are at their defaults.
std::string changed_efficiencies_text(const HardwareConfig& hw);

/// The header lines of a text report (each ending in a newline):
///   config h200 (configs/h200.yaml) --set hbm.bandwidth=7.2TB/s
///     132 SMs at 1.98 GHz, 228 KiB shared memory per SM, 60 MiB L2, HBM 7.2 TB/s[; efficiency: …]
///   memwall 0.1.0 (git DESCRIBE)
std::string provenance_text(const RunProvenance& provenance);

}  // namespace memwall
