// `memwall traffic`: HBM bytes of naive, flash1, flash2 and flash3 at one shape, from the closed forms.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "explain/traffic.h"
#include "models/workload_registry.h"
#include "sim/cli/commands.h"
#include "sim/cli/workload_options.h"
#include "sim/core/atomic_file.h"
#include "sim/hw/config_loader.h"

namespace memwall {
namespace {

struct TrafficArgs {
  WorkloadParams shape;  ///< the shape and tiling asked for (unresolved)
  std::string config;
  std::string json;
};

/// The flag of shape parameter `name` (as every workload command spells it), required: it has
/// no default here, so its help is the parameter's alone.
CLI::Option* add_required(CLI::App& cmd, const char* name, WorkloadParams& shape) {
  return add_workload_option(cmd, name, shape)
      ->required()
      ->description(std::string(find_workload_param(name)->spec->help));
}

}  // namespace

void register_traffic_command(CLI::App& app, CliContext& /*ctx*/) {
  auto args = std::make_shared<TrafficArgs>();
  CLI::App* cmd = app.add_subcommand(
      "traffic",
      "HBM bytes of naive vs flash1 vs flash2 vs flash3 attention at one shape, from the closed forms");
  add_required(*cmd, "seq", args->shape);
  add_required(*cmd, "head_dim", args->shape);
  add_workload_option(*cmd, "heads", args->shape);
  add_workload_option(*cmd, "batch", args->shape);
  add_workload_option(*cmd, "kv_heads", args->shape);
  add_workload_option(*cmd, "seq_kv", args->shape);
  add_workload_option(*cmd, "causal", args->shape);
  CLI::Option* sram = add_workload_option(*cmd, "sram_bytes", args->shape);
  cmd->add_option("-c,--config", args->config,
                  "Hardware config (file or preset): its smem_per_block is M and the per-CTA limit")
      ->type_name("FILE")
      ->excludes(sram);
  add_workload_option(*cmd, "block_q", args->shape);
  add_workload_option(*cmd, "block_kv", args->shape);
  add_workload_option(*cmd, "splits", args->shape);
  add_workload_option(*cmd, "dtype", args->shape);
  cmd->add_option("--json", args->json, "Also write the table as JSON to FILE")->type_name("FILE");
  add_examples(
      *cmd,
      "  memwall traffic --seq 32768 --head-dim 64 --sram \"100 KiB\"\n"
      "  memwall traffic --seq 4096 --head-dim 128 --heads 32 --batch 4 --config h200\n"
      "  memwall traffic --seq 8192 --head-dim 64 --block-q 64 --block-kv 64 --json t.json\n"
      "  memwall traffic --seq 8192 --head-dim 128 --causal --config h200\n"
      "  memwall traffic --seq 1 --seq-kv 65536 --head-dim 128 --heads 32 --kv-heads 8 --config h200\n");
  cmd->callback([args] {
    std::optional<HardwareConfig> config;
    if (!args->config.empty()) config = load_config(args->config);
    const explain::TrafficTable table =
        explain::compute_traffic(args->shape, config ? &*config : nullptr);
    std::fputs(explain::format_traffic(table).c_str(), stdout);
    if (!args->json.empty()) write_file_atomically(args->json, explain::traffic_json(table));
  });
}

}  // namespace memwall
