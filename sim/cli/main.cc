// memwall: the command-line entry point. Parses the command line, runs the chosen subcommand and
// turns errors into one clear line on stderr and an exit code (2 for bad input).

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/cli/commands.h"
#include "sim/cli/suggest.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/log.h"
#include "sim/core/version.h"

int main(int argc, char** argv) {
  using namespace memwall;
  CLI::App app{
      "memwall: a cycle-approximate simulator of a GPU's memory hierarchy (SMs, shared memory, "
      "L2, HBM)\nthat replays naive and tiled (FlashAttention) attention and reports where the "
      "time and the bytes go.",
      "memwall"};
  app.set_version_flag("--version", memwall_build_text());
  app.require_subcommand(1);
  app.fallthrough();
  std::string log_level = "warn";
  app.add_option("-v,--log-level", log_level, "Log level: trace, debug, info, warn, error, off")
      ->capture_default_str();
  app.footer(
      "Examples:\n"
      "  memwall config list\n"
      "  memwall config show configs/h200.yaml --set l2.size=\"100 MiB\"\n"
      "Run `memwall COMMAND --help` for each command's options and examples.");

  install_interrupt_handlers();
  CliContext ctx;
  register_config_commands(app, ctx);
  register_trace_commands(app, ctx);
  register_ledger_command(app, ctx);
  register_race_command(app, ctx);
  register_traffic_command(app, ctx);
  register_roofline_command(app, ctx);
  register_sweep_command(app, ctx);
  register_io_command(app, ctx);
  register_run_commands(app, ctx);
  register_calibrate_command(app, ctx);
  register_validate_command(app, ctx);
  register_workloads_command(app, ctx);
  refuse_empty_file_names(app);
  app.parse_complete_callback([&] { set_log_level(log_level); });

  // `memwall help [COMMAND...]` is `memwall [COMMAND...] --help`.
  std::vector<char*> args(argv, argv + argc);
  std::string help_flag = "--help";
  if (argc >= 2 && std::string(argv[1]) == "help") {
    args.erase(args.begin() + 1);
    args.push_back(help_flag.data());
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string known = explain_parse_error(app, static_cast<int>(args.size()), args.data());
    std::fprintf(stderr, "memwall: error: %s\nRun with --help for more information.\n",
                 known.empty() ? e.what() : known.c_str());
    return kExitBadInput;
  } catch (const Error& e) {
    std::fprintf(stderr, "memwall: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memwall: internal error: %s\n", e.what());
    return kExitFailure;
  }
  return ctx.exit_code;
}
