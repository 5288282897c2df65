#include "sim/cli/workload_options.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/workload_registry.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

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

}  // namespace memwall
