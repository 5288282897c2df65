// `memwall config ...`: list, show, validate and draw hardware configs, and print the reference.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_schema.h"
#include "sim/hw/config_text.h"
#include "sim/hw/topology.h"

namespace memwall {
namespace {

/// Options of the config subcommands (owned by the registration, alive as long as the app).
struct ConfigOptions {
  std::string file;
  std::vector<std::string> files;
  std::vector<std::string> overrides;
  std::string out;
  std::string collapse = "auto";  ///< config dot --collapse: auto, yes or no
};

/// Writes `text` to `out` atomically, or to stdout when `out` is empty.
void emit(const std::string& text, const std::string& out) {
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file_atomically(out, text);
  }
}

/// `config list`: loads every preset (a broken one stops the listing with its error) and prints one
/// row each, in list_presets() order.
void run_list() {
  std::printf("%-28s %-28s %7s %9s %9s %11s %14s\n", "CONFIG", "NAME", "SMs", "SMEM/SM", "L2",
              "HBM BW", "TENSOR PEAK");
  for (const PresetInfo& p : list_presets()) {
    const HardwareConfig c = load_config(p.path);
    const DerivedConfig d = derive(c);
    std::printf("%-28s %-28s %7u %9s %9s %11s %14s\n", p.id.c_str(), c.name.c_str(), c.sm.count,
                format_bytes(c.sm.smem_per_sm).c_str(), format_bytes(c.l2.size).c_str(),
                format_bandwidth(c.hbm.bandwidth).c_str(),
                format_si(d.peak_tensor_flops, "FLOP/s").c_str());
  }
}

/// `config validate`: one line per file; a failure sets exit code 2 but the remaining files are
/// still checked.
void run_validate(const std::vector<std::string>& files, CliContext& ctx) {
  for (const std::string& f : files) {
    try {
      (void)load_config(f);
      std::printf("%s: ok\n", f.c_str());
    } catch (const ConfigError& e) {
      std::printf("%s: error: %s\n", f.c_str(), e.what());
      ctx.exit_code = kExitBadInput;
    }
  }
  std::fflush(stdout);
}

}  // namespace

void register_config_commands(CLI::App& app, CliContext& ctx) {
  CLI::App* config = app.add_subcommand("config", "List, show, validate and draw hardware configs");
  config->require_subcommand(1);
  auto opts = std::make_shared<ConfigOptions>();

  CLI::App* list = config->add_subcommand(
      "list", "List every preset and hypothetical config with a one-line summary");
  add_examples(*list, "  memwall config list\n");
  list->callback([] { run_list(); });

  CLI::App* show = config->add_subcommand(
      "show", "Print a config fully resolved (every value with units), then its derived values");
  show->add_option("file", opts->file, "Config file path or preset name (e.g. h200)")->required();
  show->add_option("--set", opts->overrides, "Override a key: KEY.PATH=VALUE (repeatable)");
  add_examples(
      *show,
      "  memwall config show h200\n"
      "  memwall config show configs/h100-sxm.yaml --set l2.size=\"100 MiB\" --set sm.count=144\n");
  show->callback([opts] { emit(config_show_text(load_config(opts->file, opts->overrides)), ""); });

  CLI::App* validate = config->add_subcommand(
      "validate", "Check configs; one line per file (ok or the error); exit 2 if any failed");
  validate->add_option("files", opts->files, "Config file paths or preset names")->required();
  add_examples(*validate,
               "  memwall config validate configs/*.yaml configs/hypothetical/*.yaml\n"
               "  memwall config validate my-gpu.yaml\n");
  validate->callback([opts, &ctx] { run_validate(opts->files, ctx); });

  CLI::App* dot = config->add_subcommand(
      "dot",
      "Print the topology (SMs, crossbars, L2 slices, HBM channels) as Graphviz DOT: the "
      "wiring the simulator times requests on");
  dot->add_option("file", opts->file, "Config file path or preset name")->required();
  dot->add_option("--set", opts->overrides, "Override a key: KEY.PATH=VALUE (repeatable)");
  dot->add_option("-o,--output", opts->out, "Write the DOT to this file instead of stdout");
  dot->add_option("--collapse", opts->collapse,
                  "One node per group (the SMs of each crossbar, each crossbar, the slices of each "
                  "partition, the channels) with edge counts: yes, no, or auto (the default: yes "
                  "for more than 16 SMs)")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  add_examples(
      *dot,
      "  memwall config dot teaching-gpu -o teaching.dot && dot -Tsvg teaching.dot > teaching.svg\n"
      "  memwall config dot h200                      # collapsed: 132 SMs are one node per crossbar\n"
      "  memwall config dot h200 --collapse no | wc -l  # every SM, slice and channel\n");
  dot->callback([opts] {
    const HardwareConfig c = load_config(opts->file, opts->overrides);
    const Topology topology(c);
    const bool collapse = opts->collapse == "yes" || (opts->collapse == "auto" && c.sm.count > 16);
    emit(collapse ? topology.to_dot_collapsed() : topology.to_dot(), opts->out);
  });

  CLI::App* reference = config->add_subcommand(
      "reference", "Print the config reference (Markdown) generated from the key table");
  reference->add_option("-o,--output", opts->out, "Write it to this file instead of stdout");
  add_examples(*reference, "  memwall config reference -o docs/config-reference.md\n");
  reference->callback([opts] { emit(config_reference_markdown(), opts->out); });
}

}  // namespace memwall
