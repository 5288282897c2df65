#pragma once
/// What-if runs: the same workload on variants of the machine, each an explicit config override
/// (exactly what `--set` would take), run beside the base to show what each change would save.
///
///   perfect-l2     l2.size = the smallest power-of-two multiple of the base size holding twice the
///                  workload's tensors (so only compulsory misses remain), at most 1 GiB (the
///                  config's ceiling for l2.size)
///   infinite-sram  sm.smem_per_sm = sm.smem_per_block = 1 GiB (shared memory never limits
///                  occupancy) and sm.smem_bandwidth ×1000 (never limits time)
///   hbm-x2         hbm.bandwidth ×2
///   l2-x2          l2.size ×2

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload_params.h"
#include "sim/core/json_writer.h"
#include "sim/core/units.h"
#include "sim/engine/run_result.h"
#include "sim/hw/config.h"

namespace memwall {

/// One variant of the machine.
struct WhatIf {
  std::string name;  ///< e.g. "hbm-x2"
  std::string description;  ///< one line for people
  std::vector<std::string> overrides;  ///< "key.path=value", applied after the user's --set
};

/// The known what-if names, in documentation order.
std::vector<std::string> what_if_names();

/// Builds what-if `name` for `base` (the config as loaded, user overrides included) and a workload
/// whose tensors take `footprint` bytes. Throws UsageError listing the known names on another name.
WhatIf make_what_if(std::string_view name, const HardwareConfig& base, Bytes footprint);

/// Parses a comma-separated list of names ("perfect-l2,hbm-x2"); repeated names are an error.
std::vector<WhatIf> parse_what_ifs(std::string_view list, const HardwareConfig& base,
                                   Bytes footprint);

/// The two figures a what-if table compares, from one simulation.
struct WhatIfOutcome {
  Tick time = 0;  ///< simulated time of the whole workload
  Bytes dram_bytes;  ///< bytes moved to and from HBM (reads + writes)
};

/// Simulates the workload with `overrides` added to the base config's.
using VariantRunner = std::function<WhatIfOutcome(const std::vector<std::string>& overrides)>;

/// One line of the table; the first line is the base (no overrides).
struct WhatIfRow {
  std::string name;  ///< "base" or the what-if's name
  std::string description;
  std::vector<std::string> overrides;
  WhatIfOutcome outcome;
  Tick saved = 0;  ///< base time − this time (negative if slower)
  double saved_fraction = 0;  ///< saved / base time
};

/// Called once each time a variant (or the base) finishes, from the thread that ran it.
using VariantDone = std::function<void()>;

/// Runs the base and every variant (on `threads` threads; results in the order given).
std::vector<WhatIfRow> run_what_ifs(const std::vector<WhatIf>& what_ifs,
                                    const VariantRunner& runner, unsigned threads = 1,
                                    const VariantDone& on_done = {});

/// The help line of `memwall run --what-if`.
inline constexpr const char* kWhatIfHelp =
    "Also simulate variants of the machine and tabulate the time saved: perfect-l2, "
    "infinite-sram (1 GiB of shared memory per SM and CTA, and its bandwidth x1000), hbm-x2, "
    "l2-x2, smem-direct, issue-overlap (comma list; each is an explicit --set shown in the table)";

/// `memwall run --what-if LIST` for one workload: loads `config` with `sets`, builds the what-ifs
/// of `list` for it (the footprint is the workload's tensors), and simulates `resolved` (a
/// resolved workload, the same tiling in every variant) on the base and on each variant, with
/// the L2 flushed between kernels when `flush_l2`. Throws as load_config and simulate do, with
/// the variant's name in the message.
std::vector<WhatIfRow> run_what_if_list(std::string_view list, const std::string& config,
                                        const std::vector<std::string>& sets,
                                        const WorkloadParams& resolved, bool flush_l2,
                                        unsigned threads = 1, const VariantDone& on_done = {});

/// The what-if rows of each run of `runs` (run_what_if_list on each run's workload), the variants
/// of each run on `threads` threads; with `progress`, a progress line of the variants on stderr
/// (only when it is a terminal), and each variant's overrides logged at level info.
std::vector<std::vector<WhatIfRow>> what_if_tables(std::string_view list, const std::string& config,
                                                   const std::vector<std::string>& sets,
                                                   const std::vector<RunResult>& runs,
                                                   bool flush_l2, unsigned threads, bool progress);

/// The text of what_if_report from tables computed once (so --what-if-json reruns nothing).
std::string what_if_tables_text(const std::vector<RunResult>& runs,
                                const std::vector<std::vector<WhatIfRow>>& tables);

/// The JSON of what_if_report_json from tables computed once.
std::string what_if_tables_json(const std::vector<RunResult>& runs,
                                const std::vector<std::vector<WhatIfRow>>& tables);

/// The what-if tables of `memwall run --what-if LIST`, one per run of `runs` (the runs the command
/// just made; each one's workload parameters are read back from RunResult::workload.params), each
/// under a heading naming the workload. Variants run on 2 threads.
std::string what_if_report(std::string_view list, const std::string& config,
                           const std::vector<std::string>& sets, const std::vector<RunResult>& runs,
                           bool flush_l2);

/// The same tables as a JSON object {"<workload>": [rows...], ...} (ends with a newline).
std::string what_if_report_json(std::string_view list, const std::string& config,
                                const std::vector<std::string>& sets,
                                const std::vector<RunResult>& runs, bool flush_l2);

/// A fixed-width text table: name, time, DRAM bytes, time saved, then the override of each line.
std::string format_what_if_text(const std::vector<WhatIfRow>& rows);

/// `rows` as the JSON array `key` of `w` (one row per line), every figure in base units: name,
/// description, overrides, time_s, dram_bytes, saved_s, saved_fraction.
void write_what_if_json(JsonWriter& w, std::string_view key, const std::vector<WhatIfRow>& rows);

}  // namespace memwall
