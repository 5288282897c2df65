#include "sim/core/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/core/error.h"

namespace memwall {
namespace {

/// A number and the unit text that follows it, whitespace between them optional.
struct Quantity {
  double value = 0.0;
  std::string_view unit;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Quantity split_quantity(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  Quantity q;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), q.value);
  if (ec != std::errc() || end == s.data()) {
    throw UnitError("expected a " + std::string(what) + " such as " +
                    (what == "size"        ? "\"228 KiB\""
                     : what == "bandwidth" ? "\"3.35 TB/s\""
                     : what == "frequency" ? "\"1.98 GHz\""
                                           : "\"200 ns\"") +
                    ", got \"" + std::string(text) + "\"");
  }
  if (!std::isfinite(q.value))
    throw UnitError("value is not finite: \"" + std::string(text) + "\"");
  q.unit = trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
  if (q.unit.empty()) {
    throw UnitError("missing unit in \"" + std::string(text) + "\" (a " + std::string(what) +
                    " needs one)");
  }
  return q;
}

struct Prefix {
  std::string_view name;
  double scale;
};

constexpr std::array<Prefix, 10> kByteUnits{{{"B", 1.0},
                                             {"KiB", 1024.0},
                                             {"MiB", 1024.0 * 1024},
                                             {"GiB", 1024.0 * 1024 * 1024},
                                             {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                             {"kB", 1e3},
                                             {"KB", 1e3},
                                             {"MB", 1e6},
                                             {"GB", 1e9},
                                             {"TB", 1e12}}};

const Prefix* find_unit(std::string_view unit, const auto& table) {
  for (const Prefix& p : table) {
    if (p.name == unit) return &p;
  }
  return nullptr;
}

std::string known_units(const auto& table) {
  std::string out;
  for (const Prefix& p : table) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

double clock_hz(const Frequency* clock, std::string_view text) {
  if (clock == nullptr || !(clock->hertz > 0.0)) {
    throw UnitError("\"" + std::string(text) + "\" is per cycle, but no clock is known here");
  }
  return clock->hertz;
}

std::string format_scaled(double value, std::string_view unit, const auto& table) {
  const Prefix* best = &table[0];
  for (const Prefix& p : table) {
    if (std::abs(value) >= p.scale) best = &p;
  }
  const double scaled = value / best->scale;
  char buf[64];
  if (scaled == std::floor(scaled)) {
    std::snprintf(buf, sizeof buf, "%.0f %s%s", scaled, std::string(best->name).c_str(),
                  std::string(unit).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%.4g %s%s", scaled, std::string(best->name).c_str(),
                  std::string(unit).c_str());
  }
  return buf;
}

constexpr std::array<Prefix, 5> kBinaryPrefixes{{{"", 1.0},
                                                 {"Ki", 1024.0},
                                                 {"Mi", 1024.0 * 1024},
                                                 {"Gi", 1024.0 * 1024 * 1024},
                                                 {"Ti", 1024.0 * 1024 * 1024 * 1024}}};
constexpr std::array<Prefix, 6> kDecimalPrefixes{
    {{"", 1.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}}};

}  // namespace

void throw_tick_overflow(const char* what, Tick start, Tick duration) {
  throw UsageError(std::string("the simulated time would pass ") + format_duration(kMaxTick) +
                   " (2^62 ps, the simulator's bound): " + what + " of " +
                   format_duration(duration) + " booked at " + format_duration(start) +
                   "; the config's rates are too slow or the trace's op too large to simulate");
}

Tick Bandwidth::transfer_ticks(Bytes bytes) const {
  const double ticks = std::ceil(static_cast<double>(bytes.count) * 1e12 / bytes_per_second);
  return static_cast<Tick>(ticks);
}

Tick Frequency::cycles_to_ticks(double cycles) const {
  return static_cast<Tick>(std::llround(cycles * period_ps()));
}

double Frequency::ticks_to_cycles(Tick ticks) const {
  return static_cast<double>(ticks) / period_ps();
}

Bytes parse_bytes(std::string_view text) {
  const Quantity q = split_quantity(text, "size");
  const Prefix* unit = find_unit(q.unit, kByteUnits);
  if (unit == nullptr) {
    throw UnitError("unknown size unit \"" + std::string(q.unit) + "\" in \"" + std::string(text) +
                    "\" (use one of " + known_units(kByteUnits) + ")");
  }
  if (q.value < 0) throw UnitError("a size cannot be negative: \"" + std::string(text) + "\"");
  const double bytes = q.value * unit->scale;
  if (bytes >= 18446744073709551615.0) {
    throw UnitError("size does not fit in 64 bits: \"" + std::string(text) + "\"");
  }
  if (bytes != std::floor(bytes)) {
    throw UnitError("not a whole number of bytes: \"" + std::string(text) + "\"");
  }
  return Bytes{static_cast<std::uint64_t>(bytes)};
}

Bandwidth parse_bandwidth(std::string_view text, const Frequency* clock) {
  const Quantity q = split_quantity(text, "bandwidth");
  double bytes_per_second = 0.0;
  if (q.unit.ends_with("/cycle") || q.unit.ends_with("/clk")) {
    const std::string_view size_unit = q.unit.substr(0, q.unit.find('/'));
    const Prefix* unit = find_unit(size_unit, kByteUnits);
    if (unit == nullptr) {
      throw UnitError("unknown bandwidth unit \"" + std::string(q.unit) + "\" in \"" +
                      std::string(text) + "\"");
    }
    bytes_per_second = q.value * unit->scale * clock_hz(clock, text);
  } else if (q.unit.ends_with("/s")) {
    const Prefix* unit = find_unit(q.unit.substr(0, q.unit.size() - 2), kByteUnits);
    if (unit == nullptr) {
      throw UnitError("unknown bandwidth unit \"" + std::string(q.unit) + "\" in \"" +
                      std::string(text) + "\" (use e.g. GB/s, TB/s, GiB/s or B/cycle)");
    }
    bytes_per_second = q.value * unit->scale;
  } else {
    throw UnitError("unknown bandwidth unit \"" + std::string(q.unit) + "\" in \"" +
                    std::string(text) + "\" (use e.g. GB/s, TB/s, GiB/s or B/cycle)");
  }
  if (!(bytes_per_second > 0.0)) {
    throw UnitError("a bandwidth must be positive: \"" + std::string(text) + "\"");
  }
  return Bandwidth{bytes_per_second};
}

Frequency parse_frequency(std::string_view text) {
  static constexpr std::array<Prefix, 4> kUnits{
      {{"Hz", 1.0}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}};
  const Quantity q = split_quantity(text, "frequency");
  const Prefix* unit = find_unit(q.unit, kUnits);
  if (unit == nullptr) {
    throw UnitError("unknown frequency unit \"" + std::string(q.unit) + "\" in \"" +
                    std::string(text) + "\" (use one of " + known_units(kUnits) + ")");
  }
  if (!(q.value > 0.0))
    throw UnitError("a frequency must be positive: \"" + std::string(text) + "\"");
  return Frequency{q.value * unit->scale};
}

Tick parse_duration(std::string_view text, const Frequency* clock) {
  static constexpr std::array<Prefix, 5> kUnits{
      {{"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}};
  const Quantity q = split_quantity(text, "duration");
  if (q.value < 0) throw UnitError("a duration cannot be negative: \"" + std::string(text) + "\"");
  double ps = 0.0;
  if (q.unit == "cycles" || q.unit == "cycle") {
    ps = q.value * 1e12 / clock_hz(clock, text);
  } else if (const Prefix* unit = find_unit(q.unit, kUnits)) {
    ps = q.value * unit->scale;
  } else {
    throw UnitError("unknown duration unit \"" + std::string(q.unit) + "\" in \"" +
                    std::string(text) + "\" (use ps, ns, us, ms, s or cycles)");
  }
  if (ps > static_cast<double>(std::numeric_limits<Tick>::max() / 4)) {
    throw UnitError("duration too long: \"" + std::string(text) + "\"");
  }
  return static_cast<Tick>(std::llround(ps));
}

std::string format_bytes(Bytes b) {
  return format_scaled(static_cast<double>(b.count), "B", kBinaryPrefixes);
}

std::string format_bandwidth(Bandwidth bw) {
  return format_scaled(bw.bytes_per_second, "B/s", kDecimalPrefixes);
}

std::string format_frequency(Frequency f) { return format_scaled(f.hertz, "Hz", kDecimalPrefixes); }

std::string format_si(double value, std::string_view unit) {
  return format_scaled(value, unit, kDecimalPrefixes);
}

std::string format_duration(Tick t) {
  static constexpr std::array<Prefix, 5> kUnits{
      {{"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}};
  const Prefix* best = &kUnits[0];
  for (const Prefix& p : kUnits) {
    if (static_cast<double>(t) >= p.scale) best = &p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", static_cast<double>(t) / best->scale,
                std::string(best->name).c_str());
  return buf;
}

std::string format_duration_seconds(double seconds) {
  return format_duration(
      static_cast<Tick>(std::llround(seconds * static_cast<double>(kTicksPerSecond))));
}

std::string format_shortest(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

}  // namespace memwall
