// `memwall run` (simulate a model, streamed, no trace file) and `memwall replay` (simulate a trace
// file): text summary on stdout, optional JSON report and Perfetto timeline.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "models/model_source.h"
#include "models/workload_registry.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress_source.h"
#include "sim/cli/workload_options.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/output_guard.h"
#include "sim/core/progress.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "sim/report/report_html.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "sim/report/timeline.h"
#include "studies/what_if.h"
#include "studies/workload_config.h"
#include "traces/interruptible_source.h"
#include "traces/trace_reader.h"

namespace memwall {
namespace {

/// What both commands share.
struct SimulateOptions {
  std::string config;
  std::vector<std::string> sets;
  std::string json;
  std::string timeline;
  bool flush_l2 = false;
  std::string max_memory;  ///< --max-memory SIZE; empty: half the machine's memory
  std::uint64_t timeline_budget = Timeline::kDefaultDetailBudget;  ///< --timeline-budget N
};

struct RunOptions {
  SimulateOptions sim;
  WorkloadParams params;
  std::string workloads = "flash2";
  std::string what_if;  ///< --what-if LIST: machine variants simulated beside the base
  std::string what_if_json;  ///< --what-if-json FILE: their table as JSON
  std::string html;  ///< --html FILE: the self-contained page (report_html.h)
  unsigned threads = 2;  ///< -j N: what-if variants simulated at once
};

struct ReplayOptions {
  SimulateOptions sim;
  std::string trace;
};

void add_simulate_options(CLI::App& cmd, SimulateOptions& o) {
  cmd.add_option("-c,--config", o.config,
                 "Hardware config: a YAML file or a preset name (see `memwall config list`)")
      ->required();
  cmd.add_option(
         "--set", o.sets,
         "Override a config key, e.g. --set l2.size=\"100 MiB\" (repeatable, applied in order)")
      ->type_name("KEY=VALUE");
  cmd.add_option("--json", o.json, "Write the JSON report (base units, stable keys) to FILE")
      ->type_name("FILE");
  cmd.add_option("--timeline", o.timeline,
                 "Write a Perfetto/Chrome trace-event timeline (one track per SM slot) to FILE")
      ->type_name("FILE");
  cmd.add_flag(
      "--flush-l2", o.flush_l2,
      "Write back and invalidate L2 before each kernel after the first (as Nsight Compute's "
      "--cache-control all)");
  // The spelling of earlier releases, kept working but no longer shown.
  cmd.add_flag("--flush-l2-between-kernels", o.flush_l2, "The same as --flush-l2")->group("");
  cmd.add_option(
         "--timeline-budget", o.timeline_budget,
         "Write at most N op-level events and N CTA slices into the --timeline file (the rest "
         "are counted, and said on stderr)")
      ->type_name("N")
      ->check(positive_integer())
      ->capture_default_str();
  cmd.add_option("--max-memory", o.max_memory,
                 "Refuse a simulation that would need more memory than SIZE, e.g. \"8 GiB\" "
                 "[default: half the machine's memory]")
      ->type_name("SIZE");
}

/// The --max-memory limit (0: the default), checked before anything is simulated.
Bytes max_memory_of(const SimulateOptions& o) { return max_memory_option(o.max_memory); }

/// Splits "naive,flash2" into workload kinds (UsageError on an unknown name or an empty list).
std::vector<WorkloadKind> parse_workload_list(const std::string& text) {
  std::vector<WorkloadKind> kinds;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    if (name.empty()) throw UsageError("--workload: empty name in \"" + text + "\"");
    kinds.push_back(parse_workload_kind(name));
    start = comma + 1;
  }
  return kinds;
}

/// "naive (seq=4096 head_dim=64 ...)" for log lines.
std::string workload_text(const WorkloadInfo& w) {
  std::string out = w.name + " (";
  for (std::size_t i = 0; i < w.params.size(); ++i) {
    out += (i ? " " : "") + w.params[i].first + "=" + w.params[i].second;
  }
  return out + ")";
}

/// Simulates one source with the shared options; writes its timeline if asked.
RunResult simulate_with(const HardwareConfig& hw, TraceSource& source, const SimulateOptions& o) {
  SimOptions sim;
  sim.flush_l2_between_kernels = o.flush_l2;
  sim.max_memory = max_memory_of(o);
  std::optional<Timeline> timeline;
  if (!o.timeline.empty()) timeline.emplace(o.timeline, o.timeline_budget, o.timeline_budget);
  spdlog::info("simulating {} on {}{}", workload_text(source.workload()), hw.name,
               o.flush_l2 ? ", the L2 flushed between kernels" : "");
  // Polled at every kernel and CTA, and once more when done: a short simulation that a signal
  // reached during its setup writes nothing (the engine itself polls every 4096 events).
  InterruptibleSource polled(source);
  RunResult r;
  {
    ProgressSource shown(polled);
    r = simulate(hw, shown, sim, timeline ? &*timeline : nullptr);
  }
  throw_if_interrupted();
  spdlog::info("simulated {}: {} in {} events", source.workload().name, format_duration(r.time),
               r.events);
  if (timeline) {
    timeline->finish();
    if (timeline->op_events_dropped() > 0 || timeline->cta_slices_dropped() > 0) {
      std::fprintf(
          stderr,
          "memwall: note: the timeline %s lacks op-level events from %s on (of a %s run): "
          "its budget of %llu (--timeline-budget) left out %llu op-level events and %llu "
          "CTA slices (counted in its metadata)\n",
          o.timeline.c_str(),
          format_duration(timeline->first_drop() == kMaxTick ? r.time : timeline->first_drop())
              .c_str(),
          format_duration(r.time).c_str(), static_cast<unsigned long long>(o.timeline_budget),
          static_cast<unsigned long long>(timeline->op_events_dropped()),
          static_cast<unsigned long long>(timeline->cta_slices_dropped()));
    }
  }
  return r;
}

void print(const std::string& text) { std::fputs(text.c_str(), stdout); }

void run_command(const RunOptions& o) {
  const HardwareConfig hw = load_config(o.sim.config, o.sim.sets);
  (void)max_memory_of(o.sim);
  const std::vector<WorkloadKind> kinds = parse_workload_list(o.workloads);
  if (kinds.size() > 1 && !o.sim.timeline.empty()) {
    throw UsageError("--timeline takes a single workload (got \"" + o.workloads + "\")");
  }
  // Everything that can be wrong with the arguments is found before anything is simulated.
  if (!o.what_if.empty()) {
    (void)parse_what_ifs(o.what_if, hw, Bytes{1});  // unknown or repeated names
  } else if (!o.what_if_json.empty()) {
    throw UsageError("--what-if-json needs --what-if LIST");
  }
  refuse_clobbering({{"--json", o.sim.json},
                     {"--timeline", o.sim.timeline},
                     {"--what-if-json", o.what_if_json},
                     {"--html", o.html}},
                    {{"--config", resolve_config_path(o.sim.config)}});
  std::vector<RunResult> results;
  for (const WorkloadKind kind : kinds) {
    WorkloadParams p = o.params;
    p.workload = kind;
    const WorkloadParams resolved = resolve_workload_options(p, &hw);
    const std::unique_ptr<TraceSource> source = make_model_source(resolved);
    results.push_back(simulate_with(hw, *source, o.sim));
  }
  const RunProvenance provenance = make_provenance(o.sim.config, o.sim.sets, hw);
  print(results.size() == 1 ? format_run_report(results[0], provenance)
                            : format_comparison(results, provenance));
  if (!o.sim.json.empty()) {
    write_file_atomically(o.sim.json, results.size() == 1 ? run_to_json(results[0], provenance)
                                                          : runs_to_json(results, provenance));
  }
  if (!o.html.empty()) {
    write_file_atomically(o.html, runs_to_html(results, hw, {hw.source_file, o.sim.sets}));
  }
  if (!o.what_if.empty()) {
    const auto tables = what_if_tables(o.what_if, o.sim.config, o.sim.sets, results, o.sim.flush_l2,
                                       o.threads, true);
    print(what_if_tables_text(results, tables));
    if (!o.what_if_json.empty())
      write_file_atomically(o.what_if_json, what_if_tables_json(results, tables));
  }
}

void replay_command(const ReplayOptions& o) {
  const HardwareConfig hw = load_config(o.sim.config, o.sim.sets);
  (void)max_memory_of(o.sim);
  refuse_clobbering({{"--json", o.sim.json}, {"--timeline", o.sim.timeline}},
                    {{"--config", resolve_config_path(o.sim.config)}, {"trace", o.trace}});
  TraceReader reader(o.trace);
  const RunResult r = simulate_with(hw, reader, o.sim);
  const RunProvenance provenance = make_provenance(o.sim.config, o.sim.sets, hw);
  print(format_run_report(r, provenance));
  if (!o.sim.json.empty()) write_file_atomically(o.sim.json, run_to_json(r, provenance));
}

}  // namespace

