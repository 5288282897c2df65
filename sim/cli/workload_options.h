#pragma once
/// The workload flags shared by every command that names a workload (`memwall trace`, `verify`,
/// `run`, `traffic`; `sweep` and `io` take the same parameters as lists), generated from the
/// workload plugins' parameter declarations (models/workload_registry.h), so they all spell,
/// default and document them the same way.

#include <string_view>

#include <CLI/CLI.hpp>

#include "models/workload_params.h"
#include "studies/workload_config.h"  // resolve_workload_options (moved there; kept for callers)

namespace memwall {

/// Adds -w,--workload and one flag per parameter of the registry's catalogue (--dtype, --batch,
/// --heads, --seq, --head-dim, --block-q, ..., --tile-k, --allow-spill) to `app`, writing into
/// `params`, each with its plugins' help and defaults. Unset tiling flags stay empty (defaults
/// come from resolve_workload_options). Bad values (an unknown name, a size without a unit) are
/// rejected while parsing.
void add_workload_options(CLI::App& app, WorkloadParams& params);

/// Adds the flag of the one catalogue parameter `name` ("seq") to `app`, as
/// add_workload_options does, and returns it (a command that takes a shape but no workload).
CLI::Option* add_workload_option(CLI::App& app, std::string_view name, WorkloadParams& params);

}  // namespace memwall
