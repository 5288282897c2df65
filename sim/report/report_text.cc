#include "sim/report/report_text.h"

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "sim/report/report_json.h"

namespace memwall {
namespace {

/// A table of text cells: a header row, then rows of a label and one cell per column.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : m_rows{std::move(header)} {}
  void row(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
  void blank() { m_rows.emplace_back(); }
  std::string str() const {
    std::vector<std::size_t> width;
    for (const auto& r : m_rows) {
      if (width.size() < r.size()) width.resize(r.size(), 0);
      for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    std::string out;
    for (const auto& r : m_rows) {
      std::string line;
      for (std::size_t i = 0; i < r.size(); ++i) {
        const std::string pad(width[i] - r[i].size(), ' ');
        line += i == 0 ? r[i] + pad : "  " + pad + r[i];  // label left, numbers right
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> m_rows;
};

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

std::string ratio(double a, double b) {
  if (b == 0.0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
  return buf;
}

std::string bytes(std::uint64_t b) { return format_bytes(Bytes{b}); }

/// The figures of one column.
struct Column {
  std::string name;
  const TrafficCounters* traffic;
  const StallTime* stall;
  Tick span;
};

/// A registered figure as the text report shows it, by its unit.
std::string figure_text(const FigureStat& f, const TrafficCounters& c, Tick span) {
  switch (f.unit) {
    case FigureStat::Unit::kSeconds: return format_duration_seconds(f.value(c, span));
    case FigureStat::Unit::kBytes: return bytes(f.count(c));
    case FigureStat::Unit::kCount: return std::to_string(f.count(c));
    case FigureStat::Unit::kFraction: return percent(f.value(c, span));
    case FigureStat::Unit::kFlops: return format_si(f.value(c, span), "FLOP");
    case FigureStat::Unit::kOps: return format_si(f.value(c, span), "op");
    case FigureStat::Unit::kBandwidth: return format_bandwidth(Bandwidth{f.value(c, span)});
    case FigureStat::Unit::kWatts: {
      // No power model (no energies in the config): no figure, rather than 0 W.
      const double watts = f.value(c, span);
      return watts > 0 ? format_si(watts, "W") : "-";
    }
    case FigureStat::Unit::kHertz: return format_si(f.value(c, span), "Hz");
  }
  return "";
}

/// The figure rows: each registered figure with a text label, in report order (figure_stats()),
/// then the SM time split. `extra` adds cells to a figure's row, by its name (a comparison's
/// ratios).
void add_figure_rows(Table& t, const std::vector<Column>& cols, std::uint32_t sm_count,
                     const std::map<std::string_view, std::vector<std::string>>& extra) {
  auto row = [&](const std::string& label, auto cell, const std::vector<std::string>& more) {
    std::vector<std::string> r{label};
    for (const Column& c : cols) r.push_back(cell(c));
    r.insert(r.end(), more.begin(), more.end());
    t.row(std::move(r));
  };
  for (const FigureStat& f : figure_stats()) {
    if (f.text.empty()) continue;
    const auto more = extra.find(f.name);
    row(
        std::string(f.text), [&](const Column& c) { return figure_text(f, *c.traffic, c.span); },
        more == extra.end() ? std::vector<std::string>{} : more->second);
  }
  t.row({"SM time:"});
  auto stall_row = [&](const char* label, double StallTime::*field) {
    row(label,
        [&](const Column& c) {
          return percent(stall_fractions(*c.stall, sm_count, c.span).*field);
        },
        {});
  };
  stall_row("  compute", &StallTime::compute);
  stall_row("  memory latency", &StallTime::memory_latency);
  stall_row("  memory bandwidth", &StallTime::memory_bandwidth);
  stall_row("  idle", &StallTime::idle);
}

std::string params_text(const WorkloadInfo& w) {
  std::string out;
  for (const auto& [k, v] : w.params) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

/// The resource table of each kernel: requests, mean wait per request, the busiest instance and
/// the share of the kernel it was busy.
std::string resources_text(const RunResult& r) {
  std::string out =
      "\nQueueing by resource (wait per request; busiest instance, busy share of the kernel):\n";
  for (const KernelResult& k : r.kernels) {
    out += "  " + k.name + ":\n";
    std::vector<std::string> header{""};
    for (const ResourceStat& stat : resource_stats()) {
      if (!stat.text.empty()) header.emplace_back(stat.text);
    }
    Table t(header);
    for (std::size_t i = 0; i < kResourceClassCount; ++i) {
      const auto c = static_cast<ResourceClass>(i);
      const ResourceUse& u = k.resources[i];
      if (u.requests == 0) continue;
      std::vector<std::string> row{"    " + std::string(resource_class_name(c))};
      for (const ResourceStat& stat : resource_stats()) {
        if (stat.text.empty()) continue;
        switch (stat.kind) {
          case ResourceStat::Kind::kCount: row.push_back(std::to_string(stat.count(u))); break;
          case ResourceStat::Kind::kSeconds: {
            const Tick ticks = static_cast<Tick>(std::llround(stat.ticks(u)));
            row.push_back(ticks == 0 ? std::string("0 ns") : format_duration(ticks));
            break;
          }
          case ResourceStat::Kind::kFraction:
            row.push_back(percent(stat.value(u, k.duration())));
            break;
          case ResourceStat::Kind::kInstance:
            row.push_back(resource_instance_name(c, u.busiest));
            break;
        }
      }
      t.row(std::move(row));
    }
    out += t.str();
  }
  return out;
}

/// Inserts `lines` at the end of the report's head, the lines before its first blank line.
std::string after_head(const std::string& report, const std::string& lines) {
  const std::size_t blank = report.find("\n\n");
  if (blank == std::string::npos) return report + lines;
  return report.substr(0, blank + 1) + lines + report.substr(blank + 1);
}

}  // namespace

std::string format_run_report(const RunResult& r) {
  std::string out =
      r.workload.name + " on " + r.config_name + "  (" + params_text(r.workload) + ")";
  if (r.flush_l2_between_kernels) out += "  [L2 flushed between kernels]";
  out += "\n\n";
  std::vector<std::string> header{""};
  std::vector<Column> cols;
  header.push_back("total");
  cols.push_back(Column{"total", &r.traffic, &r.stall, r.time});
  if (r.kernels.size() > 1) {
    for (const KernelResult& k : r.kernels) {
      header.push_back(k.name);
      cols.push_back(Column{k.name, &k.traffic, &k.stall, k.duration()});
    }
  }
  Table t(header);
  add_figure_rows(t, cols, r.sm_count, {});
  out += t.str();

  out += "\nDRAM bytes by tensor (read / write):\n";
  std::vector<std::string> tensor_header{""};
  for (const TensorStat& stat : tensor_stats()) {
    if (!stat.text.empty()) tensor_header.emplace_back(stat.text);
  }
  Table tensors(tensor_header);
  for (const TensorDramBytes& tb : r.dram_bytes_by_tensor) {
    std::vector<std::string> row{"  " + tb.name};
    for (const TensorStat& stat : tensor_stats()) {
      if (!stat.text.empty()) row.push_back(bytes(stat.bytes(tb)));
    }
    tensors.row(std::move(row));
  }
  out += tensors.str();
  out += "DRAM bytes by reason: compulsory " + bytes(r.dram_bytes_by_reason.compulsory) +
         ", re-read " + bytes(r.dram_bytes_by_reason.reread) + ", write-back " +
         bytes(r.dram_bytes_by_reason.writeback) + "\n";
  out += "Dirty in L2 at the end (never written back): " + bytes(r.dram_dirty_bytes_at_end) + "\n";
  out += resources_text(r);
  if (r.flush_l2_between_kernels) {
    out +=
        "Written back by the between-kernel flushes: " + bytes(r.dram_flush_writeback_bytes) + "\n";
  }
  return out;
}

std::string format_comparison(const std::vector<RunResult>& runs) {
  if (runs.empty()) return "";
  std::string out = "on " + runs[0].config_name + "\n";
  for (const RunResult& r : runs)
    out += "  " + r.workload.name + ": " + params_text(r.workload) + "\n";
  out += "\n";
  std::vector<std::string> header{""};
  std::vector<Column> cols;
  for (const RunResult& r : runs) {
    header.push_back(r.workload.name);
    cols.push_back(Column{r.workload.name, &r.traffic, &r.stall, r.time});
  }
  std::vector<std::string> time_ratios;
  std::vector<std::string> dram_ratios;
  const RunResult& first = runs[0];
  const auto dram = [](const RunResult& r) {
    return static_cast<double>(r.traffic.dram_read_bytes + r.traffic.dram_write_bytes);
  };
  for (std::size_t i = 1; i < runs.size(); ++i) {
    header.push_back(first.workload.name + "/" + runs[i].workload.name);
    time_ratios.push_back(
        ratio(static_cast<double>(first.time), static_cast<double>(runs[i].time)));
    dram_ratios.push_back(ratio(dram(first), dram(runs[i])));
  }
  Table t(header);
  add_figure_rows(t, cols, first.sm_count, {{"time_s", time_ratios}, {"dram_bytes", dram_ratios}});
  out += t.str();
  return out;
}

std::string format_run_report(const RunResult& result, const RunProvenance& provenance) {
  return after_head(format_run_report(result), provenance_text(provenance));
}

std::string format_comparison(const std::vector<RunResult>& results,
                              const RunProvenance& provenance) {
  return after_head(format_comparison(results), provenance_text(provenance));
}

}  // namespace memwall