void register_run_commands(CLI::App& app, CliContext& /*ctx*/) {
  auto run = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Simulate a workload generated on the fly (no trace file) and report time and bytes");
  add_simulate_options(*cmd, run->sim);
  add_workload_options(*cmd, run->params);
  // One workload or a comma list simulated in turn and shown side by side.
  cmd->remove_option(cmd->get_option("--workload"));
  cmd->add_option("-w,--workload", run->workloads,
                  "Workload, or a comma list shown side by side with ratios: " +
                      workload_names(", ") + " [default: " + run->workloads + "]")
      ->type_name("NAME[,NAME...]");
  cmd->get_option("--json")->description(
      "Write the JSON report (base units, stable keys) to FILE: an object, or with a --workload "
      "list an array of one object per workload");
  cmd->add_option("--what-if", run->what_if, kWhatIfHelp)->type_name("LIST");
  cmd->add_option("--what-if-json", run->what_if_json,
                  "Write the what-if tables as JSON (base units) to FILE")
      ->type_name("FILE");
  cmd->add_option(
         "--html", run->html,
         "Write a self-contained HTML page (tables, stall and queueing breakdowns, DRAM bytes "
         "by tensor and reason, roofline, the config and overrides) to FILE")
      ->type_name("FILE");
  cmd->add_option("-j,--threads", run->threads, "What-if variants simulated in parallel")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  add_examples(
      *cmd,
      "  memwall run --config h200 --workload naive,flash2 --seq 4096 --head-dim 64 --heads 64\n"
      "  memwall run --config configs/h200.yaml --workload flash2 --seq 16384 --head-dim 128 "
      "--heads 16 --json f2.json --html f2.html\n"
      "  memwall run --config h200 --workload naive --seq 2048 --timeline naive.json "
      "--set l2.size=\"100 MiB\"\n"
      "  memwall run --config h200 --workload naive --seq 1024 --flush-l2\n"
      "  memwall run --config h100-sxm --workload naive,flash2 --seq 4096 --heads 16 "
      "--what-if perfect-l2,infinite-sram,hbm-x2,l2-x2,smem-direct,issue-overlap");
  cmd->callback([run] { run_command(*run); });

  auto replay = std::make_shared<ReplayOptions>();
  CLI::App* rcmd = app.add_subcommand("replay", "Simulate a trace file and report time and bytes");
  add_simulate_options(*rcmd, replay->sim);
  rcmd->add_option("trace", replay->trace, "Trace file written by `memwall trace`")
      ->required()
      ->type_name("TRACE");
  add_examples(*rcmd,
               "  memwall trace --workload flash2 --seq 4096 -o f2.mwt\n"
               "  memwall replay --config h200 f2.mwt --json f2.json\n"
               "  memwall replay --config configs/h200.yaml f2.mwt --timeline f2-timeline.json");
  rcmd->callback([replay] { replay_command(*replay); });
}

}  // namespace memwall
