#pragma once
/// The subcommands of `memwall`. Each group lives in its own cmd_*.cc and registers itself on the
/// top-level app; its callbacks throw memwall::Error on bad input (main reports it) and set
/// `CliContext::exit_code` when they finish with a failing check.

#include <CLI/CLI.hpp>

#include <string>

#include "sim/core/units.h"

namespace memwall {

/// State shared by main and the subcommands.
struct CliContext {
  int exit_code = 0;  ///< the process exit code when the command returns normally
};

/// Adds a "Examples:" footer to a subcommand's --help.
void add_examples(CLI::App& command, const char* examples);

/// A CLI11 check that a flag's text is a whole number written in digits ("-5", "1e6", "2.5" are
/// refused with "must be a positive integer, got TEXT"; a comma list "1024,2048" with "takes one
/// number, got the list ... (lists of values are for memwall sweep and memwall io)"); range and
/// zero are the flag's own checks.
CLI::Validator positive_integer();

/// Adds to every file option of `app` and its subcommands (a FILE or TRACE argument, -o, --json,
/// --timeline) a check refusing an empty file name, which would otherwise mean "not given" and
/// write nothing with exit 0 (`--json ""`). Called once every command is registered.
void refuse_empty_file_names(CLI::App& app);

/// The value of a `--max-memory SIZE` option (run, replay, trace): Bytes{} when not given (the
/// default, half the machine's memory), else the size; UsageError "--max-memory: ..." otherwise.
Bytes max_memory_option(const std::string& text);

void register_config_commands(CLI::App& app, CliContext& ctx);
void register_trace_commands(CLI::App& app, CliContext& ctx);
void register_ledger_command(CLI::App& app, CliContext& ctx);
void register_race_command(CLI::App& app, CliContext& ctx);
void register_traffic_command(CLI::App& app, CliContext& ctx);
void register_roofline_command(CLI::App& app, CliContext& ctx);
void register_sweep_command(CLI::App& app, CliContext& ctx);
void register_io_command(CLI::App& app, CliContext& ctx);
void register_run_commands(CLI::App& app, CliContext& ctx);
void register_calibrate_command(CLI::App& app, CliContext& ctx);
void register_workloads_command(CLI::App& app, CliContext& ctx);
void register_validate_command(CLI::App& app, CliContext& ctx);

}  // namespace memwall
