#include "studies/what_if.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "models/model_source.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/progress.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/sweep_runner.h"
#include "studies/sweep_workload.h"
#include "traces/interruptible_source.h"

namespace memwall {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

/// A size as the config reads it, exact: the largest binary unit dividing it.
std::string size_text(std::uint64_t bytes) {
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " B";
}

/// A bandwidth as the config reads it, to 12 significant digits.
std::string bandwidth_text(double bytes_per_second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g GB/s", bytes_per_second / 1e9);
  return buf;
}

std::string seconds_text(Tick t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9e",
                static_cast<double>(t) / static_cast<double>(kTicksPerSecond));
  return buf;
}

}  // namespace

std::vector<std::string> what_if_names() {
  return {"perfect-l2", "infinite-sram", "hbm-x2", "l2-x2", "smem-direct", "issue-overlap"};
}

WhatIf make_what_if(std::string_view name, const HardwareConfig& base, Bytes footprint) {
  WhatIf w;
  w.name = std::string(name);
  if (name == "perfect-l2") {
    std::uint64_t size = base.l2.size.count;
    while (size < 2 * footprint.count && size * 2 <= kGiB) size *= 2;
    w.description = "L2 holding twice the workload's tensors: only compulsory misses";
    if (size < 2 * footprint.count)
      w.description += " (capped at 1 GiB, the largest L2 a config may have)";
    w.overrides = {"l2.size=" + size_text(size)};
  } else if (name == "infinite-sram") {
    w.description =
        "shared memory never limits occupancy (1 GiB per SM and CTA) nor time (bandwidth x1000)";
    w.overrides = {
        "sm.smem_per_sm=1 GiB", "sm.smem_per_block=1 GiB",
        "sm.smem_bandwidth=" + bandwidth_text(base.sm.smem_bandwidth.bytes_per_second * 1000)};
  } else if (name == "hbm-x2") {
    w.description = "twice the HBM bandwidth";
    w.overrides = {"hbm.bandwidth=" + bandwidth_text(base.hbm.bandwidth.bytes_per_second * 2)};
  } else if (name == "l2-x2") {
    w.description = "twice the L2 capacity";
    w.overrides = {"l2.size=" + size_text(base.l2.size.count * 2)};
  } else if (name == "smem-direct") {
    w.description =
        "shared-memory reads overlap the MMAs instead of taking turns with them (as "
        "when the tensor cores read operands from shared memory, wgmma)";
    w.overrides = {"sm.smem_pipe=own"};
  } else if (name == "issue-overlap") {
    w.description =
        "the schedulers issue a kernel's other instructions while its MMAs run instead of "
        "taking turns with them (as with more warps per scheduler, or FlashAttention-3's "
        "ping-pong of two warpgroups)";
    w.overrides = {"sm.issue_pipe=own"};
  } else {
    std::string known;
    for (const auto& n : what_if_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("--what-if: unknown what-if \"" + std::string(name) + "\" (known: " + known +
                     ")");
  }
  return w;
}

std::vector<WhatIf> parse_what_ifs(std::string_view list, const HardwareConfig& base,
                                   Bytes footprint) {
  std::vector<WhatIf> out;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string_view name = list.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name.empty()) throw UsageError("--what-if: empty name in \"" + std::string(list) + "\"");
    if (!seen.insert(std::string(name)).second) {
      throw UsageError("--what-if: \"" + std::string(name) + "\" is given twice");
    }
    out.push_back(make_what_if(name, base, footprint));
    start = comma + 1;
  }
  return out;
}

