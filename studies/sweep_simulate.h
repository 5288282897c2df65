#pragma once
/// A sweep of a workload on the simulator, as `memwall sweep` and the Python module run it: the
/// plan from the workload axes and the config overrides given, and the PointRunner that simulates
/// one point and writes its report's members as the row's figures.

#include <string>
#include <vector>

#include "studies/sweep_runner.h"

namespace memwall {

/// The plan of a workload sweep, its axes in the documented order: the workload axes given, in
/// workload_axes() order, then each config override in the order given. `axis_values` has one
/// entry per workload_axes() entry: a value list (expand_values: "512..4096x2,8192"), "" when
/// that axis is not swept. `sets` are "KEY=V1,V2,..." with KEY a config key ("l2.size"). Throws
/// UsageError (naming the flag, as the CLI spells it) on a workload list of more than one name, a
/// malformed --set, a key without a dot, or a bad value list.
SweepPlan workload_sweep_plan(const std::vector<std::string>& axis_values,
                              const std::vector<std::string>& sets);

/// Simulates one point: loads `config` (a path or a preset) with `base_overrides` and then the
/// point's config axes, resolves the point's workload parameters against it, simulates (with the
/// L2 flushed between kernels when asked) and writes the report's members as the row's cells
/// (write_run_document into a FlatRowWriter: the cells flatten_json gives of the JSON report,
/// without writing and parsing it). An Error
/// is rethrown as "point I (name=value ...): MESSAGE"; Interrupted passes through unchanged.
PointRunner simulator_point_runner(std::string config, bool flush_l2_between_kernels,
                                   std::vector<std::string> base_overrides = {});

}  // namespace memwall
