#include "sim/report/report_html.h"
#include "sim/core/json_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <variant>

#include "sim/core/version.h"
#include "sim/hw/config_schema.h"
#include "sim/report/report_json.h"

namespace memwall {
namespace {

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// Seconds shown as the text report shows a duration (the JSON's value, rounded to a tick).
std::string duration_text(double s) { return format_duration_seconds(s); }

std::string percent_text(double f) { return printf_text("%.1f%%", 100.0 * f); }

/// A table cell with a number of the JSON report: its key, exact value and the text shown.
std::string cell(const std::string& key, const std::string& json_value, const std::string& shown) {
  return "<td data-key=\"" + escape(key) + "\" data-value=\"" + json_value + "\">" + escape(shown) +
         "</td>";
}
std::string bytes_cell(const std::string& key, std::uint64_t b) {
  return cell(key, std::to_string(b), format_bytes(Bytes{b}) + " (" + std::to_string(b) + " B)");
}
std::string count_cell(const std::string& key, std::uint64_t n) {
  return cell(key, std::to_string(n), std::to_string(n));
}
std::string seconds_cell(const std::string& key, double s) {
  return cell(key, json_number_text(s), duration_text(s));
}
std::string fraction_cell(const std::string& key, double f) {
  return cell(key, json_number_text(f), percent_text(f));
}
std::string plain_cell(const std::string& text) { return "<td>" + escape(text) + "</td>"; }

/// The four stall causes: JSON key, label, colour.
struct Cause {
  const char* key;
  const char* label;
  const char* color;
};
constexpr Cause kCauses[] = {{"compute", "compute", "#1f77b4"},
                             {"memory_latency", "memory latency", "#ff7f0e"},
                             {"memory_bandwidth", "memory bandwidth (queueing)", "#2ca02c"},
                             {"idle", "idle (no CTA)", "#d62728"}};

double cause_of(const StallTime& f, std::string_view key) {
  if (key == "compute") return f.compute;
  if (key == "memory_latency") return f.memory_latency;
  if (key == "memory_bandwidth") return f.memory_bandwidth;
  return f.idle;
}

/// One column of a figures table: a run's totals or one kernel, and the key prefix of its JSON.
struct Figures {
  std::string name;
  std::string prefix;  ///< "", "1.", "kernels.0." ...
  const TrafficCounters* traffic;
  StallTime fractions;
  Tick span;
};

/// The rows every level has (write_figures in report_json.cc), one column per entry of `cols`;
/// `extra[j]` (cells) ends row j, under `extra_header`.
std::string figures_rows(const std::vector<Figures>& cols, const std::string& extra_header,
                         const std::vector<std::string>& extra = {}) {
  std::string out = "<table><tr><th></th>";
  for (const Figures& c : cols) out += "<th>" + escape(c.name) + "</th>";
  out += extra_header + "</tr>\n";
  std::size_t row_index = 0;
  const auto row = [&](const std::string& label, auto make) {
    out += "<tr><th>" + label + "</th>";
    for (const Figures& c : cols) out += make(c);
    if (row_index < extra.size()) out += extra[row_index];
    ++row_index;
    out += "</tr>\n";
  };
  // The registered figures that have a reading of their own, in report order.
  for (const FigureStat& f : figure_stats()) {
    if (f.label.empty()) continue;
    row(std::string(f.label), [&](const Figures& c) {
      const std::string key = c.prefix + std::string(f.name);
      const std::uint64_t n = f.whole() ? f.count(*c.traffic) : 0;
      const double v = f.value(*c.traffic, c.span);
      switch (f.unit) {
        case FigureStat::Unit::kSeconds: return seconds_cell(key, v);
        case FigureStat::Unit::kBytes: return bytes_cell(key, n);
        case FigureStat::Unit::kCount: return count_cell(key, n);
        case FigureStat::Unit::kFraction: return fraction_cell(key, v);
        case FigureStat::Unit::kFlops: return cell(key, std::to_string(n), format_si(v, "FLOP"));
        case FigureStat::Unit::kOps: return cell(key, std::to_string(n), format_si(v, "op"));
        case FigureStat::Unit::kBandwidth:
          return cell(key, json_number_text(v), format_si(v, "B/s"));
        case FigureStat::Unit::kWatts: return cell(key, json_number_text(v), format_si(v, "W"));
        case FigureStat::Unit::kHertz: return cell(key, json_number_text(v), format_si(v, "Hz"));
      }
      return std::string();
    });
  }
  for (const Cause& cause : kCauses) {
    row(std::string("SM time: ") + cause.label, [&](const Figures& c) {
      return fraction_cell(c.prefix + "stall." + cause.key, cause_of(c.fractions, cause.key));
    });
  }
  return out;
}

/// A horizontal stacked bar of the stall fractions, 100% wide.
std::string stall_bar(const std::string& name, const StallTime& f) {
  std::string out = "<div class=\"bar\"><span class=\"barname\">" + escape(name) +
                    "</span><svg width=\"420\" height=\"18\" role=\"img\">";
  double x = 0;
  for (const Cause& cause : kCauses) {
    const double w = 400.0 * cause_of(f, cause.key);
    out += "<rect x=\"" + printf_text("%.2f", x) + "\" y=\"0\" width=\"" + printf_text("%.2f", w) +
           "\" height=\"18\" fill=\"" + cause.color + "\"><title>" + cause.label + " " +
           percent_text(cause_of(f, cause.key)) + "</title></rect>";
    x += w;
  }
  return out + "</svg></div>\n";
}

std::string legend() {
  std::string out = "<p class=\"legend\">";
  for (const Cause& cause : kCauses) {
    out += "<span><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"" +
           std::string(cause.color) + "\"/></svg> " + cause.label + "</span> ";
  }
  return out + "</p>\n";
}

/// A kernel placed on the roofline.
struct RoofPoint {
  std::string label;  ///< "A", "B", ...
  std::string name;  ///< "RUN/KERNEL"
  double intensity;  ///< FLOP per DRAM byte
  double achieved;  ///< FLOP/s
};

/// The roofline as inline SVG (log-log), with `points` marked and a table naming them.
std::string roofline_svg(const DerivedConfig& d, const std::vector<RoofPoint>& points) {
  const double bw = d.hbm_bandwidth.bytes_per_second;
  double lo = d.ridge_point_fp32, hi = d.ridge_point_tensor;
  for (const RoofPoint& p : points) {
    lo = std::min(lo, p.intensity);
    hi = std::max(hi, p.intensity);
  }
  const double x0 = std::floor(std::log10(lo)) - 1, x1 = std::ceil(std::log10(hi)) + 1;
  const double y1 = std::ceil(std::log10(d.peak_tensor_flops)) + 0.3;
  const double y0 = std::floor(std::log10(std::pow(10.0, x0) * bw));
  constexpr double kLeft = 70, kTop = 10, kWidth = 560, kHeight = 300;
  const auto px = [&](double intensity) {
    return kLeft + kWidth * (std::log10(intensity) - x0) / (x1 - x0);
  };
  const auto py = [&](double flops) {
    return kTop + kHeight * (y1 - std::log10(flops)) / (y1 - y0);
  };
  const auto roof = [&](double peak, const char* style) {
    const double ridge = peak / bw;
    return "<polyline fill=\"none\" " + std::string(style) + " points=\"" +
           printf_text("%.2f", px(std::pow(10.0, x0))) + "," +
           printf_text("%.2f", py(std::pow(10.0, x0) * bw)) + " " + printf_text("%.2f", px(ridge)) +
           "," + printf_text("%.2f", py(peak)) + " " + printf_text("%.2f", px(std::pow(10.0, x1))) +
           "," + printf_text("%.2f", py(peak)) + "\"/>";
  };
  std::string out = "<svg width=\"660\" height=\"360\" role=\"img\" class=\"roofline\">";
  out += "<rect x=\"" + printf_text("%.0f", kLeft) + "\" y=\"" + printf_text("%.0f", kTop) +
         "\" width=\"" + printf_text("%.0f", kWidth) + "\" height=\"" +
         printf_text("%.0f", kHeight) + "\" fill=\"none\" stroke=\"#888\"/>";
  for (double e = x0; e <= x1; e += 1) {
    const double x = px(std::pow(10.0, e));
    out += "<line x1=\"" + printf_text("%.2f", x) + "\" y1=\"10\" x2=\"" + printf_text("%.2f", x) +
           "\" y2=\"310\" stroke=\"#ddd\"/><text x=\"" + printf_text("%.2f", x) +
           "\" y=\"326\" text-anchor=\"middle\">1e" + printf_text("%.0f", e) + "</text>";
  }
  for (double e = y0; e <= std::floor(y1); e += 1) {
    const double y = py(std::pow(10.0, e));
    out += "<line x1=\"70\" y1=\"" + printf_text("%.2f", y) + "\" x2=\"630\" y2=\"" +
           printf_text("%.2f", y) + "\" stroke=\"#ddd\"/><text x=\"64\" y=\"" +
           printf_text("%.2f", y + 4) + "\" text-anchor=\"end\">1e" + printf_text("%.0f", e) +
           "</text>";
  }
  out += roof(d.peak_fp32_flops, "stroke=\"#888\" stroke-dasharray=\"4 3\"");
  out += roof(d.peak_tensor_flops, "stroke=\"#000\" stroke-width=\"2\"");
  for (const RoofPoint& p : points) {
    const double x = px(p.intensity), y = py(p.achieved);
    out += "<circle cx=\"" + printf_text("%.2f", x) + "\" cy=\"" + printf_text("%.2f", y) +
           "\" r=\"5\" fill=\"#d62728\"><title>" + escape(p.name) + "</title></circle><text x=\"" +
           printf_text("%.2f", x + 7) + "\" y=\"" + printf_text("%.2f", y - 6) + "\">" + p.label +
           "</text>";
  }
  out +=
      "<text x=\"350\" y=\"350\" text-anchor=\"middle\">arithmetic intensity (FLOP per HBM "
      "byte)</text><text x=\"14\" y=\"160\" transform=\"rotate(-90 14 160)\" "
      "text-anchor=\"middle\">FLOP/s</text></svg>\n";
  return out;
}

/// The kernels of `runs` on the roofline: those with FLOPs, DRAM bytes and time; the names of
/// the others go to `unplaced`.
std::vector<RoofPoint> roof_points(const std::vector<RunResult>& runs,
                                   std::vector<std::string>& unplaced) {
  std::vector<RoofPoint> points;
  for (const RunResult& r : runs) {
    for (const KernelResult& k : r.kernels) {
      const std::uint64_t dram = k.traffic.dram_read_bytes + k.traffic.dram_write_bytes;
      const double time = seconds(k.duration());
      if (k.traffic.flops == 0 || dram == 0 || time <= 0) {
        unplaced.push_back(r.workload.name + "/" + k.name +
                           (k.traffic.flops == 0 ? " (no FLOPs)"
                            : dram == 0          ? " (no DRAM bytes)"
                                                 : " (no time)"));
        continue;
      }
      std::string label(1, static_cast<char>('A' + points.size() % 26));
      points.push_back({label, r.workload.name + "/" + k.name,
                        static_cast<double>(k.traffic.flops) / static_cast<double>(dram),
                        static_cast<double>(k.traffic.flops) / time});
    }
  }
  return points;
}

std::string workload_text(const WorkloadInfo& w) {
  std::string out;
  for (const auto& [key, value] : w.params) out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em;color:#111;max-width:75em}"
    "table{border-collapse:collapse;margin:0.5em 0 1.2em}"
    "th,td{border:1px solid #ccc;padding:2px 8px;font-size:13px}"
    "td{text-align:right;font-variant-numeric:tabular-nums}th{text-align:left;background:#f4f4f4}"
    "h2{margin-top:1.4em;border-bottom:1px solid #ccc}"
    ".bar{display:flex;align-items:center;gap:8px;font-size:13px}.barname{width:16em}"
    ".legend span{margin-right:1.2em;font-size:13px}svg text{font-size:11px}"
    ".provenance td{text-align:left}.bar{margin:3px 0}";

/// The JSON key prefix of run `i`: "" for a single run, "i." in an array of several.
std::string run_prefix(const std::vector<RunResult>& runs, std::size_t i) {
  return runs.size() > 1 ? std::to_string(i) + "." : std::string();
}

/// The key prefix of kernel `k` of run `i`.
std::string kernel_prefix(const std::vector<RunResult>& runs, std::size_t i, std::size_t k) {
  return run_prefix(runs, i) + "kernels." + std::to_string(k) + ".";
}

std::string provenance_section(const std::vector<RunResult>& runs, const HardwareConfig& config,
                               const HtmlProvenance& provenance) {
  std::string out = "<h2 id=\"provenance\">What was simulated</h2>\n<table class=\"provenance\">";
  out += "<tr><th>config</th><td>" + escape(config.name) + "</td></tr>";
  out +=
      "<tr><th>config file</th><td><code>" + escape(provenance.config_path) + "</code></td></tr>";
  out += "<tr><th>overrides</th><td>";
  if (provenance.overrides.empty()) out += "none";
  for (const std::string& o : provenance.overrides)
    out += "<code>--set " + escape(o) + "</code><br>";
  out += "</td></tr><tr><th>memwall version</th><td>" + escape(memwall_build_text()) + "</td></tr>";
  const bool flushed = !runs.empty() && runs[0].flush_l2_between_kernels;
  out += "<tr><th>L2 flushed between kernels</th><td>" + std::string(flushed ? "yes" : "no") +
         "</td></tr>";
  for (const RunResult& r : runs) {
    out += "<tr><th>" + escape(r.workload.name) + "</th><td><code>" +
           escape(workload_text(r.workload)) + "</code></td></tr>";
  }
  return out + "</table>\n";
}

/// Every resolved key of the config in base units, as the JSON's `config.values` has them (one
/// column per run, as the JSON repeats them per run).
std::string config_values_section(const std::vector<RunResult>& runs,
                                  const HardwareConfig& config) {
  std::string out =
      "<h2 id=\"config\">The config, resolved (base units)</h2>\n<table><tr><th>key</th>";
  for (const RunResult& r : runs) out += "<th>" + escape(r.workload.name) + "</th>";
  out += "</tr>";
  for (const KeyDecl& key : config_schema()) {
    if (key.fetch == nullptr) continue;
    const KeyValue v = key.fetch(config);
    out += "<tr><th>" + escape(std::string(key.path)) + "</th>";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string k = run_prefix(runs, i) + "config.values." + std::string(key.path);
      if (const auto* b = std::get_if<Bytes>(&v)) {
        out += bytes_cell(k, b->count);
      } else if (const auto* bw = std::get_if<Bandwidth>(&v)) {
        out += cell(k, json_number_text(bw->bytes_per_second),
                    json_number_text(bw->bytes_per_second) + " B/s");
      } else if (const auto* f = std::get_if<Frequency>(&v)) {
        out += cell(k, json_number_text(f->hertz), json_number_text(f->hertz) + " Hz");
      } else if (const auto* t = std::get_if<Tick>(&v)) {
        out += cell(k, json_number_text(seconds(*t)), json_number_text(seconds(*t)) + " s");
      } else if (const auto* n = std::get_if<std::uint64_t>(&v)) {
        out += count_cell(k, *n);
      } else if (const auto* d = std::get_if<double>(&v)) {
        out += cell(k, json_number_text(*d), json_number_text(*d));
      } else {
        out += plain_cell(std::get<std::string>(v));
      }
    }
    out += "</tr>";
  }
  return out + "</table>\n";
}

/// The runs' totals, one column each, with the first run's time and DRAM-bytes ratios to the
/// others (as the text report's comparison).
std::string side_by_side_section(const std::vector<RunResult>& runs) {
  std::vector<Figures> totals;
  std::string ratio_header;
  std::vector<std::string> ratios(2);
  const auto dram = [](const RunResult& r) {
    return static_cast<double>(r.traffic.dram_read_bytes + r.traffic.dram_write_bytes);
  };
  const auto ratio = [](double a, double b) {
    return b == 0 ? std::string("-") : printf_text("%.2fx", a / b);
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    totals.push_back({r.workload.name, run_prefix(runs, i), &r.traffic,
                      stall_fractions(r.stall, r.sm_count, r.time), r.time});
    if (i == 0) continue;
    ratio_header += "<th>" + escape(runs[0].workload.name + "/" + r.workload.name) + "</th>";
    ratios[0] += plain_cell(ratio(static_cast<double>(runs[0].time), static_cast<double>(r.time)));
    ratios[1] += plain_cell(ratio(dram(runs[0]), dram(r)) + " (read + write)");
  }
  return "<h2 id=\"side-by-side\">" + std::string(runs.size() > 1 ? "Side by side" : "Totals") +
         "</h2>\n" + figures_rows(totals, ratio_header, ratios) + "</table>\n";
}

/// Each kernel's stall bar, then one table of kernels per run.
std::string kernels_section(const std::vector<RunResult>& runs) {
  std::string out = "<h2 id=\"kernels\">Kernels and where their SM time goes</h2>\n" + legend();
  for (const RunResult& r : runs) {
    for (const KernelResult& k : r.kernels) {
      out += stall_bar(r.workload.name + "/" + k.name,
                       stall_fractions(k.stall, r.sm_count, k.duration()));
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    std::vector<Figures> cols;
    std::string grid = "<tr><th>grid (CTAs)</th>", occupancy = "<tr><th>CTAs per SM (limit)</th>";
    for (std::size_t k = 0; k < r.kernels.size(); ++k) {
      const KernelResult& kr = r.kernels[k];
      const std::string key = kernel_prefix(runs, i, k);
      cols.push_back({kr.name, key, &kr.traffic,
                      stall_fractions(kr.stall, r.sm_count, kr.duration()), kr.duration()});
      grid += count_cell(key + "grid_ctas", kr.info.ctas);
      occupancy += cell(key + "ctas_per_sm", std::to_string(kr.ctas_per_sm),
                        std::to_string(kr.ctas_per_sm) + " (" + kr.occupancy_limit + ")");
    }
    out += "<h3>" + escape(r.workload.name) + "</h3>\n" + figures_rows(cols, "") + grid + "</tr>" +
           occupancy + "</tr></table>\n";
  }
  return out;
}

/// Per kernel, one row per resource class (write_resources in report_json.cc).
std::string queueing_section(const std::vector<RunResult>& runs) {
  std::string out = "<h2 id=\"queueing\">Queueing per resource class</h2>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    for (std::size_t k = 0; k < r.kernels.size(); ++k) {
      const KernelResult& kr = r.kernels[k];
      out +=
          "<h3>" + escape(r.workload.name + "/" + kr.name) + "</h3>\n<table><tr><th>resource</th>";
      for (const ResourceStat& stat : resource_stats()) {
        if (!stat.label.empty()) out += "<th>" + std::string(stat.label) + "</th>";
      }
      out += "</tr>\n";
      for (std::size_t c = 0; c < kResourceClassCount; ++c) {
        const auto rc = static_cast<ResourceClass>(c);
        const ResourceUse& u = kr.resources[c];
        const std::string key =
            kernel_prefix(runs, i, k) + "resources." + resource_class_name(rc) + ".";
        out += "<tr><th>" + std::string(resource_class_name(rc)) + "</th>";
        for (const ResourceStat& stat : resource_stats()) {
          if (stat.label.empty()) continue;
          const std::string name = key + std::string(stat.name);
          switch (stat.kind) {
            case ResourceStat::Kind::kCount: out += count_cell(name, stat.count(u)); break;
            case ResourceStat::Kind::kSeconds:
              out += seconds_cell(name, stat.value(u, kr.duration()));
              break;
            case ResourceStat::Kind::kFraction:
              out += fraction_cell(name, stat.value(u, kr.duration()));
              break;
            case ResourceStat::Kind::kInstance:
              out += plain_cell(resource_instance_name(rc, u.busiest));
              break;
          }
        }
        out += "</tr>\n";
      }
      out += "</table>\n";
    }
  }
  return out;
}

/// Per run, the DRAM bytes by tensor and by reason.
std::string dram_section(const std::vector<RunResult>& runs) {
  std::string out = "<h2 id=\"dram\">DRAM bytes by tensor and by reason</h2>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const std::string p = run_prefix(runs, i);
    out += "<h3>" + escape(r.workload.name) + "</h3>\n<table><tr><th>tensor</th>";
    for (const TensorStat& stat : tensor_stats()) {
      if (!stat.label.empty()) out += "<th>" + std::string(stat.label) + "</th>";
    }
    out += "</tr>\n";
    for (const TensorDramBytes& t : r.dram_bytes_by_tensor) {
      const std::string key = p + "dram_bytes_by_tensor." + t.name + ".";
      out += "<tr><th>" + escape(t.name) + "</th>";
      for (const TensorStat& stat : tensor_stats()) {
        if (!stat.label.empty()) out += bytes_cell(key + std::string(stat.name), stat.bytes(t));
      }
      out += "</tr>\n";
    }
    const auto row = [&](const char* label, const std::string& key, std::uint64_t bytes) {
      return "<tr><th>" + std::string(label) + "</th>" + bytes_cell(p + key, bytes) + "</tr>\n";
    };
    out += "</table>\n<table><tr><th>reason</th><th>bytes</th></tr>\n" +
           row("compulsory (first read of a sector)", "dram_bytes_by_reason.compulsory",
               r.dram_bytes_by_reason.compulsory) +
           row("re-read (after an eviction or flush)", "dram_bytes_by_reason.reread",
               r.dram_bytes_by_reason.reread) +
           row("write-back (dirty sectors evicted)", "dram_bytes_by_reason.writeback",
               r.dram_bytes_by_reason.writeback) +
           row("dirty in L2 at the end (never written back)", "dram_dirty_bytes_at_end",
               r.dram_dirty_bytes_at_end) +
           row("written back by between-kernel flushes", "dram_flush_writeback_bytes",
               r.dram_flush_writeback_bytes) +
           "</table>\n";
  }
  return out;
}

