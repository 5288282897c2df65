#include "explain/roofline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/units.h"

namespace memwall::explain {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void report_error(const std::string& what, const JsonValue& at, const std::string& key,
                               const std::string& reason) {
  throw UsageError(what + ": byte " + std::to_string(at.offset) + ": " + key + ": " + reason);
}

const JsonValue& member(const std::string& what, const JsonValue& object, const std::string& path,
                        const char* key) {
  const JsonValue* v = object.get(key);
  if (!v) report_error(what, object, path + key, "missing");
  return *v;
}

std::uint64_t count_member(const std::string& what, const JsonValue& object,
                           const std::string& path, const char* key) {
  const JsonValue& v = member(what, object, path, key);
  if (v.type != JsonValue::Type::number || v.number < 0) {
    report_error(what, v, path + key, "expected a non-negative number");
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
  if (ec == std::errc() && end == v.text.data() + v.text.size()) return n;
  if (v.number >= 1.8e19 || v.number != std::floor(v.number)) {
    report_error(what, v, path + key, "expected a whole number of at most 64 bits");
  }
  return static_cast<std::uint64_t>(v.number);
}

double seconds_member(const std::string& what, const JsonValue& object, const std::string& path,
                      const char* key) {
  const JsonValue& v = member(what, object, path, key);
  if (v.type != JsonValue::Type::number || v.number < 0) {
    report_error(what, v, path + key, "expected a non-negative number of seconds");
  }
  return v.number;
}

/// The time each resource alone needs at its peak, and the largest of them (ties: the first of
/// HBM, tensor, fp32, SFU).
void set_bounds(KernelPoint& p, const RooflineChip& chip) {
  p.hbm_s = static_cast<double>(p.dram_bytes) / chip.hbm_bandwidth;
  p.tensor_s = static_cast<double>(p.tensor_flops) / chip.peak_tensor_flops;
  p.fp32_s = static_cast<double>(p.fp32_flops) / chip.peak_fp32_flops;
  p.sfu_s = static_cast<double>(p.sfu_ops) / chip.peak_sfu_ops;
  const std::pair<double, const char*> bounds[] = {
      {p.hbm_s, "HBM"}, {p.tensor_s, "tensor"}, {p.fp32_s, "fp32"}, {p.sfu_s, "SFU"}};
  p.bound_s = -1;
  for (const auto& [t, name] : bounds) {
    if (t > p.bound_s) {
      p.bound_s = t;
      p.bound_by = name;
    }
  }
}

void read_run(const std::string& what, const JsonValue& run, const std::string& run_path,
              const std::string& fallback_name, const RooflineChip& chip,
              std::vector<KernelPoint>& out) {
  if (run.type != JsonValue::Type::object)
    report_error(what, run, run_path.empty() ? "(top level)" : run_path,
                 "expected an object (a run)");
  std::string run_name = fallback_name;
  if (const JsonValue* workload = run.get("workload")) {
    if (const JsonValue* name = workload->get("name");
        name && name->type == JsonValue::Type::string) {
      run_name = name->text;
    }
  }
  const JsonValue& kernels = member(what, run, run_path, "kernels");
  if (kernels.type != JsonValue::Type::array)
    report_error(what, kernels, run_path + "kernels", "expected an array");
  for (std::size_t i = 0; i < kernels.items.size(); ++i) {
    const JsonValue& k = kernels.items[i];
    const std::string path = run_path + "kernels[" + std::to_string(i) + "].";
    if (k.type != JsonValue::Type::object) report_error(what, k, path, "expected an object");
    const JsonValue& name = member(what, k, path, "name");
    if (name.type != JsonValue::Type::string)
      report_error(what, name, path + "name", "expected a string");
    KernelPoint p;
    p.name = run_name + "/" + name.text;
    p.flops = count_member(what, k, path, "flops");
    p.dram_bytes = count_member(what, k, path, "dram_read_bytes") +
                   count_member(what, k, path, "dram_write_bytes");
    p.time_s = seconds_member(what, k, path, "time_s");
    const double flops = static_cast<double>(p.flops);
    p.intensity = p.dram_bytes == 0 ? kInf : flops / static_cast<double>(p.dram_bytes);
    p.achieved_flops = p.time_s > 0 ? flops / p.time_s : 0.0;
    p.roof_flops = attainable_flops(chip.peak_tensor_flops, chip.hbm_bandwidth, p.intensity);
    p.fraction_of_roof = p.roof_flops > 0 ? p.achieved_flops / p.roof_flops : 0.0;
    p.plotted = p.flops > 0 && p.dram_bytes > 0 && p.time_s > 0;
    if (k.get("tensor_flops") && k.get("fp32_flops") && k.get("sfu_ops")) {
      p.has_pipes = true;
      p.tensor_flops = count_member(what, k, path, "tensor_flops");
      p.fp32_flops = count_member(what, k, path, "fp32_flops");
      p.sfu_ops = count_member(what, k, path, "sfu_ops");
      set_bounds(p, chip);
    }
    out.push_back(p);
  }
}

std::string fmt(const char* format, double v) {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

/// The log-log chart: rows from the top (highest FLOP/s) down.
std::string chart(const Roofline& r, int width, int height) {
  const RooflineChip& c = r.chip;
  // Axis ranges in decades, wide enough for both ridge points, the asked intensities and kernels.
  double x_min = std::min(c.ridge_fp32, c.ridge_tensor),
         x_max = std::max(c.ridge_fp32, c.ridge_tensor);
  double y_min = c.peak_fp32_flops, y_max = c.peak_tensor_flops;
  for (const RooflinePoint& p : r.points) {
    if (p.intensity > 0) {
      x_min = std::min(x_min, p.intensity);
      x_max = std::max(x_max, p.intensity);
    }
  }
  for (const KernelPoint& k : r.kernels) {
    if (!k.plotted) continue;
    x_min = std::min(x_min, k.intensity);
    x_max = std::max(x_max, k.intensity);
    y_min = std::min(y_min, k.achieved_flops);
    y_max = std::max(y_max, k.achieved_flops);
  }
  const double lx0 = std::floor(std::log10(x_min / 3.0));
  const double lx1 = std::max(std::ceil(std::log10(x_max * 3.0)), lx0 + 2.0);
  y_min =
      std::min(y_min, attainable_flops(c.peak_tensor_flops, c.hbm_bandwidth, std::pow(10.0, lx0)));
  const double ly0 = std::floor(std::log10(y_min));
  const double ly1 = std::max(std::log10(y_max * 1.5), ly0 + 1.0);

  auto col_of = [&](double x) {
    const int col = static_cast<int>(std::floor((std::log10(x) - lx0) / (lx1 - lx0) * width));
    return std::clamp(col, 0, width - 1);
  };
  auto row_of = [&](double y) {  // 0 = top row
    const int from_bottom =
        static_cast<int>(std::floor((std::log10(y) - ly0) / (ly1 - ly0) * height));
    return height - 1 - std::clamp(from_bottom, 0, height - 1);
  };
  std::vector<std::string> grid(static_cast<std::size_t>(height),
                                std::string(static_cast<std::size_t>(width), ' '));
  auto put = [&](int row, int col, char ch) {
    grid[static_cast<std::size_t>(row)][static_cast<std::size_t>(col)] = ch;
  };
  for (int col = 0; col < width; ++col) {
    const double x = std::pow(10.0, lx0 + (col + 0.5) / width * (lx1 - lx0));
    const double slope = x * c.hbm_bandwidth;
    if (slope < c.peak_fp32_flops) {
      put(row_of(slope), col, '/');
    } else {
      put(row_of(c.peak_fp32_flops), col, '-');
      put(row_of(std::min(slope, c.peak_tensor_flops)), col,
          slope < c.peak_tensor_flops ? '/' : '=');
    }
  }
  for (const RooflinePoint& p : r.points) {
    if (p.intensity > 0) put(row_of(p.attainable_tensor), col_of(p.intensity), 'o');
  }
  for (std::size_t i = 0; i < r.kernels.size() && i < 26; ++i) {
    const KernelPoint& k = r.kernels[i];
    if (!k.plotted) continue;
    const int row = row_of(k.achieved_flops), col = col_of(k.intensity);
    const char here = grid[static_cast<std::size_t>(row)][static_cast<std::size_t>(col)];
    // Two kernels in one cell (flash2 and flash3 at one shape): '+', the tables tell them apart.
    put(row, col, here >= 'A' && here <= 'Z' ? '+' : static_cast<char>('A' + i));
  }

  std::string out = "FLOP/s (log)\n";
  for (int row = 0; row < height; ++row) {
    // Label the row that holds a decade boundary.
    const double top = ly0 + (height - row) * (ly1 - ly0) / height;
    const double bottom = ly0 + (height - 1 - row) * (ly1 - ly0) / height;
    std::string label;
    for (double decade = std::ceil(bottom); decade < top; decade += 1.0) {
      label = "1e" + std::to_string(static_cast<int>(decade));
    }
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%6s |", label.c_str());
    out += prefix + grid[static_cast<std::size_t>(row)] + "\n";
  }
  out += "       +" + std::string(static_cast<std::size_t>(width), '-') + "\n";
  std::string axis(static_cast<std::size_t>(width) + 8, ' ');
  for (double decade = lx0; decade <= lx1; decade += 1.0) {
    const std::string text = "1e" + std::to_string(static_cast<int>(decade));
    const int col = 8 + static_cast<int>(std::lround((decade - lx0) / (lx1 - lx0) * width));
    const int at = std::min(col, static_cast<int>(axis.size() - text.size()));
    if (axis.substr(static_cast<std::size_t>(std::max(0, at - 1)), text.size() + 1)
            .find_first_not_of(' ') != std::string::npos)
      continue;
    axis.replace(static_cast<std::size_t>(at), text.size(), text);
  }
  while (!axis.empty() && axis.back() == ' ') axis.pop_back();
  out += axis + "\n";
  out += std::string(static_cast<std::size_t>(width) - 4, ' ') + "FLOP/byte (log)\n";
  out +=
      "  '/' I x HBM bandwidth   '=' tensor peak   '-' fp32 peak   'o' asked intensities   A.. kernels"
      "   '+' several\n";
  return out;
}

/// The kernels' time bounds: each resource alone at its peak, the largest binding.
std::string bounds_table(const Roofline& r) {
  bool any = false;
  for (const KernelPoint& k : r.kernels) any = any || k.has_pipes;
  if (!any) return "";
  std::string out =
      "\ntime bounds (each alone at its peak: DRAM bytes / HBM bandwidth, tensor FLOPs / tensor\n"
      "peak, fp32 FLOPs / fp32 peak, SFU ops / SFU peak; the largest binds, and a kernel reaches it\n"
      "only by overlapping the others under it):\n";
  char line[320];
  std::snprintf(line, sizeof line, "   %-30s %10s %10s %10s %10s %10s %7s %10s %9s\n", "kernel",
                "HBM", "tensor", "fp32", "SFU", "bound", "by", "time", "of bound");
  out += line;
  auto t = [](double s) {  // as the reports write times, 0 as "0"
    return s > 0 ? format_duration_seconds(s) : std::string("0");
  };
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    const KernelPoint& k = r.kernels[i];
    const char mark = i < 26 ? static_cast<char>('A' + i) : ' ';
    if (!k.has_pipes) {
      std::snprintf(line, sizeof line, "%c  %-30s   no bounds: the report has no flops by pipe\n",
                    mark, k.name.c_str());
    } else {
      std::snprintf(line, sizeof line, "%c  %-30s %10s %10s %10s %10s %10s %7s %10s %8.1f%%\n",
                    mark, k.name.c_str(), t(k.hbm_s).c_str(), t(k.tensor_s).c_str(),
                    t(k.fp32_s).c_str(), t(k.sfu_s).c_str(), t(k.bound_s).c_str(),
                    k.bound_by.c_str(), t(k.time_s).c_str(),
                    k.time_s > 0 ? 100.0 * k.bound_s / k.time_s : 0.0);
    }
    out += line;
  }
  return out;
}

}  // namespace

RooflineChip roofline_chip(const HardwareConfig& config) {
  const DerivedConfig derived = derive(config);
  RooflineChip chip;
  chip.name = config.name;
  chip.peak_tensor_flops = derived.peak_tensor_flops;
  chip.peak_fp32_flops = derived.peak_fp32_flops;
  chip.peak_sfu_ops = derived.peak_sfu_ops;
  chip.hbm_bandwidth = derived.hbm_bandwidth.bytes_per_second;
  chip.ridge_tensor = derived.ridge_point_tensor;
  chip.ridge_fp32 = derived.ridge_point_fp32;
  return chip;
}

double attainable_flops(double peak_flops, double bandwidth, double intensity) {
  return std::min(peak_flops, intensity * bandwidth);
}

std::vector<KernelPoint> read_report_kernels(const std::string& text, const std::string& what,
                                             const RooflineChip& chip) {
  const JsonValue doc = parse_json(text, what);
  std::vector<KernelPoint> out;
  if (doc.type == JsonValue::Type::array) {
    for (std::size_t i = 0; i < doc.items.size(); ++i) {
      read_run(what, doc.items[i], "[" + std::to_string(i) + "].", "run" + std::to_string(i), chip,
               out);
    }
  } else {
    read_run(what, doc, "", "run", chip, out);
  }
  return out;
}

Roofline make_roofline(const RooflineChip& chip, const std::vector<double>& intensities,
                       std::vector<KernelPoint> kernels) {
  if (!(chip.peak_tensor_flops > 0) || !(chip.peak_fp32_flops > 0) || !(chip.peak_sfu_ops > 0) ||
      !(chip.hbm_bandwidth > 0)) {
    throw UsageError("roofline: the chip's peaks and HBM bandwidth must be positive");
  }
  Roofline r;
  r.chip = chip;
  for (double i : intensities) {
    if (!(i >= 0) || !std::isfinite(i)) {
      throw UsageError("roofline: --intensity " + fmt("%g", i) + " must be a finite number >= 0");
    }
    r.points.push_back({i, attainable_flops(chip.peak_tensor_flops, chip.hbm_bandwidth, i),
                        attainable_flops(chip.peak_fp32_flops, chip.hbm_bandwidth, i)});
  }
  r.kernels = std::move(kernels);
  return r;
}

std::string format_roofline(const Roofline& r, int width, int height) {
  const RooflineChip& c = r.chip;
  std::string out;
  char line[320];
  out += "roofline of " + c.name + "\n";
  std::snprintf(line, sizeof line,
                "  peak tensor %s, peak fp32 %s, peak SFU %s, HBM %s\n"
                "  ridge points: tensor %.1f FLOP/byte, fp32 %.2f FLOP/byte (peak / bandwidth)\n",
                format_si(c.peak_tensor_flops, "FLOP/s").c_str(),
                format_si(c.peak_fp32_flops, "FLOP/s").c_str(),
                format_si(c.peak_sfu_ops, "op/s").c_str(),
                format_bandwidth(Bandwidth{c.hbm_bandwidth}).c_str(), c.ridge_tensor, c.ridge_fp32);
  out += line;
  if (!r.points.empty()) {
    std::snprintf(line, sizeof line, "\n%14s %22s %22s\n", "FLOP/byte", "attainable tensor",
                  "attainable fp32");
    out += line;
    for (const RooflinePoint& p : r.points) {
      std::snprintf(
          line, sizeof line, "%14g %22s %22s   %s\n", p.intensity,
          format_si(p.attainable_tensor, "FLOP/s").c_str(),
          format_si(p.attainable_fp32, "FLOP/s").c_str(),
          p.intensity < c.ridge_tensor ? "memory-bound (tensor)" : "compute-bound (tensor)");
      out += line;
    }
  }
  if (!r.kernels.empty()) {
    out += "\nkernels (achieved against the tensor roof min(peak, I x BW)):\n";
    std::snprintf(line, sizeof line, "   %-30s %12s %16s %16s %9s\n", "kernel", "FLOP/byte",
                  "achieved", "roof", "of roof");
    out += line;
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      const KernelPoint& k = r.kernels[i];
      const char mark = i < 26 ? static_cast<char>('A' + i) : ' ';
      if (!k.plotted) {
        std::snprintf(line, sizeof line, "%c  %-30s   not placed: %s\n", mark, k.name.c_str(),
                      k.flops == 0        ? "no FLOPs"
                      : k.dram_bytes == 0 ? "no DRAM bytes (infinite intensity)"
                                          : "zero time");
        out += line;
        continue;
      }
      std::snprintf(line, sizeof line, "%c  %-30s %12.2f %16s %16s %8.1f%%\n", mark, k.name.c_str(),
                    k.intensity, format_si(k.achieved_flops, "FLOP/s").c_str(),
                    format_si(k.roof_flops, "FLOP/s").c_str(), 100.0 * k.fraction_of_roof);
      out += line;
    }
    out += bounds_table(r);
  }
  out += "\n" + chart(r, width, height);
  return out;
}

