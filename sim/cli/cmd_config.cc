// `memwall config ...`: list, show, validate and draw hardware configs.
#include "sim/cli/commands.h"

namespace memwall {

void register_config_commands(CLI::App& app, CliContext& /*ctx*/) {
  CLI::App* config = app.add_subcommand("config", "List, show, validate and draw hardware configs");
  config->require_subcommand(1);
}

}  // namespace memwall
