// `memwall roofline`: a chip's roofline from its config, and where a report's kernels land.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "explain/roofline.h"
#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/hw/config_loader.h"

namespace memwall {
namespace {

struct RooflineArgs {
  std::string config;
  std::vector<double> intensities;
  std::string from;
  std::string json;
};

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open the report for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(path + ": read error");
  return text.str();
}

}  // namespace

void register_roofline_command(CLI::App& app, CliContext& /*ctx*/) {
  auto args = std::make_shared<RooflineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "roofline",
      "Draw a chip's roofline from its config and place a report's kernels under it, with their "
      "time bounds");
  cmd->add_option("-c,--config", args->config, "Hardware config (file or preset name)")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--intensity", args->intensities,
                  "Arithmetic intensity in FLOP per HBM byte to evaluate (repeatable)")
      ->type_name("X");
  cmd->add_option("--from", args->from,
                  "A simulator JSON report (`memwall run ... --json FILE`) whose kernels to place, "
                  "each with its time bounds: HBM, tensor, fp32 and SFU alone at their peaks")
      ->type_name("REPORT.json");
  cmd->add_option("--json", args->json, "Also write the roofline and the kernels as JSON to FILE")
      ->type_name("FILE");
  add_examples(
      *cmd,
      "  memwall roofline --config h200 --intensity 1 --intensity 100 --intensity 1000\n"
      "  memwall roofline --config configs/h200.yaml --from report.json --json roof.json\n"
      "  memwall run --config h200 --workload flash2,flash3 --seq 4096 --heads 16 --head-dim 128 --json r.json && \\\n"
      "    memwall roofline --config h200 --from r.json\n");
  cmd->callback([args] {
    const explain::RooflineChip chip = explain::roofline_chip(load_config(args->config));
    std::vector<explain::KernelPoint> kernels;
    if (!args->from.empty())
      kernels = explain::read_report_kernels(read_text_file(args->from), args->from, chip);
    const explain::Roofline roofline = explain::make_roofline(chip, args->intensities, kernels);
    std::fputs(explain::format_roofline(roofline).c_str(), stdout);
    if (!args->json.empty()) write_file_atomically(args->json, explain::roofline_json(roofline));
  });
}

}  // namespace memwall
