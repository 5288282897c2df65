#pragma once
/// Loading a hardware config: YAML file or preset name → validated HardwareConfig.
///
/// The accepted keys, their types and defaults are the table of sim/hw/config_schema.h. Every
/// problem is one ConfigError naming "FILE:LINE:COL: KEY.PATH: REASON" (or "--set KEY=VALUE:
/// KEY.PATH: REASON" for an override): malformed YAML, a missing file, unknown keys (with a
/// did-you-mean), missing required keys, wrong types or units, out-of-range values, inconsistent
/// geometry, and a topology in which some SM cannot reach some HBM channel.

#include <string>
#include <vector>

#include "sim/hw/config.h"

namespace memwall {

/// A config shipped with memwall under configs/.
struct PresetInfo {
  std::string id;  ///< what to pass to load_config: "h200", "hypothetical/h100-2x-smem"
  std::string path;  ///< absolute path of its YAML file
};

/// The directory holding the presets: MEMWALL_SOURCE_DIR "/configs".
std::string presets_dir();

/// Every preset (configs/*.yaml, then configs/hypothetical/*.yaml), each group sorted by name.
std::vector<PresetInfo> list_presets();

/// Resolves a path or a preset name to a file path. An existing file is returned as given; a bare
/// name "h200" or "hypothetical/h100-2x-smem" resolves to presets_dir()/NAME.yaml, and a bare name
/// not found at the top level is also looked for under hypothetical/. Throws ConfigError (naming
/// the known presets) when nothing matches.
std::string resolve_config_path(const std::string& path_or_preset);

/// Loads, merges (`extends`), overrides (`overrides` are "key.path=value" strings, as given to
/// --set, applied in order after the file) and validates a config, including its topology.
/// Throws ConfigError on any problem; never returns a config that violates config.h's invariants.
HardwareConfig load_config(const std::string& path_or_preset,
                           const std::vector<std::string>& overrides = {});

/// Checks the cross-field invariants of config.h on an already typed config (the loader calls it;
/// exposed for configs built in code). Errors name `config.source_file` and the key path.
void validate_config(const HardwareConfig& config);

}  // namespace memwall
