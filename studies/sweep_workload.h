#pragma once
/// The workload side of a sweep point: which axes are workload parameters (shape and tiling, named
/// as in WorkloadParams::named, e.g. "seq", "head_dim") and which are config overrides (dotted
/// config keys, e.g. "l2.size"), and how a point becomes WorkloadParams and --set strings.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload_params.h"
#include "studies/sweep_flatten.h"
#include "studies/sweep_plan.h"

namespace memwall {

/// A workload parameter a sweep can vary: its command-line flag and its axis (column) name.
struct WorkloadAxis {
  std::string flags;  ///< CLI11 flag spec, e.g. "--seq" (the same spelling as `memwall run`)
  std::string name;  ///< axis and CSV column name, e.g. "seq"
  std::string help;  ///< one line for --help
  /// A switch (causal, allow_spill): its flag alone means 1, or it takes a list of 0 and 1.
  bool is_switch = false;
};

/// Every workload axis, in the fixed order sweep axes take: workload first, then each workload
/// parameter with a flag (a switch's values are 0 and 1), in the order of the workload registry's
/// parameter catalogue (models/workload_registry.h): dtype, the attention shape, its tiling,
/// flash1's SRAM size, then the gemm shape and tiling.
std::span<const WorkloadAxis> workload_axes();

/// True for an axis that is a config key ("l2.size"): its name has a dot.
bool is_config_axis(std::string_view name);

/// Sets workload parameter `name` of `params` from `value` (set_workload_param_text): a byte
/// count ("sram_bytes") takes a size with a unit ("64 KiB") or digits. Throws UsageError naming
/// the parameter on a bad value or name.
void set_workload_param(WorkloadParams& params, std::string_view name, std::string_view value);

/// The workload parameters of a point (unresolved): `base` with every workload axis applied.
WorkloadParams workload_params_of(const SweepPoint& point, const WorkloadParams& base = {});

/// `row` (a flattened report) with its "workload.params.*" cells replaced by every parameter
/// of `resolved`'s workload that has a flag (a switch that is off as 0) or is listed, in the
/// plugin's order, so that every point of a sweep has the same columns whether or not a
/// parameter equals its default there (kv_heads = heads, causal off, ...).
FlatRow with_every_param(FlatRow row, const WorkloadParams& resolved);

/// The config overrides of a point: "key=value" for every config axis, in axis order.
std::vector<std::string> config_overrides_of(const SweepPoint& point);

}  // namespace memwall
