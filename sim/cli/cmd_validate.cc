// `memwall validate`: the kernels measured on a changed chip (fewer SMs, less L2) against the
// simulator with the matching config change; per case and per family, as text, JSON and CSV.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/output_guard.h"
#include "sim/hw/config_loader.h"
#include "studies/validate.h"

namespace memwall {
namespace {

struct ValidateCliOptions {
  ValidateOptions run;
  std::string sm_count;
  std::string l2_size;
  std::string table;
  std::vector<std::string> check;  ///< committed tables (--check, repeatable)
  std::string json;
  std::string csv;
  std::size_t cases = 0;
  bool summary_only = false;
};

void run_validate_command(ValidateCliOptions o, CliContext& ctx) {
  const bool simulate = !o.sm_count.empty() || !o.l2_size.empty();
  if (simulate == !o.table.empty()) {
    throw UsageError(
        "validate: give --sm-count FILE and/or --l2-size FILE (measurements to simulate), or "
        "--table FILE (a table written by --csv, summarized again)");
  }
  if (!o.run.carveout_rates.empty() && o.l2_size.empty()) {
    throw UsageError("validate: --carveout-rates applies to --l2-size only; give --l2-size FILE");
  }
  if (!o.table.empty() && (!o.check.empty() || o.cases > 0 || !o.run.only_regex.empty())) {
    throw UsageError(
        "validate: --table takes no --check, --cases or --only (it simulates nothing)");
  }
  const std::string config_file = simulate ? resolve_config_path(o.run.config) : std::string();
  std::vector<FileArgument> inputs = {{"--config", config_file},
                                      {"--sm-count", o.sm_count},
                                      {"--l2-size", o.l2_size},
                                      {"--carveout-rates", o.run.carveout_rates},
                                      {"--table", o.table}};
  for (const std::string& c : o.check) inputs.push_back({"--check", c});
  refuse_clobbering({{"--json", o.json}, {"--csv", o.csv}}, inputs);
  o.run.max_cases = o.cases;

  std::vector<ValidationTable> tables;
  if (simulate) {
    // A committed table to compare with is read before the simulations, so that a bad one fails early.
    std::vector<ValidationTable> committed;
    for (const std::string& c : o.check) {
      for (ValidationTable& t : read_validation_csv(c)) committed.push_back(std::move(t));
    }
    if (!o.sm_count.empty())
      tables.push_back(run_validation(ChipChange::kSmCount, o.sm_count, o.run));
    if (!o.l2_size.empty()) tables.push_back(run_validation(ChipChange::kL2Size, o.l2_size, o.run));
    for (std::size_t i = 0; i < tables.size(); ++i) {
      std::fputs(((i ? "\n" : "") + validation_to_text(tables[i], o.summary_only)).c_str(), stdout);
    }
    if (!o.check.empty()) {
      const std::vector<std::string> diffs = compare_tables(tables, committed);
      std::string names;
      for (const std::string& c : o.check) names += (names.empty() ? "" : ", ") + c;
      std::printf("\ncheck against %s: %s\n", names.c_str(),
                  diffs.empty() ? "every row agrees"
                                : (std::to_string(diffs.size()) + " rows differ").c_str());
      for (const std::string& d : diffs) std::printf("  %s\n", d.c_str());
      if (!diffs.empty()) ctx.exit_code = kExitFailure;
    }
  } else {
    tables = read_validation_csv(o.table);
    for (std::size_t i = 0; i < tables.size(); ++i) {
      std::fputs(((i ? "\n" : "") + validation_to_text(tables[i], o.summary_only)).c_str(), stdout);
    }
  }
  if (!o.json.empty()) {
    write_file_atomically(o.json, validation_to_json(tables));
    std::printf("wrote %s\n", o.json.c_str());
  }
  if (!o.csv.empty()) {
    write_file_atomically(o.csv, validation_to_csv(tables));
    std::printf("wrote %s\n", o.csv.c_str());
  }
}

}  // namespace

void register_validate_command(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<ValidateCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Kernels measured on a changed chip (fewer SMs, less L2) against the simulator with the matching "
      "config change");
  cmd->add_option("-c,--config", o->run.config, "Hardware config: a YAML file or a preset name")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--sm-count", o->sm_count,
                  "Measured CSV of green-context runs (columns sms, sms_requested): each case at "
                  "--set sm.count=S, S the SMs held")
      ->type_name("FILE");
  cmd->add_option(
         "--l2-size", o->l2_size,
         "Measured CSV of persisting-L2 carve-outs (columns reserve, granted_bytes): each case at "
         "--set l2.size=(the config's l2.size - granted_bytes)")
      ->type_name("FILE");
  cmd->add_option(
         "--carveout-rates", o->run.carveout_rates,
         "With --l2-size: the output of models/cuda/ubench/l2_carveout.cu (HBM streams with and "
         "without each carve-out); each reserve also sets hbm.write_rate and hbm.mixed_write_rate "
         "times the write-only stream's rate with it over without, and efficiency.hbm times the "
         "read-only one's (a ratio above 1 counts as 1): the carve-out slows HBM writes, which "
         "l2.size alone does not say")
      ->type_name("FILE");
  cmd->add_option("--only", o->run.only_regex,
                  "Only the cases whose label matches REGEX (searched)")
      ->type_name("REGEX");
  cmd->add_option("--cases", o->cases, "Only the first N cases (after --only) of each file")
      ->check(positive_integer())
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->type_name("N");
  cmd->add_option("-j,--threads", o->run.threads,
                  "Simulations in parallel (the output does not depend on it)")
      ->check(positive_integer())
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u))
      ->type_name("N");
  cmd->add_flag("--summary", o->summary_only, "Print only the header and the per-family summary");
  cmd->add_option(
         "--table", o->table,
         "Summarize a table written by --csv again instead of simulating (no config needed)")
      ->type_name("FILE");
  cmd->add_option(
         "--check", o->check,
         "Compare every simulated row with the same row of the tables written by --csv (repeatable); "
         "exit 1 when one differs or is missing (a stale or regressed table)")
      ->type_name("FILE");
  cmd->add_option("--json", o->json,
                  "Also write the settings, rows and summaries as JSON, atomically")
      ->type_name("FILE");
  cmd->add_option("--csv", o->csv,
                  "Also write the rows as CSV (what --table and --check read), atomically")
      ->type_name("FILE");
  add_examples(
      *cmd,
      "  memwall validate --sm-count traces/measured/h200-sm-count.csv -j 2\n"
      "  memwall validate --l2-size traces/measured/h200-l2-size.csv --only 'naive .*N=1024 ' -j 2\n"
      "  memwall validate --l2-size traces/measured/h200-l2-size.csv \\\n"
      "      --carveout-rates OUT/carveout-1.csv -j 2   (OUT: models/cuda/ubench/l2_carveout.sh OUT)\n"
      "  memwall validate --sm-count traces/measured/h200-sm-count.csv --cases 2 \\\n"
      "      --check traces/measured/h200-sm-count-validate.csv\n"
      "  memwall validate --table traces/measured/h200-sm-count-validate.csv --summary\n"
      "  memwall validate --config h200 --sm-count traces/measured/h200-sm-count.csv \\\n"
      "      --l2-size traces/measured/h200-l2-size.csv -j 2 --json v.json --csv v.csv\n");
  cmd->callback([o, &ctx] { run_validate_command(*o, ctx); });
}

}  // namespace memwall
