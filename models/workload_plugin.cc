#include "models/workload_plugin.h"

namespace memwall {

std::string WorkloadPlugin::tiling_text(const WorkloadParams& p) const {
  std::string out;
  for (const ParamSpec& spec : params()) {
    if (spec.type != ParamType::kTile || !spec.field.get(p)) continue;
    if (!out.empty()) out += ", ";
    out += std::string(spec.name) + " = " + param_text(spec, p);
  }
  return out;
}

}  // namespace memwall
