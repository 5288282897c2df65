#include "sim/core/memory_budget.h"

#include <unistd.h>

#include "sim/core/error.h"

namespace memwall {
namespace {

std::string limit_text(Bytes limit) {
  return format_bytes(limit) + " (--max-memory; the default is half the machine's memory)";
}

}  // namespace

Bytes default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return Bytes{std::uint64_t{4} << 30};
  return Bytes{static_cast<std::uint64_t>(pages) / 2 * static_cast<std::uint64_t>(page)};
}

Bytes parse_memory_limit(const std::string& text) {
  const Bytes b = parse_bytes(text);
  if (b.count == 0) throw UnitError("must be greater than zero, got \"" + text + "\"");
  return b;
}

Bytes memory_limit_option(const std::string& text, const std::string& name) {
  if (text.empty()) return Bytes{};
  try {
    return parse_memory_limit(text);
  } catch (const UnitError& e) {
    throw UsageError(name + ": " + e.what());
  }
}

void MemoryBudget::take(std::uint64_t bytes, const char* what, const char* growth) {
  if (bytes > m_limit.count || m_used > m_limit.count - bytes) {
    throw UsageError(std::string("the simulation needs more memory than the limit of ") +
                     limit_text(m_limit) + ": with " + what + " it would reach " +
                     format_bytes(Bytes{m_used + bytes}) + " (" + what + " grows with " + growth +
                     ")");
  }
  m_used += bytes;
}

void MemoryBudget::check_up_front(std::uint64_t bytes, const std::string& what) const {
  if (bytes > m_limit.count || m_used > m_limit.count - bytes) {
    throw UsageError("the simulation would need " + format_bytes(Bytes{m_used + bytes}) +
                     " of memory for " + what + ", more than the limit of " + limit_text(m_limit));
  }
}

}  // namespace memwall
