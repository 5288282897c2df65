#pragma once
/// What a sweep runs: named axes, each a list of values, and their cartesian product in a fixed
/// order. Points are numbered 0..count-1 in row-major order: the first axis varies slowest and the
/// last fastest (like nested loops in axis order). Values are kept as text exactly as given, so a
/// point prints the same however it is run.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memwall {

/// One named cell: a parameter of a point or a figure of a report, as text.
using Field = std::pair<std::string, std::string>;
/// Named cells in a fixed order (a CSV row without its header).
using FlatRow = std::vector<Field>;

/// One axis of a sweep: a parameter name (the CSV column) and its values, in the order given.
struct SweepAxis {
  std::string name;  ///< e.g. "seq", "l2.size"
  std::vector<std::string> values;  ///< at least one value
};

/// One point of a sweep: its index in the full product and its parameter values in axis order.
struct SweepPoint {
  std::uint64_t index = 0;
  FlatRow params;  ///< (axis name, value), one per axis, in axis order

  /// The value of parameter `name`; throws UsageError if the point has no such parameter.
  const std::string& at(std::string_view name) const;
};

/// Which part of the points one process runs: every `count`-th point starting at `index`.
struct Shard {
  std::uint64_t index = 0;  ///< 0-based, < count
  std::uint64_t count = 1;  ///< >= 1; 1 means "all points"
  bool active() const { return count > 1 || index != 0; }
};

/// Parses "I/N" (0 <= I < N). Throws UsageError naming the option on anything else.
Shard parse_shard(std::string_view text);

/// Expands one value list: comma-separated items, each a single value or an integer range
/// "A..BxF" (A, A·F, A·F², … up to B; F >= 2) or "A..B+S" (A, A+S, … up to B; S >= 1).
/// Other items (e.g. "fp16", "50 MiB") are kept verbatim after trimming blanks. Throws UsageError
/// naming `option` on an empty item, a malformed or empty range, or a range over 100000 values.
std::vector<std::string> expand_values(std::string_view text, std::string_view option);

/// The most points one sweep may have: each is a simulation, so more is a mistake (and the plan
/// lists a shard's point indices in memory).
inline constexpr std::uint64_t kMaxSweepPoints = 10'000'000;

/// The cartesian product of a list of axes.
class SweepPlan {
 public:
  SweepPlan() = default;
  /// Throws UsageError on an axis without values, a repeated axis name, or more than
  /// kMaxSweepPoints points.
  explicit SweepPlan(std::vector<SweepAxis> axes);

  const std::vector<SweepAxis>& axes() const { return m_axes; }
  /// Number of points: the product of the axes' sizes (1 for no axes).
  std::uint64_t count() const { return m_count; }
  /// The point with this index (< count()).
  SweepPoint point(std::uint64_t index) const;
  /// The indices a shard runs, ascending.
  std::vector<std::uint64_t> shard_indices(const Shard& shard) const;
  /// A stable text describing the axes (names and values), for fingerprints.
  std::string describe() const;

 private:
  std::vector<SweepAxis> m_axes;
  std::uint64_t m_count = 1;
};

/// 64-bit FNV-1a hash of `text`, as 16 lowercase hex digits (stable across runs and machines).
std::string fingerprint(std::string_view text);

}  // namespace memwall
