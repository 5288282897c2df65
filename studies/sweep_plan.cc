#include "studies/sweep_plan.h"

#include <charconv>
#include <cstdio>
#include <limits>
#include <set>

#include "sim/core/error.h"

namespace memwall {
namespace {

constexpr std::uint64_t kMaxRangeValues = 100000;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Parses a whole non-negative integer, or returns false.
bool parse_u64(std::string_view s, std::uint64_t& out) {
  s = trim(s);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

UsageError range_error(std::string_view option, std::string_view item, const std::string& why) {
  return UsageError(std::string(option) + ": bad range \"" + std::string(item) + "\": " + why);
}

void expand_range(std::string_view option, std::string_view item, std::size_t dots,
                  std::vector<std::string>& out) {
  std::uint64_t first = 0;
  if (!parse_u64(item.substr(0, dots), first)) {
    throw range_error(option, item, "the start is not a whole number");
  }
  const std::string_view rest = item.substr(dots + 2);
  const std::size_t step_at = rest.find_first_of("x+");
  if (step_at == std::string_view::npos) {
    throw range_error(option, item, "expected A..BxF (multiply by F) or A..B+S (add S)");
  }
  std::uint64_t last = 0;
  std::uint64_t step = 0;
  if (!parse_u64(rest.substr(0, step_at), last)) {
    throw range_error(option, item, "the end is not a whole number");
  }
  if (!parse_u64(rest.substr(step_at + 1), step)) {
    throw range_error(option, item, "the step is not a whole number");
  }
  const bool multiply = rest[step_at] == 'x';
  if (multiply && step < 2) throw range_error(option, item, "the factor must be at least 2");
  if (!multiply && step < 1) throw range_error(option, item, "the step must be at least 1");
  if (multiply && first == 0)
    throw range_error(option, item, "a geometric range cannot start at 0");
  if (last < first) throw range_error(option, item, "the end is below the start");
  std::uint64_t made = 0;
  for (std::uint64_t v = first; v <= last;) {
    if (++made > kMaxRangeValues) throw range_error(option, item, "more than 100000 values");
    out.push_back(std::to_string(v));
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    if (multiply ? v > max / step : v > max - step) break;
    v = multiply ? v * step : v + step;
  }
}

}  // namespace

const std::string& SweepPoint::at(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  throw UsageError("sweep point " + std::to_string(index) + " has no parameter \"" +
                   std::string(name) + "\"");
}

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  if (slash == std::string_view::npos || !parse_u64(text.substr(0, slash), shard.index) ||
      !parse_u64(text.substr(slash + 1), shard.count) || shard.count == 0 ||
      shard.index >= shard.count) {
    throw UsageError("--shard: expected I/N with 0 <= I < N (e.g. 0/4), got \"" +
                     std::string(text) + "\"");
  }
  return shard;
}

std::vector<std::string> expand_values(std::string_view text, std::string_view option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) {
      throw UsageError(std::string(option) + ": empty value in list \"" + std::string(text) + "\"");
    }
    const std::size_t dots = item.find("..");
    if (dots != std::string_view::npos) {
      expand_range(option, item, dots, out);
    } else {
      out.emplace_back(item);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

SweepPlan::SweepPlan(std::vector<SweepAxis> axes) : m_axes(std::move(axes)) {
  std::set<std::string> seen;
  for (const SweepAxis& axis : m_axes) {
    if (axis.values.empty()) throw UsageError("sweep axis \"" + axis.name + "\" has no values");
    if (!seen.insert(axis.name).second) {
      throw UsageError("sweep parameter \"" + axis.name + "\" is given twice");
    }
    if (m_count > kMaxSweepPoints / axis.values.size()) {
      throw UsageError("sweep has more than " + std::to_string(kMaxSweepPoints) +
                       " points (the product of the lists' lengths); narrow the lists or ranges");
    }
    m_count *= axis.values.size();
  }
}

SweepPoint SweepPlan::point(std::uint64_t index) const {
  SweepPoint p;
  p.index = index;
  p.params.resize(m_axes.size());
  // Row-major: the last axis varies fastest.
  std::uint64_t rest = index;
  for (std::size_t i = m_axes.size(); i-- > 0;) {
    const auto& values = m_axes[i].values;
    p.params[i] = {m_axes[i].name, values[rest % values.size()]};
    rest /= values.size();
  }
  return p;
}

std::vector<std::uint64_t> SweepPlan::shard_indices(const Shard& shard) const {
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = shard.index; i < m_count; i += shard.count) out.push_back(i);
  return out;
}

std::string SweepPlan::describe() const {
  std::string text;
  for (const SweepAxis& axis : m_axes) {
    text += axis.name + "=";
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      text += (i ? "," : "") + axis.values[i];
    }
    text += ";";
  }
  return text;
}

std::string fingerprint(std::string_view text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace memwall
