#pragma once
/// The registered workload plugins (models/workload_list.h), in their fixed order, and what is
/// derived from all of them at once: the parameter catalogue (every parameter name once, with the
/// plugins that declare it), the help of a flag several workloads share, and lookups by name.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/param_spec.h"
#include "models/workload_params.h"
#include "models/workload_plugin.h"

namespace memwall {

/// Every plugin in registration order; the index of a plugin is its WorkloadKind's value.
std::span<const WorkloadPlugin* const> workload_plugins();

/// The plugin of `kind`.
const WorkloadPlugin& workload_plugin(WorkloadKind kind);

/// The plugin called `name`, or nullptr.
const WorkloadPlugin* find_workload_plugin(std::string_view name);

/// The workload names in registration order, joined by `separator` ("naive|flash1|...").
std::string workload_names(std::string_view separator);

/// `plugin`'s declaration of parameter `name`, or nullptr when it does not declare it.
const ParamSpec* find_param(const WorkloadPlugin& plugin, std::string_view name);

/// One plugin's declaration of a parameter.
struct ParamUse {
  const WorkloadPlugin* plugin;
  const ParamSpec* spec;
};

/// A parameter name as the workloads declare it.
struct CatalogueParam {
  const ParamSpec* spec;  ///< the first declaration (name, flag, type, field: all the same)
  std::vector<ParamUse> uses;  ///< every plugin that declares it, in registration order
};

/// Every parameter of every plugin once, in the order of their fields in WorkloadParams (the
/// contract's order: dtype, the attention shape and tiling, flash1's SRAM size, the gemm shape
/// and tiling, then the spill parameters). Flags and sweep axes follow this order. Throws
/// std::logic_error if two plugins declare one name with different flags, types or fields.
const std::vector<CatalogueParam>& workload_param_catalogue();

/// The catalogue entry of `name`, or nullptr.
const CatalogueParam* find_workload_param(std::string_view name);

/// The help of `param`'s flag: its declarations grouped by identical help and default, e.g.
/// "flash2: K/V blocks in flight (pipelining depth) [default: 2]", "naive: ...; flash1: ...";
/// without the workload names when every workload declares it alike.
std::string catalogue_param_help(const CatalogueParam& param);

/// Sets parameter `name` of `p` from text: "workload" by its name, any catalogue parameter with
/// set_param_text. Throws UsageError on an unknown name or a malformed value.
void set_workload_param_text(WorkloadParams& p, std::string_view name, std::string_view text);

}  // namespace memwall
