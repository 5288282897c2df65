#include "studies/sweep_workload.h"

#include "models/workload_registry.h"

namespace memwall {
namespace {

std::vector<WorkloadAxis> build_axes() {
  std::vector<WorkloadAxis> axes = {{"-w,--workload", "workload",
                                     "Workload, one per sweep (its columns depend on it): " +
                                         workload_names(", ") + " (see `memwall workloads`)"}};
  for (const CatalogueParam& param : workload_param_catalogue()) {
    const ParamSpec& spec = *param.spec;
    if (spec.flag.empty()) continue;
    const bool is_switch = spec.type == ParamType::kSwitch;
    const char* values = is_switch ? " (alone: on; or a list of 0 and 1, e.g. 0,1)"
                         : spec.type == ParamType::kChoice ? " (list)"
                         : spec.type == ParamType::kBytes
                             ? " (list or range of bytes, or sizes with a unit)"
                             : " (list or range)";
    axes.push_back({std::string(spec.flag), std::string(spec.name),
                    catalogue_param_help(param) + values, is_switch});
  }
  return axes;
}

}  // namespace

std::span<const WorkloadAxis> workload_axes() {
  static const std::vector<WorkloadAxis> axes = build_axes();
  return axes;
}

bool is_config_axis(std::string_view name) { return name.find('.') != std::string_view::npos; }

void set_workload_param(WorkloadParams& p, std::string_view name, std::string_view value) {
  set_workload_param_text(p, name, value);
}

WorkloadParams workload_params_of(const SweepPoint& point, const WorkloadParams& base) {
  WorkloadParams p = base;
  for (const auto& [name, value] : point.params) {
    if (!is_config_axis(name)) set_workload_param(p, name, value);
  }
  return p;
}

FlatRow with_every_param(FlatRow row, const WorkloadParams& resolved) {
  static const std::string kPrefix = "workload.params.";
  const WorkloadPlugin& plugin = workload_plugin(resolved.workload);
  FlatRow params;
  params.emplace_back(kPrefix + "workload", std::string(plugin.name()));
  for (const ParamSpec& spec : plugin.params()) {
    const bool set = spec.field.get(resolved).has_value();
    if (spec.type == ParamType::kSwitch && !spec.flag.empty()) {
      params.emplace_back(kPrefix + std::string(spec.name), set ? "1" : "0");
    } else if ((set && !spec.flag.empty()) || param_listed(spec, resolved)) {
      params.emplace_back(kPrefix + std::string(spec.name), param_text(spec, resolved));
    }
  }
  FlatRow out;
  bool placed = false;
  for (auto& cell : row) {
    if (cell.first.compare(0, kPrefix.size(), kPrefix) != 0) {
      out.push_back(std::move(cell));
    } else if (!placed) {
      out.insert(out.end(), params.begin(), params.end());
      placed = true;
    }
  }
  return out;
}

std::vector<std::string> config_overrides_of(const SweepPoint& point) {
  std::vector<std::string> out;
  for (const auto& [name, value] : point.params) {
    if (is_config_axis(name)) out.push_back(name + "=" + value);
  }
  return out;
}

}  // namespace memwall
