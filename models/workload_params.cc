#include "models/workload_params.h"

#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// Empties every optional parameter that `plugin` does not declare (another workload's tiling),
/// so that the resolved parameters list only what the workload uses. Parameters without a flag
/// (smem_limit_bytes) are set by the command for every workload and are kept; fields that always
/// have a value (a shape, the dtype) are left as they are.
void clear_unused(WorkloadParams& p, const WorkloadPlugin& plugin) {
  for (const CatalogueParam& c : workload_param_catalogue()) {
    const ParamSpec& spec = *c.spec;
    if (spec.flag.empty()) continue;
    if (find_param(plugin, spec.name) == nullptr) spec.field.set(p, std::nullopt);
  }
}

/// Fills every empty parameter of `plugin` that has a fixed default.
void fill_defaults(WorkloadParams& p, const WorkloadPlugin& plugin) {
  for (const ParamSpec& spec : plugin.params()) {
    if (spec.default_value != 0 && !spec.field.get(p)) spec.field.set(p, spec.default_value);
  }
}

/// Rejects a launch whose shared memory exceeds the limit, naming the parameters that set it.
/// A spilling launch declares exactly the limit, so it passes.
void check_smem(const WorkloadParams& p, const WorkloadPlugin& plugin) {
  if (!p.smem_limit_bytes) return;
  const std::uint64_t limit = *p.smem_limit_bytes;
  for (const KernelInfo& k : plugin.launches(p)) {
    if (k.smem_bytes_per_cta <= limit) continue;
    const SmemAdvice advice = plugin.smem_advice(p, k, limit);
    const std::string formula = advice.formula.empty() ? "" : " = " + advice.formula;
    const std::string fits = advice.fits.empty() ? "" : "; " + advice.fits;
    const std::string source = p.smem_limit_source.empty() ? "" : ", " + p.smem_limit_source;
    throw UsageError("kernel " + k.name + " needs " + format_bytes(Bytes{k.smem_bytes_per_cta}) +
                     " (" + std::to_string(k.smem_bytes_per_cta) + " B" + formula +
                     ") of shared memory per CTA, more than the limit of " +
                     format_bytes(Bytes{limit}) + " (" + std::to_string(limit) + " B" + source +
                     "); reduce " + advice.reduce + fits);
  }
}

}  // namespace

std::string_view to_string(WorkloadKind kind) { return workload_plugin(kind).name(); }

std::string_view to_string(Dtype dtype) { return kDtypeNames[static_cast<std::size_t>(dtype)]; }

WorkloadKind parse_workload_kind(std::string_view name) {
  const auto plugins = workload_plugins();
  for (std::size_t i = 0; i < plugins.size(); ++i) {
    if (plugins[i]->name() == name) return static_cast<WorkloadKind>(i);
  }
  constexpr std::string_view kBwd = "-bwd";
  if (name.size() > kBwd.size() && name.substr(name.size() - kBwd.size()) == kBwd) {
    std::string backward;
    for (const WorkloadPlugin* plugin : plugins) {
      const std::string_view n = plugin->name();
      if (n.size() > kBwd.size() && n.substr(n.size() - kBwd.size()) == kBwd) {
        backward += (backward.empty() ? "" : ", ") + std::string(n);
      }
    }
    throw UsageError(std::string(name) + " is not provided: the backward passes are " + backward);
  }
  throw UsageError("unknown workload \"" + std::string(name) +
                   "\" (known: " + workload_names(", ") + ")");
}

Dtype parse_dtype(std::string_view name) {
  WorkloadParams p;
  set_param_text(kDtypeParam, p, name);
  return p.dtype;
}

std::uint32_t element_bytes(Dtype dtype) { return dtype == Dtype::fp16 ? 2 : 4; }

std::vector<std::pair<std::string, std::string>> WorkloadParams::named() const {
  const WorkloadPlugin& plugin = workload_plugin(workload);
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("workload", std::string(plugin.name()));
  for (const ParamSpec& spec : plugin.params()) {
    if (param_listed(spec, *this))
      out.emplace_back(std::string(spec.name), param_text(spec, *this));
  }
  return out;
}

WorkloadParams params_from_named(const std::vector<std::pair<std::string, std::string>>& named) {
  WorkloadParams p;
  for (const auto& [name, value] : named) set_workload_param_text(p, name, value);
  return p;
}

WorkloadParams resolve_workload(const WorkloadParams& params) {
  WorkloadParams p = params;
  if (p.smem_limit_bytes && *p.smem_limit_bytes == 0) {
    throw UsageError("the shared-memory limit per CTA must be > 0, got 0");
  }
  const WorkloadPlugin& plugin = workload_plugin(p.workload);
  clear_unused(p, plugin);
  for (const ParamSpec& spec : plugin.params()) check_param_bounds(spec, p);
  fill_defaults(p, plugin);
  plugin.resolve(p);
  check_smem(p, plugin);
  return p;
}

void choose_gemm_kernel(WorkloadParams& p) {
  if (p.gemm || find_param(workload_plugin(p.workload), "gemm") == nullptr) return;
  p.gemm = GemmKernel::mma_sync;
  if (p.arch < kWgmmaMinArch) return;
  // The plugin's own checks decide whether the wgmma kernel takes the workload; a workload
  // neither kernel takes then fails in the caller's resolution with mma_sync's message.
  WorkloadParams trial = p;
  trial.gemm = GemmKernel::wgmma;
  try {
    resolve_workload(trial);
    p.gemm = GemmKernel::wgmma;
  } catch (const UsageError&) {}
}

}  // namespace memwall
