#include "sim/cli/workload_options.h"

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "models/workload_registry.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// `path` relative to the working directory when it lies below it; `fallback` when empty.
std::string display_path(const std::string& path, const std::string& fallback) {
  if (path.empty()) return fallback;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string() + "/";
  if (!ec && path.size() > cwd.size() && path.compare(0, cwd.size(), cwd) == 0) {
    return path.substr(cwd.size());
  }
  return path;
}

/// The flag of catalogue parameter `param`, parsed by its type into `p`. Integers are checked as
/// text first: CLI11 would read "-5" into an unsigned field as 2^64 - 5.
CLI::Option* add_param_option(CLI::App& app, const CatalogueParam& param, WorkloadParams& p) {
  const ParamSpec* spec = param.spec;
  const std::string flag(spec->flag);
  const std::string help = catalogue_param_help(param);
  switch (spec->type) {
    case ParamType::kChoice: {
      std::vector<std::string> names(spec->choices.begin(), spec->choices.end());
      return app
          .add_option_function<std::string>(
              flag, [&p, spec](const std::string& v) { set_param_text(*spec, p, v); }, help)
          ->check(CLI::IsMember(names))
          ->type_name("NAME");
    }
    case ParamType::kCount:
      return app
          .add_option_function<std::uint64_t>(
              flag, [&p, spec](const std::uint64_t& v) { spec->field.set(p, v); }, help)
          ->check(positive_integer())
          ->type_name("INT");
    case ParamType::kTile:
      if (!spec->auto_word.empty()) {  // a number or the word: parsed (and checked) as text
        return app
            .add_option_function<std::string>(
                flag, [&p, spec](const std::string& v) { set_param_text(*spec, p, v); }, help)
            ->type_name("INT|" + std::string(spec->auto_word));
      }
      return app
          .add_option_function<std::uint32_t>(
              flag, [&p, spec](const std::uint32_t& v) { spec->field.set(p, v); }, help)
          ->check(positive_integer())
          ->type_name("INT");
    case ParamType::kBytes:
      return app
          .add_option_function<std::string>(
              flag,
              [&p, spec, flag](const std::string& v) {
                try {
                  spec->field.set(p, parse_bytes(v).count);
                } catch (const UnitError& e) {
                  throw UsageError(flag + ": " + e.what());
                }
              },
              help)
          ->type_name("SIZE");
    case ParamType::kSwitch:
      return app.add_flag_function(
          flag, [&p, spec](std::int64_t count) { spec->field.set(p, count > 0 ? 1 : 0); }, help);
  }
  return nullptr;
}

}  // namespace

void add_workload_options(CLI::App& app, WorkloadParams& p) {
  std::vector<std::string> names;
  for (const WorkloadPlugin* plugin : workload_plugins()) names.emplace_back(plugin->name());
  app.add_option_function<std::string>(
         "-w,--workload", [&p](const std::string& v) { p.workload = parse_workload_kind(v); },
         "Workload: " + workload_names(", ") + " (see `memwall workloads`) [default: " +
             std::string(to_string(WorkloadParams{}.workload)) + "]")
      ->check(CLI::IsMember(names))
      ->type_name("NAME");
  for (const CatalogueParam& param : workload_param_catalogue()) {
    if (!param.spec->flag.empty()) add_param_option(app, param, p);
  }
}

CLI::Option* add_workload_option(CLI::App& app, std::string_view name, WorkloadParams& params) {
  const CatalogueParam* param = find_workload_param(name);
  if (param == nullptr || param->spec->flag.empty()) {
    throw std::logic_error("no workload flag for parameter " + std::string(name));
  }
  return add_param_option(app, *param, params);
}

WorkloadParams resolve_workload_options(const WorkloadParams& params, const HardwareConfig* config) {
  WorkloadParams p = params;
  if (config != nullptr) {
    // The config's shared memory per block is the on-chip memory M of a workload that sizes its
    // blocks from one (flash1's sram_bytes), unless --sram gave it.
    if (!p.sram_bytes && find_param(workload_plugin(p.workload), "sram_bytes") != nullptr) {
      p.sram_bytes = config->sm.smem_per_block.count;
    }
    p.smem_limit_bytes = config->sm.smem_per_block.count;
    p.smem_limit_source = "sm.smem_per_block of " + display_path(config->source_file, config->name);
    p.arch = config->sm.arch;
    p.sm_count = config->sm.count;
  }
  // With --allow-spill, --sram (when given) is the shared memory a spilling CTA may keep.
  if (p.allow_spill && params.sram_bytes) {
    p.smem_limit_bytes = *params.sram_bytes;
    p.smem_limit_source = "--sram";
  }
  return resolve_workload(p);
}

}  // namespace memwall