std::string roofline_json(const Roofline& r) {
  using Layout = JsonWriter::Layout;
  const RooflineChip& c = r.chip;
  JsonWriter w;
  w.open("", '{');
  w.open("chip", '{', Layout::kInline);
  w.string("name", c.name);
  w.number("peak_tensor_flops", c.peak_tensor_flops);
  w.number("peak_fp32_flops", c.peak_fp32_flops);
  w.number("peak_sfu_ops", c.peak_sfu_ops);
  w.number("hbm_bandwidth", c.hbm_bandwidth);
  w.number("ridge_point_tensor", c.ridge_tensor);
  w.number("ridge_point_fp32", c.ridge_fp32);
  w.close();
  w.open("points", '[');
  for (const RooflinePoint& p : r.points) {
    w.open("", '{', Layout::kInline);
    w.number("intensity", p.intensity);
    w.number("attainable_tensor", p.attainable_tensor);
    w.number("attainable_fp32", p.attainable_fp32);
    w.close();
  }
  w.close();
  w.open("kernels", '[');
  for (const KernelPoint& k : r.kernels) {
    w.open("", '{', Layout::kInline);
    w.string("name", k.name);
    w.integer("flops", k.flops);
    w.integer("dram_bytes", k.dram_bytes);
    w.number("time_s", k.time_s);
    w.number("intensity", k.intensity);
    w.number("achieved_flops", k.achieved_flops);
    w.number("roof_flops", k.roof_flops);
    w.number("fraction_of_roof", k.fraction_of_roof);
    w.boolean("plotted", k.plotted);
    if (k.has_pipes) {
      w.integer("tensor_flops", k.tensor_flops);
      w.integer("fp32_flops", k.fp32_flops);
      w.integer("sfu_ops", k.sfu_ops);
      w.number("hbm_s", k.hbm_s);
      w.number("tensor_s", k.tensor_s);
      w.number("fp32_s", k.fp32_s);
      w.number("sfu_s", k.sfu_s);
      w.number("bound_s", k.bound_s);
      w.string("bound_by", k.bound_by);
    }
    w.close();
  }
  w.close();
  w.open("roof", '[');
  for (int step = 0; step <= 28; ++step) {
    const double x = std::pow(10.0, -2.0 + step / 4.0);
    w.open("", '{', Layout::kInline);
    w.number("intensity", x);
    w.number("tensor", attainable_flops(c.peak_tensor_flops, c.hbm_bandwidth, x));
    w.number("fp32", attainable_flops(c.peak_fp32_flops, c.hbm_bandwidth, x));
    w.close();
  }
  w.close();
  w.close();
  return w.take();
}

}  // namespace memwall::explain
