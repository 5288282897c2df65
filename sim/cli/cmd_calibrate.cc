// `memwall calibrate`: the simulator against the kernels measured on a real GPU (load for load,
// then time, DRAM and SM->L2 bytes), a fit of the config's efficiencies, the calibrated YAML.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/output_guard.h"
#include "sim/core/units.h"
#include "sim/hw/config_loader.h"
#include "studies/calibration.h"
#include "studies/calibration_load.h"

namespace memwall {
namespace {

namespace fs = std::filesystem;

struct CalibrateCliOptions {
  std::string config;
  std::string measured;
  std::string output;
  std::string json;
  std::string params = "l2_capacity,mma_sync,fp32,sfu,hbm,launch_overhead,pipe_serial";
  std::string fit_budget = "1 GiB";
  std::string eval_budget;
  std::string hold_out = "seq=1024,8192";
  unsigned max_iterations = 8;
  unsigned threads = 1;
  bool load_check = false;
  bool evaluate = false;
  bool all_rows = false;
};

void progress_line(const std::string& line) {
  std::fprintf(stderr, "calibrate: %s\n", line.c_str());
}

/// The fit's inputs from the command line; UsageError for a missing or bad one.
CalibrationOptions fit_options(const CalibrateCliOptions& o) {
  if (o.config.empty()) throw UsageError("calibrate: --config FILE is required");
  if (o.evaluate && !o.output.empty()) {
    throw UsageError("calibrate: --evaluate fits nothing and writes no config: leave out -o " +
                     o.output);
  }
  if (!o.evaluate && o.output.empty()) {
    throw UsageError(
        "calibrate: -o FILE (the calibrated config) is required; --evaluate prints the "
        "error table of --config as it is without fitting or writing");
  }
  CalibrationOptions options;
  options.params = parse_fit_params(o.params);
  try {
    options.fit_budget_bytes = parse_bytes(o.fit_budget).count;
  } catch (const UnitError& e) {
    throw UsageError("--fit-budget: " + std::string(e.what()));
  }
  if (!o.eval_budget.empty()) {
    try {
      options.eval_budget_bytes = parse_bytes(o.eval_budget).count;
    } catch (const UnitError& e) {
      throw UsageError("--eval-budget: " + std::string(e.what()));
    }
  }
  options.hold_out = parse_hold_out(o.hold_out);
  options.max_iterations = o.max_iterations;
  options.threads = o.threads;
  options.progress = progress_line;
  return options;
}

void run_calibrate_command(const CalibrateCliOptions& o, CliContext& ctx) {
  if (o.measured.empty()) throw UsageError("calibrate: --measured FILE is required");
  const std::string config_file = o.config.empty() ? std::string() : resolve_config_path(o.config);
  refuse_clobbering({{"-o", o.output}, {"--json", o.json}},
                    {{"--config", config_file}, {"--measured", o.measured}});
  // A fit's arguments and base config are checked before any work is done.
  std::optional<CalibrationOptions> options;
  std::optional<HardwareConfig> base;
  if (!o.load_check) {
    options = fit_options(o);
    base = load_config(o.config);
  }
  const std::vector<MeasuredCase> cases = read_measured_cases(o.measured);
  spdlog::info("calibrate: {} measured cases from {}, {} thread{}; {}", cases.size(), o.measured,
               o.threads, o.threads == 1 ? "" : "s",
               o.load_check ? "the load check only"
               : o.evaluate ? "evaluating " + o.config + " as it is"
                            : "fitting " + o.params + " of " + o.config);
  const LoadCheck load = run_load_check(cases, 0.02, o.threads);
  std::fputs(load_check_to_text(load, cases, o.all_rows).c_str(), stdout);
  if (load.failures() > 0) ctx.exit_code = kExitFailure;
  if (o.load_check) return;

  if (o.evaluate) {
    const CalibrationResult result = evaluate_config(*base, cases, o.measured, *options);
    std::fputs("\n", stdout);
    std::fputs(calibration_to_text(result, cases).c_str(), stdout);
    if (!o.json.empty()) {
      write_file_atomically(o.json, calibration_to_json(result, cases));
      std::printf("wrote %s\n", o.json.c_str());
    }
    return;
  }
  const CalibrationResult result = run_calibration(*base, cases, o.measured, *options);
  std::fputs("\n", stdout);
  std::fputs(calibration_to_text(result, cases).c_str(), stdout);

  const std::string command =
      calibrate_command_line(o.config, o.measured, o.output, o.params, o.fit_budget, o.eval_budget,
                             o.hold_out, o.max_iterations);
  write_file_atomically(o.output, calibrated_yaml(result, calibrated_extends(o.config, o.output),
                                                  calibration_date_utc(), command));
  std::printf("wrote %s\n", o.output.c_str());
  if (!o.json.empty()) {
    write_file_atomically(o.json, calibration_to_json(result, cases));
    std::printf("wrote %s\n", o.json.c_str());
  }
}

}  // namespace

void register_calibrate_command(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<CalibrateCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the config's efficiencies to kernels measured on a real GPU; error table and calibrated YAML");
  cmd->add_option("-c,--config", o->config, "Base hardware config: a YAML file or a preset name")
      ->type_name("FILE");
  cmd->add_option(
         "--measured", o->measured,
         "Measured CSV of the real kernels (traces/measured/*-sweep.csv; columns in docs/cuda.md)")
      ->type_name("FILE");
  cmd->add_option("-o,--output", o->output,
                  "Write the calibrated config (extends the base) to FILE, atomically")
      ->type_name("FILE");
  cmd->add_option("--json", o->json, "Also write the fit, the error metrics and every row as JSON")
      ->type_name("FILE");
  cmd->add_option("-j,--threads", o->threads, "Cases simulated in parallel")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_flag(
      "--load-check", o->load_check,
      "Only the load-for-load check (model vs ncu SM->L2 bytes) and the coalescing table; "
      "exit 1 on a mismatch");
  cmd->add_flag(
      "--evaluate", o->evaluate,
      "Fit nothing: print the error table of --config as it is (a calibrated config, say) "
      "against the measured kernels; writes no config");
  cmd->add_flag("--all-rows", o->all_rows,
                "List every kernel row of the load check, not only the failures");
  cmd->add_option(
         "--params", o->params,
         "Efficiency keys to fit, comma list of mma_sync (the measured kernels are mma.sync "
         "ones), tensor (wgmma), fp32, sfu, l2, hbm, op_overhead, "
         "launch_overhead, pipe_serial (fitted to kernel times) and l2_capacity (fitted first, to DRAM "
         "bytes)")
      ->capture_default_str()
      ->type_name("LIST");
  cmd->add_option(
         "--fit-budget", o->fit_budget,
         "Fit cases whose model SM->L2 bytes exceed SIZE are left out of the iterations (still reported)")
      ->capture_default_str()
      ->type_name("SIZE");
  cmd->add_option(
         "--eval-budget", o->eval_budget,
         "Cases whose model SM->L2 bytes exceed SIZE are not simulated at all [default: every case]")
      ->type_name("SIZE");
  cmd->add_option(
         "--hold-out", o->hold_out,
         "Cases left out of the fit and reported apart: NAME=V1,V2 on a workload parameter "
         "(seq=1024,8192: other shapes; block_kv=64 or stages=3: other kernel variants)")
      ->capture_default_str()
      ->type_name("RULE");
  cmd->add_option("--max-iterations", o->max_iterations,
                  "Accepted Levenberg-Marquardt steps at most")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(0u, 100u));
  add_examples(
      *cmd,
      "  memwall calibrate --measured traces/measured/h200-sweep.csv --load-check\n"
      "  memwall calibrate --config configs/h200.yaml --measured traces/measured/h200-sweep.csv \\\n"
      "      -o configs/calibrated/h200.yaml --json calibration.json -j 2\n"
      "  memwall calibrate --config h200 --measured traces/measured/h200-sweep.csv -o cal.yaml \\\n"
      "      --params mma_sync,hbm --fit-budget \"1 GiB\"\n"
      "  memwall calibrate --config h200-calibrated --measured traces/measured/h200-sweep.csv "
      "--evaluate -j 2\n");
  cmd->callback([o, &ctx] { run_calibrate_command(*o, ctx); });
}

}  // namespace memwall
