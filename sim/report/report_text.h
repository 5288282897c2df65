#pragma once
/// The text summary of runs for people: time, bytes per level, L2 hit rate, stall breakdown and
/// achieved DRAM bandwidth, per kernel and in total; several workloads side by side with ratios.

#include <string>
#include <vector>

#include "sim/engine/run_result.h"
#include "sim/report/provenance.h"

namespace memwall {

/// One run: a header, a table with a "total" column and one column per kernel, then the DRAM
/// bytes by tensor and by reason.
std::string format_run_report(const RunResult& result);

/// The same, with provenance_text (config, overrides, resolved values, memwall build) ending
/// its head, before the first blank line: what `memwall run` and `memwall replay` print.
std::string format_run_report(const RunResult& result, const RunProvenance& provenance);

/// Several runs of the same config: one column per workload (its totals), then for each run after
/// the first a ratio column "FIRST/OTHER" of time and DRAM bytes.
std::string format_comparison(const std::vector<RunResult>& results);

/// The same, with provenance_text ending its head (after the workloads' lines).
std::string format_comparison(const std::vector<RunResult>& results,
                              const RunProvenance& provenance);

}  // namespace memwall
