#include "studies/sweep_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/progress.h"
#include "studies/sweep_csv.h"

namespace memwall {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPartialMagic = "# memwall sweep partial v2 ";

std::vector<std::string> names_of(const FlatRow& row) {
  std::vector<std::string> names;
  names.reserve(row.size());
  for (const auto& field : row) names.push_back(field.first);
  return names;
}

/// The checksum of one sidecar row: the sweep's fingerprint and the row's cells before it, so a
/// damaged row and a row of another sweep (another fingerprint) both fail it.
std::string row_checksum(const std::string& print, std::string_view cells_text) {
  return fingerprint(print + "\n" + std::string(cells_text));
}

/// One sidecar line: the point index, the point's parameters (name, value), the figures (name,
/// value), then the row's checksum.
std::string partial_line(const std::string& print, const SweepPoint& point,
                         const FlatRow& figures) {
  std::vector<std::string> cells{std::to_string(point.index)};
  for (const auto& [name, value] : point.params) {
    cells.push_back(name);
    cells.push_back(value);
  }
  for (const auto& [name, value] : figures) {
    cells.push_back(name);
    cells.push_back(value);
  }
  std::string line = csv_line(cells);
  line.pop_back();  // the "\n"
  return line + "," + row_checksum(print, line) + "\n";
}

/// Reads the complete lines of a sidecar with the right fingerprint; a torn last line is dropped.
/// Every other line must be a row of this sweep, in full: its checksum right, its index one of
/// `wanted`, its parameters those of that point, once. Anything else is a UsageError naming the
/// line, before any point is simulated.
std::map<std::uint64_t, FlatRow> read_partial(const std::string& path, const std::string& print,
                                              const SweepPlan& plan,
                                              const std::vector<std::uint64_t>& wanted) {
  std::map<std::uint64_t, FlatRow> rows;
  std::ifstream in(path, std::ios::binary);
  if (!in) return rows;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string advice = "; delete the file or run without --resume";
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) break;  // torn by an interruption: run that point again
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    if (line_no == 1) {
      if (line != kPartialMagic + print) {
        throw UsageError(where +
                         ": left by a different sweep (other config, workload, axes, "
                         "shard or memwall version)" +
                         advice);
      }
      continue;
    }
    const std::size_t comma = line.rfind(',');
    if (comma == std::string::npos ||
        line.substr(comma + 1) != row_checksum(print, line.substr(0, comma))) {
      throw UsageError(where +
                       ": the row's checksum does not match (a damaged row, or one of "
                       "another sweep)" +
                       advice);
    }
    const std::vector<std::string> cells =
        csv_split(std::string_view(line).substr(0, comma), where);
    char* stop = nullptr;
    const unsigned long long index = std::strtoull(cells[0].c_str(), &stop, 10);
    if (cells[0].empty() || *stop != '\0' || cells[0][0] == '-' || cells[0][0] == '+' ||
        cells.size() % 2 != 1 || index >= plan.count() ||
        !std::binary_search(wanted.begin(), wanted.end(), index)) {
      throw UsageError(where + ": not a row of this sweep" + advice);
    }
    const SweepPoint point = plan.point(index);
    const std::size_t params = point.params.size();
    bool same = cells.size() >= 1 + 2 * params;
    for (std::size_t i = 0; same && i < params; ++i) {
      same =
          cells[1 + 2 * i] == point.params[i].first && cells[2 + 2 * i] == point.params[i].second;
    }
    if (!same) {
      std::string claimed;
      for (const auto& [name, value] : point.params)
        claimed += (claimed.empty() ? "" : ", ") + name + "=" + value;
      throw UsageError(where + ": the row claims point " + std::to_string(index) +
                       " but does not "
                       "hold its parameters (" +
                       claimed + ")" + advice);
    }
    FlatRow figures;
    for (std::size_t i = 1 + 2 * params; i + 1 < cells.size(); i += 2) {
      figures.emplace_back(cells[i], cells[i + 1]);
    }
    if (!rows.emplace(index, std::move(figures)).second) {
      throw UsageError(where + ": point " + std::to_string(index) + " appears twice" + advice);
    }
  }
  if (line_no == 0 && !text.empty()) {
    throw UsageError(path + ": not a sweep sidecar" + advice);
  }
  return rows;
}

}  // namespace

std::string partial_path(const std::string& output) { return output + ".partial"; }

std::vector<FlatRow> run_points(const SweepPlan& plan, const std::vector<std::uint64_t>& indices,
                                const PointRunner& runner, unsigned threads,
                                const PointDone& on_done) {
  std::vector<FlatRow> results(indices.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex lock;
  std::optional<std::pair<std::uint64_t, std::exception_ptr>> failure;

  const auto work = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t slot = next.fetch_add(1);
      if (slot >= indices.size()) return;
      const SweepPoint point = plan.point(indices[slot]);
      try {
        if (interrupt_requested()) throw Interrupted();
        FlatRow figures = runner(point);
        const std::lock_guard<std::mutex> guard(lock);
        results[slot] = std::move(figures);
        if (on_done) on_done(point, results[slot]);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(lock);
        if (!failure || point.index < failure->first) {
          failure.emplace(point.index, std::current_exception());
        }
        stop = true;
      }
    }
  };

  const unsigned n = std::max(
      1u,
      std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, indices.size()))));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure->second);
  return results;
}

