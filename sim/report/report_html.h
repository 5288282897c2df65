#pragma once
/// The report of runs for a person with a browser (`memwall run --html FILE`): one
/// self-contained HTML page (inline CSS and SVG, no script, nothing fetched) with what produced
/// it (config file, every override, memwall version), the runs side by side, each kernel's stall
/// and per-resource queueing breakdown, the DRAM bytes by tensor and by reason, and the roofline
/// with every kernel placed. Every number shown carries its JSON report key and exact value
/// (`data-key`, `data-value`), so a test can check the page against `--json`.

#include <string>
#include <vector>

#include "sim/engine/run_result.h"
#include "sim/hw/config.h"

namespace memwall {

/// What the page says produced it.
struct HtmlProvenance {
  std::string config_path;  ///< the YAML file the config was loaded from
  std::vector<std::string> overrides;  ///< every --set KEY=VALUE, in the order applied
};

/// The page for `runs` (one or more, simulated on `config`). A number's `data-key` is its path
/// in the JSON report `--json` writes for the same runs: "time_s", "kernels.0.stall.idle" for
/// one run; "1.dram_read_bytes" for the second of several (an array). Its `data-value` is the
/// JSON text of the same value. The same inputs give the same bytes.
std::string runs_to_html(const std::vector<RunResult>& runs, const HardwareConfig& config,
                         const HtmlProvenance& provenance);

}  // namespace memwall
