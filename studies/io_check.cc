#include "studies/io_check.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <spdlog/spdlog.h>

#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/progress.h"
#include "sim/hw/config_loader.h"
#include "studies/measured_csv.h"
#include "studies/measured_join.h"
#include "studies/sweep_runner.h"
#include "studies/sweep_workload.h"

namespace memwall {
namespace {

constexpr std::uint64_t kMaxSmem = 1ull << 30;  // the config's ceiling for shared memory

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// A byte count read as a double: whole numbers in full, anything else as number_text.
std::string bytes_text(double v) {
  if (v >= 0 && v < 9007199254740992.0 && v == std::floor(v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  return number_text(v);
}

const std::string* find_field(const FlatRow& row, std::string_view name) {
  for (const auto& [key, value] : row) {
    if (key == name) return &value;
  }
  return nullptr;
}

/// The value of a point's sram axis in bytes, or empty.
std::optional<std::uint64_t> sram_of(const SweepPoint& point) {
  for (const auto& [name, value] : point.params) {
    if (name == "sram_bytes") {
      WorkloadParams p;
      set_workload_param(p, name, value);
      return p.sram_bytes;
    }
  }
  return std::nullopt;
}

std::string size_override(const char* key, std::uint64_t bytes) {
  return std::string(key) + "=" + std::to_string(bytes) + " B";
}

double metric_value(const IoPoint& p, const std::string& metric) {
  if (metric == "closed_form_bytes") return static_cast<double>(p.closed_form.total());
  if (metric == "sim_l2_bytes") return static_cast<double>(p.sim.l2.total());
  if (metric == "sim_dram_bytes") return static_cast<double>(p.sim_dram_bytes());
  if (metric == "measured_l2_bytes") return p.measured_l2_bytes().value_or(0.0);
  return p.measured_dram_bytes().value_or(0.0);
}

/// Fits every metric over axis `axis` ("seq" or "sram_bytes") within groups of fixed other axes.
void add_fits(IoReport& report, const std::string& axis, const std::string& over,
              WorkloadKind kind) {
  std::vector<std::pair<FlatRow, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    FlatRow key;
    bool has_axis = false;
    for (const auto& field : report.points[i].axes.params) {
      if (field.first == axis)
        has_axis = true;
      else
        key.push_back(field);
    }
    if (!has_axis) return;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end())
      groups.push_back({key, {i}});
    else
      it->second.push_back(i);
  }
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    for (const std::string metric : {"closed_form_bytes", "sim_l2_bytes", "sim_dram_bytes",
                                     "measured_l2_bytes", "measured_dram_bytes"}) {
      std::vector<double> x, y;
      bool complete = true;
      for (const std::size_t i : members) {
        const IoPoint& p = report.points[i];
        const double v = metric_value(p, metric);
        if (!(v > 0)) complete = false;
        const std::string& xv = p.axes.at(axis);
        x.push_back(axis == "sram_bytes" ? static_cast<double>(*sram_of(p.axes)) : std::stod(xv));
        y.push_back(v);
      }
      std::vector<double> distinct = x;
      std::sort(distinct.begin(), distinct.end());
      if (!complete || std::unique(distinct.begin(), distinct.end()) - distinct.begin() < 2)
        continue;
      report.fits.push_back(
          {over, metric, key, fit_power_law(x, y), expected_exponent(kind, over), x, y});
    }
  }
}

}  // namespace

std::uint64_t IoPoint::sim_dram_bytes() const {
  return sim.dram.total() + (ideal ? sim.dram_dirty_at_end : 0);
}

namespace {

/// The sum of two measured cells, when both are present and numbers.
std::optional<double> measured_sum(const std::optional<FlatRow>& measured, const char* a,
                                   const char* b) {
  if (!measured) return std::nullopt;
  const std::string* x = find_field(*measured, a);
  const std::string* y = find_field(*measured, b);
  if (!x || !y || x->empty() || y->empty()) return std::nullopt;
  char* end_x = nullptr;
  char* end_y = nullptr;
  const double vx = std::strtod(x->c_str(), &end_x);
  const double vy = std::strtod(y->c_str(), &end_y);
  if (*end_x != '\0' || *end_y != '\0') return std::nullopt;
  return vx + vy;
}

}  // namespace

std::optional<double> IoPoint::measured_dram_bytes() const {
  return measured_sum(measured, "dram_read_bytes", "dram_write_bytes");
}

std::optional<double> IoPoint::measured_l2_bytes() const {
  return measured_sum(measured, "l2_read_bytes", "l2_write_bytes");
}

