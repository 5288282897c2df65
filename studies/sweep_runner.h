#pragma once
/// Runs the points of a sweep in parallel and writes one CSV row per point, in point order, so the
/// file is byte-identical for any thread count. Supports shards (`--shard I/N`) and resuming an
/// interrupted run from its sidecar FILE.partial.
///
/// The simulator is reached through one seam, `PointRunner`: given a point, it returns the
/// figures of that point's report as named cells. Tests pass a fake; the CLI passes the simulator.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "studies/sweep_plan.h"

namespace memwall {

/// Runs one point and returns its figures (not its parameters), in a fixed order. Called from
/// several threads at once: it must not share mutable state between calls. Throws on failure.
using PointRunner = std::function<FlatRow(const SweepPoint&)>;

/// Called (under a lock, in completion order) after each point finishes.
using PointDone = std::function<void(const SweepPoint&, const FlatRow& figures)>;

/// Runs `runner` on every point of `indices` on `threads` threads (a shared work queue; each
/// thread runs whole points). Returns the figures in the order of `indices`. If any point throws,
/// no new point starts, running ones finish, and the error of the lowest failing index is rethrown.
/// Stops early (throwing Interrupted) once memwall's interrupt flag is set.
std::vector<FlatRow> run_points(const SweepPlan& plan, const std::vector<std::uint64_t>& indices,
                                const PointRunner& runner, unsigned threads,
                                const PointDone& on_done = {});

/// A sweep's rows as cells: what the CSV holds, before it is written.
struct SweepTable {
  /// ["point","points","sweep" when sharded], the axes in order, then the figures in the runner's order.
  std::vector<std::string> header;
  /// One row per point in point order, as many cells as the header (the texts the CSV holds).
  std::vector<std::vector<std::string>> rows;
};

/// Assembles the table of the points `indices` (ascending) of `plan`, whose figures are
/// `figures` (one per index, in the same order). Every point must give the same figure names;
/// a point that does not is an Error naming both points. With an active `shard`, each row starts
/// with its point index, the plan's point count and `sweep_print` (column "sweep": the
/// fingerprint of the resolved config, workload and axes, which `sweep merge` compares). No
/// points: the header of the axes only.
SweepTable sweep_table(const SweepPlan& plan, const std::vector<std::uint64_t>& indices,
                       const std::vector<FlatRow>& figures, const Shard& shard = {},
                       const std::string& sweep_print = {});

/// How `run_sweep` runs and where it writes.
struct SweepOptions {
  std::string output;  ///< the CSV file; its sidecar is output + ".partial"
  unsigned threads = 1;  ///< worker threads, >= 1
  Shard shard;  ///< which points to run; an active shard adds "point","points","sweep" columns
  bool resume = false;  ///< keep the rows of an existing sidecar whose fingerprint matches
  /// Start afresh over a sidecar of this same sweep; without it (or `resume`) such a sidecar is
  /// an error that asks for one of the two, so that finished rows are never discarded silently.
  bool fresh = false;
  bool progress = false;  ///< draw a progress bar on stderr (the CLI sets it when stderr is a tty)
  /// Text naming everything besides the axes that decides the rows (the resolved config, workload,
  /// fixed options). Goes into the sidecar's fingerprint so a stale one is refused, and into the
  /// "sweep" column of shards so that `sweep merge` refuses shards of different sweeps.
  std::string identity;
};

/// What a sweep did.
struct SweepSummary {
  std::uint64_t points = 0;  ///< rows in the output (this shard's points)
  std::uint64_t resumed = 0;  ///< rows kept from the sidecar
  std::uint64_t ran = 0;  ///< points simulated now
  double seconds = 0;  ///< wall-clock time of the run
};

/// Runs the sweep and writes the CSV atomically. Columns: ["point","points","sweep" when sharded], the
/// axes in order, then the figures of the report in the runner's order. Every point must give the
/// same figure names; a point that does not is an error naming both points. Each finished row is
/// appended and flushed to the sidecar, which is removed once the CSV is in place.
SweepSummary run_sweep(const SweepPlan& plan, const PointRunner& runner,
                       const SweepOptions& options);

/// The sidecar path of an output CSV.
std::string partial_path(const std::string& output);

}  // namespace memwall
