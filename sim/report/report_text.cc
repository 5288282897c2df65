#include "sim/report/report_text.h"

#include <cmath>

#include <algorithm>
#include <cstdio>

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

void add_figure_rows(Table& t, const std::vector<Column>& cols, std::uint32_t sm_count,
                     const std::vector<std::string>& extra_time,
                     const std::vector<std::string>& extra_dram) {
  auto row = [&](const std::string& label, auto cell, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> r{label};
    for (const Column& c : cols) r.push_back(cell(c));
    r.insert(r.end(), extra.begin(), extra.end());
    t.row(std::move(r));
  };
  row(
      "time", [](const Column& c) { return format_duration(c.span); }, extra_time);
  row("DRAM read", [](const Column& c) { return bytes(c.traffic->dram_read_bytes); });
  row("DRAM write", [](const Column& c) { return bytes(c.traffic->dram_write_bytes); });
  row(
      "DRAM total",
      [](const Column& c) {
        return bytes(c.traffic->dram_read_bytes + c.traffic->dram_write_bytes);
      },
      extra_dram);
  row("SM->L2 read", [](const Column& c) { return bytes(c.traffic->l2_read_bytes); });
  row("SM->L2 write", [](const Column& c) { return bytes(c.traffic->l2_write_bytes); });
  row("L2 hit rate", [](const Column& c) { return percent(c.traffic->l2_hit_rate()); });
  row("shared memory", [](const Column& c) { return bytes(c.traffic->smem_bytes); });
  row("FLOPs",
      [](const Column& c) { return format_si(static_cast<double>(c.traffic->flops), "FLOP"); });
  row("DRAM bandwidth", [](const Column& c) {
    return format_bandwidth(Bandwidth{achieved_dram_bandwidth(*c.traffic, c.span)});
  });
  row("CTAs", [](const Column& c) { return std::to_string(c.traffic->ctas); });
  t.row({"SM time:"});
  auto stall_row = [&](const char* label, double StallTime::*field) {
    row(label, [&](const Column& c) {
      return percent(stall_fractions(*c.stall, sm_count, c.span).*field);
    });
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
    Table t({"", "requests", "mean wait", "busiest", "busy"});
    for (std::size_t i = 0; i < kResourceClassCount; ++i) {
      const auto c = static_cast<ResourceClass>(i);
      const ResourceUse& u = k.resources[i];
      if (u.requests == 0) continue;
      const Tick mean = static_cast<Tick>(std::llround(u.mean_queue()));
      t.row({"    " + std::string(resource_class_name(c)), std::to_string(u.requests),
             mean == 0 ? std::string("0 ns") : format_duration(mean),
             resource_instance_name(c, u.busiest),
             percent(k.duration() == 0 ? 0.0
                                       : static_cast<double>(u.busiest_busy) /
                                             static_cast<double>(k.duration()))});
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
  add_figure_rows(t, cols, r.sm_count, {}, {});
  out += t.str();

  out += "\nDRAM bytes by tensor (read / write):\n";
  Table tensors({"", "read", "write"});
  for (const TensorDramBytes& tb : r.dram_bytes_by_tensor) {
    tensors.row({"  " + tb.name, bytes(tb.read), bytes(tb.write)});
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
  add_figure_rows(t, cols, first.sm_count, time_ratios, dram_ratios);
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