std::vector<std::string> ideal_overrides(const HardwareConfig& base) {
  return {"sm.count=1",      "sm.max_ctas_per_sm=1",
          "l2.partitions=1", "l2.slices=1",
          "l2.ways=1",       size_override("l2.size", base.l2.line_size.count)};
}

double expected_exponent(WorkloadKind workload, std::string_view over) {
  return workload_plugin(workload).io_exponent(over);
}

WorkloadParams io_params(const SweepPoint& point, const HardwareConfig& config) {
  WorkloadParams p = workload_params_of(point);
  const bool has_seq = std::any_of(point.params.begin(), point.params.end(),
                                   [](const Field& f) { return f.first == "seq"; });
  workload_plugin(p.workload)
      .io_defaults(p, has_seq, sram_of(point), config.sm.smem_per_block.count);
  p.smem_limit_bytes = config.sm.smem_per_block.count;
  p.arch = config.sm.arch;
  p.sm_count = config.sm.count;
  choose_gemm_kernel(p);
  return resolve_workload(p);
}

IoReport run_io(const SweepPlan& plan, const IoOptions& options, const CsvTable* measured) {
  IoReport report;
  report.config = options.config;
  report.ideal = options.ideal;
  const HardwareConfig base = load_config(options.config, options.sets);
  if (options.ideal) report.ideal_overrides = ideal_overrides(base);
  if (plan.axes().empty() || plan.axes()[0].name != "workload" ||
      plan.axes()[0].values.size() != 1) {
    throw UsageError("io: the first axis must be the one workload");
  }
  report.workload = plan.axes()[0].values[0];
  const WorkloadKind kind = parse_workload_kind(report.workload);

  // The measured rows, keyed by their join columns.
  std::vector<int> join_cols;
  std::vector<int> figure_cols;
  std::map<std::vector<std::string>, std::size_t> measured_rows;
  if (measured) {
    // A join column the file lacks is left out of the join (a CSV of one tiling need not name
    // it); a clash of two rows then names the missing columns as the likely cause.
    std::string missing;
    for (const char* name : kMeasuredParamColumns) {
      join_cols.push_back(measured->column(name));
      if (join_cols.back() < 0) missing += std::string(missing.empty() ? "" : ", ") + name;
    }
    for (std::size_t c = 0; c < measured->header.size(); ++c) {
      const std::string& h = measured->header[c];
      if (h.size() > 6 && h.ends_with("_bytes") &&
          std::find(join_cols.begin(), join_cols.end(), static_cast<int>(c)) == join_cols.end()) {
        figure_cols.push_back(static_cast<int>(c));
      }
    }
    const int kernel_col = measured->column("kernel");
    for (std::size_t r = 0; r < measured->rows.size(); ++r) {
      if (kernel_col >= 0 && measured->rows[r][static_cast<std::size_t>(kernel_col)] != "total")
        continue;
      for (const int c : figure_cols) {
        const std::string& cell = measured->rows[r][static_cast<std::size_t>(c)];
        if (cell.empty()) continue;  // not measured
        (void)parse_measured_count(cell, measured->path + ":" +
                                             std::to_string(measured->row_lines[r]) + ": column " +
                                             measured->header[static_cast<std::size_t>(c)]);
      }
      std::vector<std::string> key;
      FlatRow named = measured_variant_cells(
          *measured, r, measured->path + ":" + std::to_string(measured->row_lines[r]));
      for (std::size_t j = 0; j < join_cols.size(); ++j) {
        const int c = join_cols[j];
        key.push_back(c < 0 ? "" : measured->rows[r][static_cast<std::size_t>(c)]);
        named.emplace_back(kMeasuredParamColumns[j], key.back());
      }
      for (std::string& v : variant_join_values(named)) key.push_back(std::move(v));
      const auto [it, fresh] = measured_rows.emplace(key, r);
      if (!fresh) {
        throw UsageError(measured->path + ":" + std::to_string(measured->row_lines[r]) +
                         ": the same point as line " +
                         std::to_string(measured->row_lines[it->second]) + " (rows are joined on " +
                         measured_join_columns_text(*measured) +
                         (missing.empty() ? std::string(")")
                                          : "; the file has no column " + missing +
                                                ", so rows that differ only there look the same)"));
      }
    }
  }

  std::vector<std::uint64_t> indices;
  for (std::uint64_t i = 0; i < plan.count(); ++i) indices.push_back(i);
  report.points.resize(plan.count());
  const PointRunner run_one = [&](const SweepPoint& point) -> FlatRow {
    std::vector<std::string> overrides = options.sets;
    if (options.ideal)
      overrides.insert(overrides.end(), report.ideal_overrides.begin(),
                       report.ideal_overrides.end());
    if (const auto sram = sram_of(point)) {
      const std::uint64_t need = std::min(kMaxSmem, std::max(4 * *sram, base.sm.smem_per_sm.count));
      if (need > base.sm.smem_per_sm.count) {
        overrides.push_back(size_override("sm.smem_per_sm", need));
        overrides.push_back(size_override("sm.smem_per_block", need));
      }
    }
    HardwareConfig hw;
    WorkloadParams params;
    try {
      hw = load_config(options.config, overrides);
      params = io_params(point, hw);
    } catch (const Error& e) {
      std::string where;
      for (const auto& [name, value] : point.params)
        where += (where.empty() ? "" : " ") + name + "=" + value;
      throw Error("point " + std::to_string(point.index) + " (" + where + "): " + e.what(),
                  e.exit_code());
    }
    IoPoint& out = report.points[point.index];  // each point writes only its own slot
    out.axes = point;
    out.ideal = options.ideal;
    out.params = params.named();
    if (const auto sram = sram_of(point); sram && !find_field(out.params, "sram_bytes")) {
      out.params.emplace_back("sram_bytes", std::to_string(*sram));
    }
    out.closed_form = closed_form_bytes(params);
    out.sim = simulate_io(hw, params, options.flush_l2);
    return {};
  };
  spdlog::info("io: {} point{} on {} thread{}", indices.size(), indices.size() == 1 ? "" : "s",
               options.threads, options.threads == 1 ? "" : "s");
  ProgressLine line(options.progress && stderr_is_terminal(), indices.size());
  run_points(plan, indices, run_one, options.threads,
             [&line](const SweepPoint&, const FlatRow&) { line.step(); });
  line.finish();

  if (measured) {
    std::size_t joined = 0;
    for (IoPoint& p : report.points) {
      std::vector<std::string> key;
      for (std::size_t j = 0; j < join_cols.size(); ++j) {
        const std::string* v = find_field(p.params, kMeasuredParamColumns[j]);
        key.push_back(join_cols[j] < 0 ? "" : (v ? *v : ""));
      }
      for (std::string& v : variant_join_values(p.params)) key.push_back(std::move(v));
      const auto it = measured_rows.find(key);
      if (it == measured_rows.end()) continue;
      FlatRow cells;
      for (const int c : figure_cols) {
        cells.emplace_back(measured->header[static_cast<std::size_t>(c)],
                           measured->rows[it->second][static_cast<std::size_t>(c)]);
      }
      p.measured = cells;
      p.measured_where = measured->path + ":" + std::to_string(measured->row_lines[it->second]);
      ++joined;
    }
    if (joined == 0) {
      throw UsageError(measured->path +
                       ": no \"total\" row joins any point of this run (rows are "
                       "joined on " +
                       measured_join_columns_text(*measured) +
                       ", with the tiles this config resolves); check the shape and the config");
    }
  }
  add_fits(report, "seq", "seq", kind);
  add_fits(report, "sram_bytes", "sram", kind);
  return report;
}

