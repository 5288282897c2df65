#include "models/workload_registry.h"

#include <algorithm>
#include <stdexcept>

#include "sim/core/error.h"

namespace memwall {

// Each registered workload's file pair defines its plugin (models/workload_list.h).
#define MEMWALL_DECLARE_PLUGIN(name) const WorkloadPlugin& name##_plugin();
MEMWALL_WORKLOADS(MEMWALL_DECLARE_PLUGIN)
#undef MEMWALL_DECLARE_PLUGIN

namespace {

const std::vector<const WorkloadPlugin*>& plugin_table() {
  static const std::vector<const WorkloadPlugin*> plugins = {
#define MEMWALL_PLUGIN_ENTRY(name) &name##_plugin(),
      MEMWALL_WORKLOADS(MEMWALL_PLUGIN_ENTRY)
#undef MEMWALL_PLUGIN_ENTRY
  };
  return plugins;
}

std::vector<CatalogueParam> build_catalogue() {
  std::vector<CatalogueParam> out;
  for (const WorkloadPlugin* plugin : plugin_table()) {
    for (const ParamSpec& spec : plugin->params()) {
      CatalogueParam* entry = nullptr;
      for (CatalogueParam& c : out) {
        if (c.spec->name == spec.name) entry = &c;
      }
      if (entry == nullptr) {
        out.push_back({&spec, {}});
        entry = &out.back();
      } else if (entry->spec->flag != spec.flag || entry->spec->type != spec.type ||
                 entry->spec->field.offset() != spec.field.offset()) {
        throw std::logic_error("workload parameter " + std::string(spec.name) +
                               " is declared with two flags, types or fields");
      }
      entry->uses.push_back({plugin, &spec});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const CatalogueParam& a, const CatalogueParam& b) {
    return a.spec->field.offset() < b.spec->field.offset();
  });
  return out;
}

/// "help [default: X]", the default left out when there is none (and for a switch).
std::string help_with_default(const ParamSpec& spec) {
  const std::string def = spec.type == ParamType::kSwitch ? "" : param_default_text(spec);
  return std::string(spec.help) + (def.empty() ? "" : " [default: " + def + "]");
}

}  // namespace

std::span<const WorkloadPlugin* const> workload_plugins() { return plugin_table(); }

const WorkloadPlugin& workload_plugin(WorkloadKind kind) {
  return *plugin_table().at(static_cast<std::size_t>(kind));
}

const WorkloadPlugin* find_workload_plugin(std::string_view name) {
  for (const WorkloadPlugin* plugin : plugin_table()) {
    if (plugin->name() == name) return plugin;
  }
  return nullptr;
}

std::string workload_names(std::string_view separator) {
  std::string out;
  for (const WorkloadPlugin* plugin : plugin_table()) {
    out += (out.empty() ? "" : std::string(separator)) + std::string(plugin->name());
  }
  return out;
}

const ParamSpec* find_param(const WorkloadPlugin& plugin, std::string_view name) {
  for (const ParamSpec& spec : plugin.params()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const std::vector<CatalogueParam>& workload_param_catalogue() {
  static const std::vector<CatalogueParam> catalogue = build_catalogue();
  return catalogue;
}

const CatalogueParam* find_workload_param(std::string_view name) {
  for (const CatalogueParam& c : workload_param_catalogue()) {
    if (c.spec->name == name) return &c;
  }
  return nullptr;
}

std::string catalogue_param_help(const CatalogueParam& param) {
  // Groups of declarations with the same help and default, in order of first appearance.
  std::vector<std::pair<std::string, std::string>> groups;  // (workload names, help)
  for (const ParamUse& use : param.uses) {
    const std::string help = help_with_default(*use.spec);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&help](const auto& g) { return g.second == help; });
    const std::string name(use.plugin->name());
    if (it == groups.end())
      groups.emplace_back(name, help);
    else
      it->first += ", " + name;
  }
  if (groups.size() == 1 && param.uses.size() == plugin_table().size()) return groups[0].second;
  std::string out;
  for (const auto& [names, help] : groups) out += (out.empty() ? "" : "; ") + names + ": " + help;
  return out;
}

void set_workload_param_text(WorkloadParams& p, std::string_view name, std::string_view text) {
  if (name == "workload") {
    p.workload = parse_workload_kind(text);
    return;
  }
  const CatalogueParam* param = find_workload_param(name);
  if (param == nullptr)
    throw UsageError("unknown workload parameter \"" + std::string(name) + "\"");
  set_param_text(*param->spec, p, text);
}

}  // namespace memwall
