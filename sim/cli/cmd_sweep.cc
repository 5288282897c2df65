// `memwall sweep`: simulate the cartesian product of shape lists and config overrides in parallel,
// one CSV row per point; `memwall sweep merge` joins shard files.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/file_lock.h"
#include "sim/core/interrupt.h"
#include "sim/core/output_guard.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_text.h"
#include "studies/sweep_csv.h"
#include "studies/sweep_runner.h"
#include "studies/sweep_simulate.h"
#include "studies/sweep_workload.h"

namespace memwall {
namespace {

struct SweepCliOptions {
  std::string config;
  std::vector<std::string> axis_values;  ///< one entry per workload_axes() entry; "" = not given
  std::vector<std::string> sets;  ///< --set key=v1,v2,...
  std::string output;
  unsigned threads = 1;
  std::string shard;
  bool resume = false;
  bool fresh = false;
  bool flush_l2 = false;
  std::vector<std::string> merge_inputs;
  std::string merge_output;
};

void run_sweep_command(const SweepCliOptions& o) {
  if (o.config.empty()) throw UsageError("sweep: --config FILE is required");
  if (o.output.empty()) throw UsageError("sweep: -o FILE.csv is required");
  if (o.axis_values[0].empty()) throw UsageError("sweep: --workload is required");
  const SweepPlan plan = workload_sweep_plan(o.axis_values, o.sets);
  const std::string config_path = resolve_config_path(o.config);
  // A bad config is reported once, before any point runs; what identifies the sweep is the config
  // it resolves to (every key, bases and all), not the file's name or text.
  const HardwareConfig resolved = load_config(config_path);
  refuse_clobbering({{"-o", o.output}, {"-o's resume sidecar", partial_path(o.output)}},
                    {{"--config", config_path}});
  // The sweep writes CSV whatever the name says: a name that promises another format is refused.
  for (const char* ext : {".json", ".yaml", ".yml", ".html", ".mwt"}) {
    if (o.output.size() > std::string_view(ext).size() && o.output.ends_with(ext)) {
      throw UsageError("sweep: -o " + o.output + ": a sweep writes CSV, not " + (ext + 1) +
                       "; name the file .csv");
    }
  }

  // One writer per output: a second sweep onto the same -o (and so the same sidecar) is refused.
  const OutputLock lock("-o", o.output);
  SweepOptions options;
  options.output = o.output;
  options.threads = o.threads;
  if (!o.shard.empty()) options.shard = parse_shard(o.shard);
  options.resume = o.resume;
  options.fresh = o.fresh;
  if (o.resume && o.fresh) throw UsageError("sweep: --resume and --fresh exclude each other");
  options.progress = ::isatty(STDERR_FILENO) != 0;
  options.identity = std::string("memwall ") + MEMWALL_VERSION + "\nconfig\n" +
                     config_to_yaml(resolved) + "\nflush " + (o.flush_l2 ? "1" : "0");
  spdlog::info("sweep: {} ({} point{}) on {} on {} thread{}, into {}", plan.describe(),
               plan.count(), plan.count() == 1 ? "" : "s", resolved.name, o.threads,
               o.threads == 1 ? "" : "s", o.output);
  SweepSummary s;
  try {
    s = run_sweep(plan, simulator_point_runner(o.config, o.flush_l2), options);
  } catch (const Interrupted& e) {
    // One message, and a true one: the sidecar is the partial output that stays behind.
    if (!std::ifstream(partial_path(o.output)).good()) throw;
    const std::string what = e.what();
    throw Error(what.substr(0, what.find(';')) + "; the finished rows are kept in " +
                    partial_path(o.output) + ": rerun with --resume to run only the rest",
                e.exit_code());
  } catch (const Error&) {
    if (std::ifstream(partial_path(o.output)).good()) {
      std::fprintf(stderr,
                   "memwall sweep: the finished rows are kept in %s; rerun with --resume to "
                   "run only the rest\n",
                   partial_path(o.output).c_str());
    }
    throw;
  }
  std::printf(
      "memwall sweep: wrote %s: %llu point%s (%llu kept from %s, %llu simulated) in %.2f s\n",
      o.output.c_str(), static_cast<unsigned long long>(s.points), s.points == 1 ? "" : "s",
      static_cast<unsigned long long>(s.resumed), partial_path(o.output).c_str(),
      static_cast<unsigned long long>(s.ran), s.seconds);
}

}  // namespace

void register_sweep_command(CLI::App& app, CliContext& /*ctx*/) {
  auto o = std::make_shared<SweepCliOptions>();
  o->axis_values.resize(workload_axes().size());
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate every combination of shape lists and config overrides; one CSV row per point");
  cmd->add_option("-c,--config", o->config, "Hardware config: a YAML file or a preset name");
  const auto axes = workload_axes();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    CLI::Option* opt = cmd->add_option(axes[i].flags, o->axis_values[i], axes[i].help)
                           ->type_name(i == 0 ? "NAME" : "LIST");  // the workload axis is first
    if (axes[i].is_switch) opt->expected(0, 1)->default_str("1");
  }
  cmd->add_option(
         "--set", o->sets,
         "Config override KEY=V1,V2,... (a list or range becomes a sweep axis); repeatable")
      ->type_name("KEY=LIST");
  cmd->add_option("-o,--output", o->output, "Output CSV file (written atomically)");
  cmd->add_option("-j,--threads", o->threads, "Points simulated in parallel, one per thread")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--shard", o->shard,
                  "Run only every N-th point starting at I (0-based), e.g. 1/4")
      ->type_name("I/N");
  cmd->add_flag(
      "--resume", o->resume,
      "Keep the finished rows of OUTPUT.partial (left by an interrupted run); run the rest");
  cmd->add_flag(
      "--fresh", o->fresh,
      "Start afresh, discarding the finished rows an interrupted run of this sweep left in "
      "FILE.partial (without --resume or --fresh such a sidecar is an error)");
  cmd->add_flag("--flush-l2", o->flush_l2,
                "Write back and invalidate the L2 between kernels (as Nsight Compute does)");
  // The axis order, indented and wrapped at 95 columns.
  std::string order = "  ";
  std::size_t width = 2;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::string item = axes[i].name + (i + 1 < axes.size() ? "," : "");
    if (width > 2 && width + 1 + item.size() > 95) {
      order += "\n  ";
      width = 2;
    } else if (width > 2) {
      order += " ";
      ++width;
    }
    order += item;
    width += item.size();
  }
  add_examples(
      *cmd,
      ("  memwall sweep --config h200 --workload flash2 --seq 512..16384x2 --head-dim 64,128 -o f2.csv -j 2\n"
       "  memwall sweep --config h200 --workload naive --seq 1024 --set l2.size=\"25 MiB,50 MiB,100 MiB\" -o l2.csv\n"
       "  memwall sweep --config h200 --workload flash2 --seq 1024..8192x2 --shard 0/2 -o s0.csv\n"
       "  memwall sweep merge s0.csv s1.csv -o all.csv\n"
       "Points are numbered with the first axis varying slowest, the axes given in this order:\n" +
       order + "\nthen each --set in command-line order.\n")
          .c_str());

  CLI::App* merge =
      cmd->add_subcommand("merge", "Join shard CSVs into the file one unsharded run writes");
  merge->add_option("shards", o->merge_inputs, "Shard CSV files written with --shard I/N")
      ->required();
  merge->add_option("-o,--output", o->merge_output, "Merged CSV file (written atomically)")
      ->required();
  add_examples(*merge, "  memwall sweep merge s0.csv s1.csv s2.csv -o all.csv\n");
  merge->callback([o] {
    write_file_atomically(o->merge_output, merge_shards(o->merge_inputs));
    std::printf("memwall sweep merge: wrote %s from %zu shard files\n", o->merge_output.c_str(),
                o->merge_inputs.size());
  });
  cmd->require_subcommand(0, 1);
  cmd->callback([o, merge] {
    if (merge->parsed()) return;
    run_sweep_command(*o);
  });
}

}  // namespace memwall