std::string io_to_json(const IoReport& r) {
  using Layout = JsonWriter::Layout;
  JsonWriter w;
  const auto object = [&](std::string_view key, const FlatRow& row) {
    w.open(key, '{', Layout::kInline);
    for (const auto& [name, value] : row) w.param(name, value);
    w.close();
  };
  const auto measured_bytes = [&](std::string_view key, const std::optional<double>& v) {
    if (v) {
      w.raw(key, bytes_text(*v));
    } else {
      w.null(key);
    }
  };
  w.open("", '{');
  w.string("workload", r.workload);
  w.string("config", r.config);
  w.boolean("ideal", r.ideal);
  w.open("ideal_overrides", '[', Layout::kInline);
  for (const std::string& o : r.ideal_overrides) w.string("", o);
  w.close();
  w.open("points", '[');
  for (const IoPoint& p : r.points) {
    w.open("", '{', Layout::kInline);
    object("params", p.params);
    w.integer("closed_form_read_bytes", p.closed_form.read);
    w.integer("closed_form_write_bytes", p.closed_form.write);
    w.integer("closed_form_bytes", p.closed_form.total());
    w.integer("l2_read_bytes", p.sim.l2.read);
    w.integer("l2_write_bytes", p.sim.l2.write);
    w.integer("sim_l2_bytes", p.sim.l2.total());
    w.integer("dram_read_bytes", p.sim.dram.read);
    w.integer("dram_write_bytes", p.sim.dram.write);
    w.integer("dram_dirty_bytes_at_end", p.sim.dram_dirty_at_end);
    w.integer("sim_dram_bytes", p.sim_dram_bytes());
    w.number("time_s", p.sim.time_s);
    if (r.ideal) w.boolean("sim_equals_closed_form", p.sim_dram_bytes() == p.closed_form.total());
    if (p.measured) {
      object("measured", *p.measured);
    } else {
      w.null("measured");
    }
    measured_bytes("measured_l2_bytes", p.measured_l2_bytes());
    measured_bytes("measured_dram_bytes", p.measured_dram_bytes());
    w.close();
  }
  w.close();
  w.open("fits", '[');
  for (const IoFit& f : r.fits) {
    w.open("", '{', Layout::kInline);
    w.string("over", f.over);
    w.string("metric", f.metric);
    w.number("exponent", f.fit.exponent);
    w.number("expected", f.expected);
    w.number("coefficient", f.fit.coefficient);
    w.number("r_squared", f.fit.r_squared);
    w.integer("points", f.fit.points);
    object("group", f.group);
    for (const auto& [name, values] : {std::pair{"x", &f.x}, std::pair{"y", &f.y}}) {
      w.open(name, '[');
      for (const double v : *values) w.number("", v);
      w.close();
    }
    w.close();
  }
  w.close();
  w.close();
  return w.take();
}

