#include "studies/sweep_workload.h"

#include "models/workload_registry.h"

namespace memwall {
namespace {

std::vector<WorkloadAxis> build_axes() {
  std::vector<WorkloadAxis> axes = {
      {"--workload", "workload", "Workload: " + workload_names(", ") + " (see `memwall workloads`)"}};
  for (const CatalogueParam& param : workload_param_catalogue()) {
    const ParamSpec& spec = *param.spec;
    if (spec.flag.empty() || spec.type == ParamType::kSwitch) continue;
    const char* values = spec.type == ParamType::kChoice  ? " (list)"
                         : spec.type == ParamType::kBytes ? " (list or range of bytes, or sizes with a unit)"
                                                          : " (list or range)";
    axes.push_back({std::string(spec.flag), std::string(spec.name),
                    catalogue_param_help(param) + values});
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

std::vector<std::string> config_overrides_of(const SweepPoint& point) {
  std::vector<std::string> out;
  for (const auto& [name, value] : point.params) {
    if (is_config_axis(name)) out.push_back(name + "=" + value);
  }
  return out;
}

}  // namespace memwall