std::vector<WhatIfRow> run_what_ifs(const std::vector<WhatIf>& what_ifs,
                                    const VariantRunner& runner, unsigned threads,
                                    const VariantDone& on_done) {
  std::vector<WhatIfRow> rows(what_ifs.size() + 1);
  rows[0].name = "base";
  rows[0].description = "the config as given";
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) {
      rows[i].name = what_ifs[i - 1].name;
      rows[i].description = what_ifs[i - 1].description;
      rows[i].overrides = what_ifs[i - 1].overrides;
    }
    ids.push_back(std::to_string(i));
  }
  // Reuse the sweep's work queue: one point per variant.
  const SweepPlan plan({{"variant", ids}});
  std::vector<std::uint64_t> indices;
  for (std::uint64_t i = 0; i < rows.size(); ++i) indices.push_back(i);
  const PointRunner run_one = [&](const SweepPoint& p) -> FlatRow {
    WhatIfOutcome o;
    try {
      o = runner(rows[p.index].overrides);
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      throw Error("what-if " + rows[p.index].name + ": " + e.what(), e.exit_code());
    }
    return {{"time", std::to_string(o.time)}, {"dram_bytes", std::to_string(o.dram_bytes.count)}};
  };
  PointDone done;
  if (on_done) done = [&](const SweepPoint&, const FlatRow&) { on_done(); };
  const std::vector<FlatRow> results = run_points(plan, indices, run_one, threads, done);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].outcome.time = std::stoll(results[i][0].second);
    rows[i].outcome.dram_bytes = Bytes{std::stoull(results[i][1].second)};
  }
  const Tick base_time = rows[0].outcome.time;
  for (WhatIfRow& row : rows) {
    row.saved = base_time - row.outcome.time;
    row.saved_fraction =
        base_time > 0 ? static_cast<double>(row.saved) / static_cast<double>(base_time) : 0.0;
  }
  return rows;
}

std::vector<WhatIfRow> run_what_if_list(std::string_view list, const std::string& config,
                                        const std::vector<std::string>& sets,
                                        const WorkloadParams& resolved, bool flush_l2,
                                        unsigned threads, const VariantDone& on_done) {
  const HardwareConfig base = load_config(config, sets);
  // Keep the source alive while its tensors are read (a temporary in the range-for would not be).
  const std::unique_ptr<TraceSource> probe = make_model_source(resolved);
  Bytes footprint;
  for (const TensorInfo& t : probe->workload().tensors) footprint += Bytes{t.bytes};
  const std::vector<WhatIf> what_ifs = parse_what_ifs(list, base, footprint);
  const VariantRunner runner = [&](const std::vector<std::string>& overrides) {
    std::vector<std::string> all = sets;
    all.insert(all.end(), overrides.begin(), overrides.end());
    const HardwareConfig hw = load_config(config, all);
    const std::unique_ptr<TraceSource> source = make_model_source(resolved);
    InterruptibleSource polled(*source);
    SimOptions options;
    options.flush_l2_between_kernels = flush_l2;
    const RunResult r = simulate(hw, polled, options);
    return WhatIfOutcome{r.time, Bytes{r.traffic.dram_read_bytes + r.traffic.dram_write_bytes}};
  };
  for (const WhatIf& w : what_ifs) {
    std::string change;
    for (const std::string& o : w.overrides) change += " --set " + o;
    spdlog::info("what-if {}:{}", w.name, change);
  }
  return run_what_ifs(what_ifs, runner, threads, on_done);
}

namespace {

/// The resolved workload parameters of a run, read back from its WorkloadInfo::params.
WorkloadParams params_of_run(const RunResult& run) {
  WorkloadParams p;
  for (const auto& [name, value] : run.workload.params) set_workload_param(p, name, value);
  return resolve_workload(p);
}

}  // namespace

std::vector<std::vector<WhatIfRow>> what_if_tables(std::string_view list, const std::string& config,
                                                   const std::vector<std::string>& sets,
                                                   const std::vector<RunResult>& runs,
                                                   bool flush_l2, unsigned threads, bool progress) {
  std::vector<std::vector<WhatIfRow>> tables;
  // The base and one line per name of the list, for every run.
  const std::size_t names = static_cast<std::size_t>(std::count(list.begin(), list.end(), ',')) + 1;
  const std::size_t variants = 1 + names;
  ProgressLine line(progress && stderr_is_terminal(), variants * runs.size(), 0, "what-if runs");
  for (const RunResult& run : runs) {
    tables.push_back(run_what_if_list(list, config, sets, params_of_run(run), flush_l2, threads,
                                      [&line] { line.step(); }));
  }
  line.finish();
  return tables;
}

