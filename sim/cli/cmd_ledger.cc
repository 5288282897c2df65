// `memwall ledger`: the online-softmax ledger of one row of scores, streamed tile by tile.
#include <cstdint>
#include <cstdio>
#include <memory>

#include "explain/ledger.h"
#include "sim/cli/commands.h"

namespace memwall {

void register_ledger_command(CLI::App& app, CliContext& /*ctx*/) {
  auto options = std::make_shared<explain::LedgerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ledger",
      "Stream one row of scores tile by tile through the online softmax and print its ledger");
  cmd->add_option("--row-len", options->row_len, "Scores in the row (L), 1 to 16777216")
      ->required()
      ->check(positive_integer());
  cmd->add_option("--tile", options->tile,
                  "Scores per tile (T); a tile longer than the row holds the whole row")
      ->required()
      ->check(positive_integer());
  cmd->add_option("--seed", options->seed, "Seed of the score generator")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_flag("--late-max", options->late_max,
                "Plant the row's maximum, 12 above the rest, in the last tile");
  add_examples(*cmd,
               "  memwall ledger --row-len 16 --tile 4\n"
               "  memwall ledger --row-len 1024 --tile 128 --late-max --seed 7\n");
  cmd->callback([options] {
    const explain::LedgerResult result = explain::run_ledger(*options);
    std::fputs(explain::format_ledger(result).c_str(), stdout);
  });
}

}  // namespace memwall
