// `memwall traffic`: HBM bytes of naive, flash1 and flash2 at one shape, from the closed forms.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "explain/traffic.h"
#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/hw/config_loader.h"

namespace memwall {
namespace {

struct TrafficArgs {
  std::uint64_t seq = 0;
  std::uint64_t head_dim = 0;
  std::uint64_t heads = 1;
  std::uint64_t batch = 1;
  std::string sram;
  std::string config;
  std::optional<std::uint32_t> block_q;
  std::optional<std::uint32_t> block_kv;
  std::string dtype = "fp16";
  std::string json;
};

}  // namespace

void register_traffic_command(CLI::App& app, CliContext& /*ctx*/) {
  auto args = std::make_shared<TrafficArgs>();
  CLI::App* cmd = app.add_subcommand(
      "traffic", "HBM bytes of naive vs flash1 vs flash2 attention at one shape, from the closed forms");
  cmd->add_option("--seq", args->seq, "Sequence length N (tokens per head)")->required();
  cmd->add_option("--head-dim", args->head_dim, "Head dimension d")->required();
  cmd->add_option("--heads", args->heads, "Heads H")->capture_default_str();
  cmd->add_option("--batch", args->batch, "Batch size B")->capture_default_str();
  auto* sram = cmd->add_option("--sram", args->sram,
                               "On-chip memory M that sizes flash1's blocks, e.g. \"100 KiB\"")
                   ->type_name("SIZE");
  cmd->add_option("--config", args->config,
                  "Hardware config (file or preset): its smem_per_block is M and the per-CTA limit")
      ->type_name("FILE")
      ->excludes(sram);
  cmd->add_option("--block-q", args->block_q, "Rows of Q per tile (naive bm, flash Br) for all variants");
  cmd->add_option("--block-kv", args->block_kv, "Rows of K/V per tile (naive bn, flash Bc) for all variants");
  cmd->add_option("--dtype", args->dtype, "Element type of Q, K, V, O, S, P: fp16 or fp32")
      ->type_name("fp16|fp32")
      ->capture_default_str();
  cmd->add_option("--json", args->json, "Also write the table as JSON to FILE")->type_name("FILE");
  add_examples(*cmd,
               "  memwall traffic --seq 32768 --head-dim 64 --sram \"100 KiB\"\n"
               "  memwall traffic --seq 4096 --head-dim 128 --heads 32 --batch 4 --config h200\n"
               "  memwall traffic --seq 8192 --head-dim 64 --block-q 64 --block-kv 64 --json t.json\n");
  cmd->callback([args] {
    WorkloadParams shape;
    shape.seq = args->seq;
    shape.head_dim = args->head_dim;
    shape.heads = args->heads;
    shape.batch = args->batch;
    shape.dtype = parse_dtype(args->dtype);
    shape.block_q = args->block_q;
    shape.block_kv = args->block_kv;
    if (!args->sram.empty()) {
      try {
        shape.sram_bytes = parse_bytes(args->sram).count;
      } catch (const UnitError& e) {
        throw UsageError("traffic: --sram \"" + args->sram + "\": " + e.what());
      }
    }
    if (!args->config.empty()) {
      const HardwareConfig config = load_config(args->config);
      shape.sram_bytes = config.sm.smem_per_block.count;
      shape.smem_limit_bytes = config.sm.smem_per_block.count;
    }
    const explain::TrafficTable table = explain::compute_traffic(shape);
    std::fputs(explain::format_traffic(table).c_str(), stdout);
    if (!args->json.empty()) write_file_atomically(args->json, explain::traffic_json(table));
  });
}

}  // namespace memwall
