#pragma once
/// A set of bits over the 64-bit index space whose memory is proportional to the bits touched,
/// not to the range they lie in: bits live in pages of kPageBits, each allocated (zeroed) the
/// first time one of its words is asked for. The page last used is cached, so a run of nearby
/// lookups (a tensor read in order) costs one compare more than a flat bitmap.
///
/// It replaced a flat bitmap sized from each tensor's declared extent, which took 4 GB for a
/// forged trace declaring a 1 TiB tensor and touching 150 bytes of it (issue 18, finding 2).

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "sim/core/memory_budget.h"

namespace memwall {

class SparseBitmap {
 public:
  static constexpr unsigned kPageShift = 15;                              ///< 32768 bits a page
  static constexpr std::uint64_t kPageWords = (std::uint64_t{1} << kPageShift) / 64;
  static constexpr std::uint64_t kPageBytes = kPageWords * sizeof(std::uint64_t);  ///< 4 KiB

  /// Pages are counted against `budget` (may be null: no limit) as they are allocated.
  explicit SparseBitmap(MemoryBudget* budget = nullptr) : m_budget(budget) {}

  /// The 64-bit word holding bit `bit` (its bit `bit % 64`), allocated zero when first asked for.
  /// The reference stays valid for the bitmap's life.
  std::uint64_t& word(std::uint64_t bit) {
    const std::uint64_t page = bit >> kPageShift;
    if (page != m_cached_page) [[unlikely]] find_page(page);
    return m_cached[(bit >> 6) & (kPageWords - 1)];
  }

  /// Counts pages allocated from now on against `budget` (null: no limit).
  void set_budget(MemoryBudget* budget) { m_budget = budget; }

  /// Pages allocated so far.
  std::uint64_t pages() const { return m_pages.size(); }

 private:
  /// Sets the cache to page `page`, allocating it (and counting it) when new.
  void find_page(std::uint64_t page) {
    auto& slot = m_pages[page];  // only looked up, never iterated: no order reaches the output
    if (!slot) {
      if (m_budget != nullptr) m_budget->take(kPageBytes, "the record of DRAM sectors fetched");
      slot = std::make_unique<std::uint64_t[]>(kPageWords);
    }
    m_cached_page = page;
    m_cached = slot.get();
  }

  MemoryBudget* m_budget;
  std::unordered_map<std::uint64_t, std::unique_ptr<std::uint64_t[]>> m_pages;
  std::uint64_t m_cached_page = ~std::uint64_t{0};
  std::uint64_t* m_cached = nullptr;
};

}  // namespace memwall