std::string what_if_tables_text(const std::vector<RunResult>& runs,
                                const std::vector<std::vector<WhatIfRow>>& tables) {
  std::string out;
  for (std::size_t i = 0; i < runs.size() && i < tables.size(); ++i) {
    out += "\nwhat-if: " + runs[i].workload.name + " on " + runs[i].config_name + "\n" +
           format_what_if_text(tables[i]);
  }
  return out;
}

std::string what_if_tables_json(const std::vector<RunResult>& runs,
                                const std::vector<std::vector<WhatIfRow>>& tables) {
  JsonWriter w;
  w.open("", '{');
  for (std::size_t i = 0; i < runs.size() && i < tables.size(); ++i) {
    write_what_if_json(w, runs[i].workload.name, tables[i]);
  }
  w.close();
  return w.take();
}

std::string what_if_report(std::string_view list, const std::string& config,
                           const std::vector<std::string>& sets, const std::vector<RunResult>& runs,
                           bool flush_l2) {
  return what_if_tables_text(runs, what_if_tables(list, config, sets, runs, flush_l2, 2, false));
}

std::string what_if_report_json(std::string_view list, const std::string& config,
                                const std::vector<std::string>& sets,
                                const std::vector<RunResult>& runs, bool flush_l2) {
  return what_if_tables_json(runs, what_if_tables(list, config, sets, runs, flush_l2, 2, false));
}

std::string format_what_if_text(const std::vector<WhatIfRow>& rows) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-14s %12s %12s %12s %8s  %s\n", "what-if", "time", "DRAM",
                "saved", "saved %", "config change");
  out += buf;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const WhatIfRow& row = rows[i];
    std::string change;
    for (const auto& o : row.overrides) change += (change.empty() ? "--set " : " --set ") + o;
    if (change.empty()) change = "-";
    // Two names can come to one override for a workload (perfect-l2 is l2-x2 when twice the L2
    // already holds twice the tensors): say so, rather than show two "different" variants.
    for (std::size_t j = 0; j < i; ++j) {
      if (j > 0 && rows[j].overrides == row.overrides) {
        change += "  (the same change as " + rows[j].name + " here)";
        break;
      }
    }
    // A zero saving is a plain 0: "0 ps" suggested a precision the comparison does not have.
    const std::string saved = row.saved == 0  ? "0"
                              : row.saved < 0 ? "-" + format_duration(-row.saved)
                                              : format_duration(row.saved);
    std::snprintf(buf, sizeof buf, "%-14s %12s %12s %12s %7.1f%%  %s\n", row.name.c_str(),
                  format_duration(row.outcome.time).c_str(),
                  format_bytes(row.outcome.dram_bytes).c_str(), saved.c_str(),
                  row.saved_fraction * 100.0, change.c_str());
    out += buf;
  }
  return out;
}

void write_what_if_json(JsonWriter& w, std::string_view key, const std::vector<WhatIfRow>& rows) {
  using Layout = JsonWriter::Layout;
  w.open(key, '[');
  for (const WhatIfRow& row : rows) {
    w.open("", '{', Layout::kInline);
    w.string("name", row.name);
    w.string("description", row.description);
    w.open("overrides", '[');
    for (const std::string& o : row.overrides) w.string("", o);
    w.close();
    w.raw("time_s", seconds_text(row.outcome.time));
    w.integer("dram_bytes", row.outcome.dram_bytes.count);
    w.raw("saved_s", seconds_text(row.saved));
    char frac[64];
    std::snprintf(frac, sizeof frac, "%.6f", row.saved_fraction);
    w.raw("saved_fraction", frac);
    w.close();
  }
  w.close();
}

}  // namespace memwall