std::string io_to_text(const IoReport& r) {
  std::string out;
  char buf[1024];
  out += "memwall io: " + r.workload + " on " + r.config +
         (r.ideal ? " (ideal two-level mode: --set " : "");
  if (r.ideal) {
    for (std::size_t i = 0; i < r.ideal_overrides.size(); ++i) {
      out += (i ? " --set " : "") + r.ideal_overrides[i];
    }
    out += ")";
  }
  out += "\n\n";
  std::vector<std::string> labels;
  int width = 5;
  for (const IoPoint& p : r.points) {
    std::string label;
    for (const auto& [k, v] : p.params) {
      if (k == "workload") continue;
      label += (label.empty() ? "" : " ") + k + "=" + v;
    }
    width = std::max(width, static_cast<int>(label.size()));
    labels.push_back(std::move(label));
  }
  // The measured L2 column is the L2-side lts count (after the request coalescer), not the
  // SM-side bytes of the simulated column beside it: its label says so.
  std::snprintf(buf, sizeof buf, "%-*s %14s %14s %14s %15s %14s%s\n", width, "point",
                "closed form B", "SM->L2 B", "HBM B", "meas. L2-side B", "meas. HBM B",
                r.ideal ? "  HBM = closed form" : "");
  out += buf;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const IoPoint& p = r.points[i];
    const auto ml = p.measured_l2_bytes();
    const auto md = p.measured_dram_bytes();
    std::snprintf(buf, sizeof buf, "%-*s %14llu %14llu %14llu %15s %14s%s\n", width,
                  labels[i].c_str(), static_cast<unsigned long long>(p.closed_form.total()),
                  static_cast<unsigned long long>(p.sim.l2.total()),
                  static_cast<unsigned long long>(p.sim_dram_bytes()),
                  ml ? bytes_text(*ml).c_str() : "-", md ? bytes_text(*md).c_str() : "-",
                  r.ideal ? (p.sim_dram_bytes() == p.closed_form.total() ? "  yes" : "  NO") : "");
    out += buf;
  }
  if (!r.fits.empty()) {
    out += "\n";
    std::snprintf(buf, sizeof buf, "%-5s %-20s %9s %9s %7s %4s  %s\n", "over", "metric", "exponent",
                  "expected", "R^2", "pts", "fixed");
    out += buf;
    for (const IoFit& f : r.fits) {
      std::string group;
      for (const auto& [k, v] : f.group) {
        if (k != "workload") group += (group.empty() ? "" : " ") + k + "=" + v;
      }
      std::snprintf(buf, sizeof buf, "%-5s %-20s %9.3f %9.3f %7.4f %4zu  %s\n", f.over.c_str(),
                    f.metric.c_str(), f.fit.exponent, f.expected, f.fit.r_squared, f.fit.points,
                    group.c_str());
      out += buf;
    }
  }
  return out;
}

}  // namespace memwall
