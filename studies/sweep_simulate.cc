#include "studies/sweep_simulate.h"

#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/hw/config_loader.h"
#include "sim/report/report_json.h"
#include "studies/sweep_flatten.h"
#include "studies/sweep_workload.h"
#include "studies/workload_config.h"

namespace memwall {

SweepPlan workload_sweep_plan(const std::vector<std::string>& axis_values,
                              const std::vector<std::string>& sets) {
  std::vector<SweepAxis> axes;
  const auto list = workload_axes();
  for (std::size_t i = 0; i < list.size() && i < axis_values.size(); ++i) {
    if (axis_values[i].empty()) continue;
    const std::string flag =
        std::string(list[i].flags).substr(std::string(list[i].flags).rfind(',') + 1);
    SweepAxis axis{list[i].name, expand_values(axis_values[i], flag)};
    if (axis.name == std::string("workload") && axis.values.size() != 1) {
      throw UsageError(
          "--workload: a sweep runs one workload (its columns depend on it); run one "
          "sweep per workload");
    }
    axes.push_back(std::move(axis));
  }
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--set: expected KEY=VALUE[,VALUE...], got \"" + set + "\"");
    }
    const std::string key = set.substr(0, eq);
    if (!is_config_axis(key)) {
      throw UsageError("--set: \"" + key +
                       "\" is not a config key (they read section.key, e.g. "
                       "l2.size)");
    }
    axes.push_back({key, expand_values(set.substr(eq + 1), "--set " + key)});
  }
  return SweepPlan(std::move(axes));
}

PointRunner simulator_point_runner(std::string config, bool flush_l2_between_kernels,
                                   std::vector<std::string> base_overrides) {
  return [config = std::move(config), flush = flush_l2_between_kernels,
          base = std::move(base_overrides)](const SweepPoint& point) -> FlatRow {
    try {
      std::vector<std::string> overrides = base;
      for (std::string& set : config_overrides_of(point)) overrides.push_back(std::move(set));
      const HardwareConfig hw = load_config(config, overrides);
      SimOptions sim;
      sim.flush_l2_between_kernels = flush;
      const WorkloadParams params = resolve_workload_options(workload_params_of(point), &hw);
      const RunResult result = simulate_workload(hw, params, sim);
      FlatRowWriter cells("report of point " + std::to_string(point.index));
      write_run_document(cells, result);
      return with_every_param(cells.take(), params);
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      std::string where;
      for (const auto& [name, value] : point.params)
        where += (where.empty() ? "" : " ") + name + "=" + value;
      throw Error("point " + std::to_string(point.index) + " (" + where + "): " + e.what(),
                  e.exit_code());
    }
  };
}

}  // namespace memwall
