#pragma once
/// How much memory a simulation may take (`--max-memory`, default half the machine's RAM), and
/// the accounting of the structures that grow while it runs (the record of sectors fetched from
/// DRAM). Whatever would pass the limit is refused with the figure, before it is allocated.

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/core/units.h"

namespace memwall {

/// Half the physical memory of this machine (sysconf), or 4 GiB when it cannot be read.
Bytes default_memory_limit();

/// Parses a `--max-memory` value: a size with its unit ("8 GiB", "500 MB"), greater than zero.
/// Throws UnitError otherwise.
Bytes parse_memory_limit(const std::string& text);

/// An option's memory limit, as `--max-memory` (the CLI) and `max_memory` (Python) take it:
/// Bytes{} when `text` is empty (the default, half the machine's memory), else
/// parse_memory_limit's size; UsageError "<name>: <reason>" otherwise.
Bytes memory_limit_option(const std::string& text, const std::string& name);

/// A limit and the bytes counted against it so far. Not thread-safe: one per simulation.
class MemoryBudget {
 public:
  explicit MemoryBudget(Bytes limit = default_memory_limit()) : m_limit(limit) {}

  /// Counts `bytes` more of `what` (e.g. "the record of DRAM sectors fetched"), which grows with
  /// `growth` (e.g. "the distinct sectors the trace reads from DRAM"); throws UsageError naming
  /// both, the total it would reach and the limit when the total would exceed the limit.
  void take(std::uint64_t bytes, const char* what, const char* growth);
  /// Throws UsageError when a structure of `bytes` (`what`, known before the simulation starts)
  /// would not fit within the limit together with what is already counted.
  void check_up_front(std::uint64_t bytes, const std::string& what) const;
  /// Uncounts `bytes` taken earlier (a reservation that ends).
  void give_back(std::uint64_t bytes) { m_used -= std::min(bytes, m_used); }

  Bytes limit() const { return m_limit; }
  std::uint64_t used_bytes() const { return m_used; }

 private:
  Bytes m_limit;
  std::uint64_t m_used = 0;
};

}  // namespace memwall
