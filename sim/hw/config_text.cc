#include "sim/hw/config_text.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config_schema.h"
#include "sim/hw/topology.h"

namespace memwall {
namespace {

/// printf-style formatting of one number (fixed formats: output is byte-identical across runs).
std::string fixed(const char* format, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// `text` as a YAML double-quoted scalar (backslash, quote and control characters escaped).
std::string yaml_quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// A value as YAML text that parses back to the same value: base units, doubles exact.
std::string exact_yaml(const KeyDecl& key, const KeyValue& value) {
  switch (key.type) {
    case KeyType::kSize: return std::to_string(std::get<Bytes>(value).count) + " B";
    case KeyType::kBandwidth:
      return format_shortest(std::get<Bandwidth>(value).bytes_per_second) + " B/s";
    case KeyType::kFrequency: return format_shortest(std::get<Frequency>(value).hertz) + " Hz";
    case KeyType::kDuration: return std::to_string(std::get<Tick>(value)) + " ps";
    case KeyType::kInteger: return std::to_string(std::get<std::uint64_t>(value));
    case KeyType::kReal: return format_shortest(std::get<double>(value));
    case KeyType::kString: return yaml_quote(std::get<std::string>(value));
  }
  return "";
}

}  // namespace

std::string config_show_text(const HardwareConfig& c) {
  std::string out = c.name + "\n";
  if (!c.description.empty()) out += c.description + "\n";
  out += "source: " + c.source_file + "\n";
  std::string section = "-";
  for (const KeyDecl& key : config_schema()) {
    if (key.fetch == nullptr) continue;
    const std::string path(key.path);
    const auto dot = path.find('.');
    if (dot == std::string::npos) continue;  // name and description are printed above
    const std::string s = path.substr(0, dot);
    if (s != section) {
      section = s;
      out += "\n" + s + ":\n";
    }
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %s\n", path.substr(dot + 1).c_str(),
                  format_key_value(key, key.fetch(c), c.sm.clock).c_str());
    out += line;
  }
  const DerivedConfig d = derive(c);
  const Topology topology(c);
  auto row = [&](const std::string& label, const std::string& value) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %s\n", label.c_str(), value.c_str());
    out += line;
  };
  out += "\nderived:\n";
  row("total_smem", format_bytes(d.total_smem) + " (" + std::to_string(d.total_smem.count) + " B)");
  row("l2_sets_per_slice", std::to_string(d.l2_sets_per_slice));
  row("l2_sets", std::to_string(d.l2_sets));
  if (c.efficiency.l2_capacity < 1.0) {
    row("l2_usable", format_bytes(d.l2_usable) + " (" + std::to_string(d.l2_usable_sets_per_slice) +
                         " sets per slice: efficiency.l2_capacity " +
                         fixed("%.4g", c.efficiency.l2_capacity) + ")");
  }
  row("peak_tensor",
      format_si(d.peak_tensor_flops, "FLOP/s") + fixed(" (%.6g FLOP/s)", d.peak_tensor_flops));
  row("peak_fp32",
      format_si(d.peak_fp32_flops, "FLOP/s") + fixed(" (%.6g FLOP/s)", d.peak_fp32_flops));
  row("peak_sfu", format_si(d.peak_sfu_ops, "op/s") + fixed(" (%.6g op/s)", d.peak_sfu_ops));
  row("hbm_bandwidth",
      format_bandwidth(d.hbm_bandwidth) + fixed(" (%.6g B/s)", d.hbm_bandwidth.bytes_per_second));
  row("l2_bandwidth",
      format_bandwidth(d.l2_bandwidth) + fixed(" (%.6g B/s)", d.l2_bandwidth.bytes_per_second));
  row("xbar_bandwidth",
      format_bandwidth(d.xbar_bandwidth) + fixed(" (%.6g B/s)", d.xbar_bandwidth.bytes_per_second));
  row("smem_bandwidth",
      format_bandwidth(d.smem_bandwidth) + fixed(" (%.6g B/s)", d.smem_bandwidth.bytes_per_second));
  row("ridge_point_tensor", fixed("%.4g FLOP/B", d.ridge_point_tensor));
  row("ridge_point_fp32", fixed("%.4g FLOP/B", d.ridge_point_fp32));
  row("l2_hit_unloaded", format_duration(c.l2.hit_latency) + " near, " +
                             format_duration(c.l2.hit_latency + c.l2.far_latency) +
                             " far partition (from the SM; xbar.latency included)");
  row("dram_load_unloaded",
      format_duration(c.l2.hit_latency + c.hbm.latency) + " near, " +
          format_duration(c.l2.hit_latency + c.hbm.latency + c.l2.far_latency +
                          c.l2.far_miss_latency) +
          " far partition (l2.hit_latency + hbm.latency; far: + l2.far_latency + "
          "l2.far_miss_latency)");
  row("topology", std::to_string(topology.sm_count()) + " SMs, " +
                      std::to_string(topology.crossbar_count()) +
                      (topology.crossbar_count() == 1 ? " crossbar, " : " crossbars, ") +
                      std::to_string(topology.slice_count()) + " L2 slices in " +
                      std::to_string(topology.partition_count()) +
                      (topology.partition_count() == 1 ? " partition, " : " partitions, ") +
                      std::to_string(topology.channel_count()) + " HBM channels");
  return out;
}

