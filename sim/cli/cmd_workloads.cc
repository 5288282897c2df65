// `memwall workloads`: every registered workload with its summary and parameters (name, flag,
// type, unit, default, accepted values, help); `--markdown` prints the parameter reference that
// docs/workloads.md holds.
#include <cstdio>
#include <memory>
#include <string>

#include "models/workload_reference.h"
#include "models/workload_registry.h"
#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"

namespace memwall {
namespace {

struct WorkloadsOptions {
  std::string name;  ///< one workload, or "" for all
  bool markdown = false;
  std::string output;  ///< "" for stdout
};

void workloads_command(const WorkloadsOptions& o) {
  std::string text;
  if (o.markdown) {
    if (!o.name.empty()) throw UsageError("workloads: --markdown prints every workload; drop NAME");
    text = workloads_markdown();
  } else if (o.name.empty()) {
    text = workloads_text();
  } else {
    text = workload_text(workload_plugin(parse_workload_kind(o.name)));
  }
  if (o.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file_atomically(o.output, text);
  }
}

}  // namespace

void register_workloads_command(CLI::App& app, CliContext& /*ctx*/) {
  auto o = std::make_shared<WorkloadsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "workloads",
      "List the workloads with their summaries and parameters (flags, defaults, units)");
  cmd->add_option("name", o->name, "Only this workload: " + workload_names(", "))
      ->type_name("NAME");
  cmd->add_flag("--markdown", o->markdown,
                "Print the parameter reference of every workload in Markdown (docs/workloads.md)");
  cmd->add_option("-o,--output", o->output, "Write to this file (atomically) instead of stdout")
      ->type_name("FILE");
  add_examples(*cmd,
               "  memwall workloads\n"
               "  memwall workloads flash2\n"
               "  memwall workloads --markdown -o docs/workloads.md\n");
  cmd->callback([o] { workloads_command(*o); });
}

}  // namespace memwall