SweepTable sweep_table(const SweepPlan& plan, const std::vector<std::uint64_t>& indices,
                       const std::vector<FlatRow>& figures, const Shard& shard,
                       const std::string& sweep_print) {
  SweepTable table;
  if (shard.active()) table.header = {"point", "points", "sweep"};
  for (const SweepAxis& axis : plan.axes()) table.header.push_back(axis.name);
  std::vector<std::string> figure_names;
  for (std::size_t i = 0; i < indices.size() && i < figures.size(); ++i) {
    std::vector<std::string> names = names_of(figures[i]);
    if (i == 0) {
      figure_names = names;
      table.header.insert(table.header.end(), names.begin(), names.end());
    } else if (names != figure_names) {
      throw Error("sweep: the report of point " + std::to_string(indices[i]) +
                  " has other figures than point " + std::to_string(indices[0]) +
                  "'s, so they cannot share CSV columns");
    }
    std::vector<std::string> cells;
    if (shard.active())
      cells = {std::to_string(indices[i]), std::to_string(plan.count()), sweep_print};
    for (const auto& field : plan.point(indices[i]).params) cells.push_back(field.second);
    for (const auto& field : figures[i]) cells.push_back(field.second);
    table.rows.push_back(std::move(cells));
  }
  return table;
}

SweepSummary run_sweep(const SweepPlan& plan, const PointRunner& runner,
                       const SweepOptions& options) {
  if (options.output.empty()) throw UsageError("sweep: no output file (-o FILE.csv)");
  if (options.threads < 1) throw UsageError("sweep: -j must be at least 1");
  const auto start = Clock::now();
  const std::vector<std::uint64_t> wanted = plan.shard_indices(options.shard);
  const std::string sweep_print = fingerprint(options.identity + "\n" + plan.describe());
  const std::string print = fingerprint(options.identity + "\n" + plan.describe() +
                                        "\nshard=" + std::to_string(options.shard.index) + "/" +
                                        std::to_string(options.shard.count));
  const std::string sidecar = partial_path(options.output);

  std::map<std::uint64_t, FlatRow> done;
  if (options.resume) {
    done = read_partial(sidecar, print, plan, wanted);
  } else if (!options.fresh) {
    std::ifstream in(sidecar, std::ios::binary);
    std::string first;
    if (in && std::getline(in, first) && first == kPartialMagic + print) {
      throw UsageError(
          sidecar +
          " holds the finished rows of this same sweep, left by an "
          "interrupted run: rerun with --resume to keep them, or --fresh to start over");
    }
  }

  // Start the sidecar afresh with the rows kept, then append each new row as it finishes.
  {
    std::string kept = kPartialMagic + print + "\n";
    for (const auto& [index, figures] : done)
      kept += partial_line(print, plan.point(index), figures);
    write_file_atomically(sidecar, kept);
  }
  std::ofstream partial(sidecar, std::ios::binary | std::ios::app);
  if (!partial) throw Error(sidecar + ": cannot open for appending");

  std::vector<std::uint64_t> todo;
  for (const std::uint64_t i : wanted) {
    if (!done.count(i)) todo.push_back(i);
  }
  ProgressLine bar(options.progress, wanted.size(), wanted.size() - todo.size());
  bool any_fresh = false;
  const PointDone on_done = [&](const SweepPoint& point, const FlatRow& figures) {
    any_fresh = true;
    partial << partial_line(print, point, figures);
    partial.flush();
    bar.step();
  };
  std::vector<FlatRow> fresh;
  try {
    fresh = run_points(plan, todo, runner, options.threads, on_done);
  } catch (...) {
    bar.finish();
    partial.close();
    // Keep the sidecar for --resume only when it holds a finished row.
    if (done.empty() && !any_fresh) {
      std::remove(sidecar.c_str());
    }
    throw;
  }
  bar.finish();
  for (std::size_t i = 0; i < todo.size(); ++i) done[todo[i]] = std::move(fresh[i]);

  // Assemble in point order; every row must have the same figure names.
  std::vector<FlatRow> figures;
  figures.reserve(wanted.size());
  for (const std::uint64_t index : wanted) figures.push_back(std::move(done.at(index)));
  const SweepTable table = sweep_table(plan, wanted, figures, options.shard, sweep_print);
  std::string csv = csv_line(table.header);
  for (const std::vector<std::string>& row : table.rows) csv += csv_line(row);
  partial.close();
  write_file_atomically(options.output, csv);
  std::remove(sidecar.c_str());

  SweepSummary summary;
  summary.points = wanted.size();
  summary.ran = todo.size();
  summary.resumed = wanted.size() - todo.size();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace memwall