std::string config_to_yaml(const HardwareConfig& c) {
  std::string out =
      "# " + c.name + ", resolved from " +
      (c.source_file.empty() ? std::string("a config built in code") : c.source_file) +
      " by memwall " + MEMWALL_VERSION + "\n";
  std::string section;
  for (const KeyDecl& key : config_schema()) {
    if (key.fetch == nullptr) continue;  // extends: the values below are already merged
    const std::string path(key.path);
    const auto dot = path.find('.');
    const KeyValue value = key.fetch(c);
    const std::string exact = exact_yaml(key, value);
    if (dot == std::string::npos) {
      out += path + ": " + exact + "\n";
      continue;
    }
    if (path.substr(0, dot) != section) {
      section = path.substr(0, dot);
      out += section + ":\n";
    }
    std::string line = "  " + path.substr(dot + 1) + ": " + exact;
    if (key.type != KeyType::kInteger && key.type != KeyType::kString) {
      line.resize(std::max<std::size_t>(line.size() + 1, 44), ' ');
      line += "# " + format_key_value(key, value, c.sm.clock);
    }
    out += line + "\n";
  }
  return out;
}

std::vector<DerivedValue> derived_values(const HardwareConfig& c) {
  const DerivedConfig d = derive(c);
  const auto count = [](std::uint64_t v) { return static_cast<double>(v); };
  return {
      {"total_smem", count(d.total_smem.count), "B"},
      {"l2_sets_per_slice", count(d.l2_sets_per_slice), ""},
      {"l2_sets", count(d.l2_sets), ""},
      {"l2_usable_sets_per_slice", count(d.l2_usable_sets_per_slice), ""},
      {"l2_usable", count(d.l2_usable.count), "B"},
      {"peak_tensor", d.peak_tensor_flops, "FLOP/s"},
      {"peak_fp32", d.peak_fp32_flops, "FLOP/s"},
      {"peak_sfu", d.peak_sfu_ops, "op/s"},
      {"hbm_bandwidth", d.hbm_bandwidth.bytes_per_second, "B/s"},
      {"l2_bandwidth", d.l2_bandwidth.bytes_per_second, "B/s"},
      {"xbar_bandwidth", d.xbar_bandwidth.bytes_per_second, "B/s"},
      {"smem_bandwidth", d.smem_bandwidth.bytes_per_second, "B/s"},
      {"ridge_point_tensor", d.ridge_point_tensor, "FLOP/B"},
      {"ridge_point_fp32", d.ridge_point_fp32, "FLOP/B"},
  };
}

}  // namespace memwall