/// The chip's roofs, the kernels on them, and the table naming them.
std::string roofline_section(const std::vector<RunResult>& runs, const HardwareConfig& config) {
  const DerivedConfig d = derive(config);
  std::vector<std::string> unplaced;
  const std::vector<RoofPoint> points = roof_points(runs, unplaced);
  std::string out =
      "<h2 id=\"roofline\">Roofline</h2>\n<p>Tensor roof (solid): " +
      escape(format_si(d.peak_tensor_flops, "FLOP/s")) + ", ridge at " +
      escape(printf_text("%.4g", d.ridge_point_tensor)) +
      " FLOP/B; fp32 roof (dashed): " + escape(format_si(d.peak_fp32_flops, "FLOP/s")) +
      ", ridge at " + escape(printf_text("%.4g", d.ridge_point_fp32)) + " FLOP/B; HBM " +
      escape(format_bandwidth(d.hbm_bandwidth)) + ".</p>\n" + roofline_svg(d, points);
  out +=
      "<table><tr><th></th><th>kernel</th><th>intensity (FLOP/B)</th><th>achieved</th>"
      "<th>share of the tensor roof</th></tr>\n";
  for (const RoofPoint& p : points) {
    const double roof =
        std::min(d.peak_tensor_flops, p.intensity * d.hbm_bandwidth.bytes_per_second);
    out += "<tr><th>" + p.label + "</th>" + plain_cell(p.name) +
           plain_cell(printf_text("%.4g", p.intensity)) +
           plain_cell(format_si(p.achieved, "FLOP/s")) +
           plain_cell(percent_text(p.achieved / roof)) + "</tr>\n";
  }
  out += "</table>\n";
  if (!unplaced.empty()) {
    out += "<p>Not on the roofline: ";
    for (std::size_t i = 0; i < unplaced.size(); ++i)
      out += (i == 0 ? "" : ", ") + escape(unplaced[i]);
    out += ".</p>\n";
  }
  return out;
}

}  // namespace

std::string runs_to_html(const std::vector<RunResult>& runs, const HardwareConfig& config,
                         const HtmlProvenance& provenance) {
  std::string names;
  for (const RunResult& r : runs) names += (names.empty() ? "" : " vs ") + r.workload.name;
  const std::string title = escape("memwall run: " + names + " on " + config.name);
  // No script and nothing fetched: an empty data: favicon keeps the browser from asking for one.
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width\"><title>" +
         title + "</title><link rel=\"icon\" href=\"data:,\"><style>" + kStyle +
         "</style></head>\n<body>\n<h1>" + title + "</h1>\n" +
         provenance_section(runs, config, provenance) + side_by_side_section(runs) +
         kernels_section(runs) + queueing_section(runs) + dram_section(runs) +
         roofline_section(runs, config) + config_values_section(runs, config) + "</body></html>\n";
}

}  // namespace memwall
