// `memwall race`: naive vs tiled attention, really computed on the CPU, timed and memory-counted.
#include <cstdint>
#include <cstdio>
#include <memory>

#include "explain/race.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"

namespace memwall {

void register_race_command(CLI::App& app, CliContext& ctx) {
  auto options = std::make_shared<explain::RaceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "race",
      "Run naive and tiled (online-softmax) attention on the CPU; compare time, memory, output");
  cmd->add_option("--seq", options->seqs,
                  "Sequence length N, or a comma-separated list (one row each)")
      ->required()
      ->delimiter(',')
      ->check(positive_integer());
  cmd->add_option("--head-dim", options->head_dim, "Head dimension d, 1 to 1024")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--tile", options->tile,
                  "Tiled implementation's block size (rows of Q and of K/V)")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--repeat", options->repeat, "Timed runs per implementation; the median is shown")
      ->check(positive_integer())
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "Seed of the Q, K, V generator")
      ->check(positive_integer())
      ->capture_default_str();
  add_examples(*cmd,
               "  memwall race --seq 1024 --head-dim 64\n"
               "  memwall race --seq 512,1024,2048 --head-dim 64 --repeat 3\n");
  cmd->callback([options, &ctx] {
    const std::vector<explain::RaceRow> rows = explain::run_race(*options);
    std::fputs(explain::format_race(*options, rows).c_str(), stdout);
    for (const explain::RaceRow& r : rows) {
      if (!r.agree) {
        std::fprintf(stderr, "memwall: race: outputs differ by %.3e at N = %llu (tolerance %.0e)\n",
                     r.max_abs_diff, static_cast<unsigned long long>(r.seq),
                     explain::kRaceTolerance);
        ctx.exit_code = kExitFailure;
      }
    }
  });
}

}  // namespace memwall
