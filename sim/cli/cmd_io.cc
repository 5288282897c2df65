// `memwall io`: closed form vs simulated vs measured traffic, with log-log fits of the exponents
// Theorem 2 (FlashAttention) and Hong–Kung (matmul) predict.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/cli/workload_options.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/output_guard.h"
#include "sim/hw/config_loader.h"
#include "studies/io_check.h"
#include "studies/measured_csv.h"
#include "studies/sweep_workload.h"

namespace memwall {
namespace {

struct IoCliOptions {
  std::string config;
  std::vector<std::string> axis_values;  ///< one per workload_axes() entry; "" = not given
  std::vector<std::string> sets;
  bool ideal = false;
  std::string measured;
  std::string json;
  unsigned threads = 1;
  bool flush_l2 = false;
};

void run_io_command(const IoCliOptions& o) {
  if (o.config.empty()) throw UsageError("io: --config FILE is required");
  if (o.axis_values[0].empty()) throw UsageError("io: --workload is required");
  refuse_clobbering({{"--json", o.json}},
                    {{"--config", resolve_config_path(o.config)}, {"--measured", o.measured}});
  std::vector<SweepAxis> axes;
  const auto list = workload_axes();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (o.axis_values[i].empty()) continue;
    const std::string flags = list[i].flags;
    axes.push_back(
        {list[i].name, expand_values(o.axis_values[i], flags.substr(flags.rfind(',') + 1))});
  }
  if (axes[0].values.size() != 1) throw UsageError("--workload: io checks one workload at a time");
  const SweepPlan plan(std::move(axes));
  IoOptions options;
  options.config = o.config;
  options.sets = o.sets;
  options.ideal = o.ideal;
  options.threads = o.threads;
  options.flush_l2 = o.flush_l2;
  options.progress = true;
  std::unique_ptr<CsvTable> measured;
  if (!o.measured.empty()) measured = std::make_unique<CsvTable>(read_measured_csv(o.measured));
  const IoReport report = run_io(plan, options, measured.get());
  std::fputs(io_to_text(report).c_str(), stdout);
  if (!o.json.empty()) write_file_atomically(o.json, io_to_json(report));
}

}  // namespace

void register_io_command(CLI::App& app, CliContext& /*ctx*/) {
  auto o = std::make_shared<IoCliOptions>();
  o->axis_values.resize(workload_axes().size());
  CLI::App* cmd = app.add_subcommand(
      "io",
      "Closed-form vs simulated vs measured traffic, with log-log fits of the Theorem-2 exponents");
  cmd->add_option("-c,--config", o->config, "Hardware config: a YAML file or a preset name");
  const auto axes = workload_axes();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    std::string help = axes[i].help;
    if (std::string(axes[i].name) == "sram_bytes") {
      help = "SRAM size M list (e.g. \"16 KiB,32 KiB\" or 16384..131072x2 bytes); sets the blocks";
    }
    if (std::string(axes[i].name) == "seq") help += "; gemm: m = n = k = seq";
    CLI::Option* opt = cmd->add_option(axes[i].flags, o->axis_values[i], help)
                           ->type_name(i == 0 ? "NAME" : "LIST");
    if (axes[i].is_switch) opt->expected(0, 1)->default_str("1");
  }
  cmd->add_option("--set", o->sets, "Config override KEY=VALUE applied to every point; repeatable")
      ->type_name("KEY=VALUE");
  cmd->add_flag(
      "--ideal", o->ideal,
      "Two-level model: one SM and an L2 of one line, so every global access reaches HBM");
  cmd->add_option("--measured", o->measured,
                  "Measured CSV (columns as the simulator's JSON, e.g. dram_read_bytes), joined on "
                  "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,"
                  "softmax_rows; only kernel=total rows when it has a kernel column");
  cmd->add_flag("--flush-l2", o->flush_l2,
                "Write back and invalidate the L2 between kernels (as Nsight Compute measures)");
  cmd->add_option("--json", o->json, "Also write the points and fits as JSON (atomically)");
  cmd->add_option("-j,--threads", o->threads, "Points simulated in parallel")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  add_examples(
      *cmd,
      "  memwall io --config hypothetical/teaching-gpu --workload flash1 --head-dim 16 \\\n"
      "      --seq 4096..32768x2 --sram \"8 KiB\" --ideal\n"
      "  memwall io --config hypothetical/teaching-gpu --workload flash1 --head-dim 16 \\\n"
      "      --seq 16384 --sram 8192..65536x2 --ideal --json io.json\n"
      "  memwall io --config h200 --workload flash2 --heads 8 --head-dim 64 --seq 512..16384x2 \\\n"
      "      --block-q 128 --block-kv 128 --flush-l2 --measured traces/measured/h200-sweep.csv\n");
  cmd->callback([o] { run_io_command(*o); });
}

}  // namespace memwall
