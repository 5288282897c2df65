#pragma once
/// A set of bits over the 64-bit index space whose memory is proportional to the bits touched,
/// not to the range they are declared in: bits live in pages of kPageBits, each allocated (zeroed)
/// the first time one of its words is asked for, and found through a directory of page pointers
/// that grows to the highest page touched (8 bytes per page of 32768 bits: 1/4096 of what a flat
/// bitmap over the same span would take). The page last used is cached, so a run of nearby
/// lookups (a tensor read in order) costs one compare more than a flat bitmap, and a page change
/// one indexed load. Pages and directory are counted against a MemoryBudget as they grow.
///
/// It replaced a flat bitmap sized from each tensor's declared extent, which took 4 GB for a
/// forged trace declaring a 1 TiB tensor and touching 150 bytes of it (issue 18, finding 2). A
/// hash map of pages was tried first: it made naive attention 10% slower (a page change per few
/// lines when many CTAs read far-apart rows).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/memory_budget.h"

namespace memwall {

class SparseBitmap {
 public:
  static constexpr unsigned kPageShift = 15;  ///< 32768 bits a page
  static constexpr std::uint64_t kPageWords = (std::uint64_t{1} << kPageShift) / 64;
  static constexpr std::uint64_t kPageBytes = kPageWords * sizeof(std::uint64_t);  ///< 4 KiB
  /// What the record's memory grows with, for the budget's message.
  static constexpr const char* kRecordGrowth = "the distinct sectors the trace reads from DRAM";

  /// Pages are counted against `budget` (may be null: no limit) as they are allocated.
  explicit SparseBitmap(MemoryBudget* budget = nullptr) : m_budget(budget) {}

  /// The 64-bit word holding bit `bit` (its bit `bit % 64`), allocated zero when first asked for.
  /// The reference stays valid for the bitmap's life.
  std::uint64_t& word(std::uint64_t bit) {
    const std::uint64_t page = bit >> kPageShift;
    if (page != m_cached_page) [[unlikely]]
      find_page(page);
    return m_cached[(bit >> 6) & (kPageWords - 1)];
  }

  /// Counts pages allocated from now on against `budget` (null: no limit).
  void set_budget(MemoryBudget* budget) { m_budget = budget; }

  /// Pages allocated so far.
  std::uint64_t pages() const { return m_pages; }

 private:
  /// Sets the cache to page `page`, allocating it (and counting it) when new.
  void find_page(std::uint64_t page) {
    if (page >= m_directory.size()) {
      // Grow to the page touched (at least doubling, so that a tensor read upwards costs
      // amortised O(1) per page); the directory's growth counts against the budget too.
      const std::uint64_t size = std::max<std::uint64_t>(page + 1, 2 * m_directory.size());
      if (m_budget != nullptr) {
        m_budget->take((size - m_directory.size()) * sizeof(std::uint64_t*),
                       "the record of DRAM sectors fetched", kRecordGrowth);
      }
      m_directory.resize(size);
    }
    std::unique_ptr<std::uint64_t[]>& slot = m_directory[page];
    if (!slot) {
      if (m_budget != nullptr) {
        m_budget->take(kPageBytes, "the record of DRAM sectors fetched", kRecordGrowth);
      }
      slot = std::make_unique<std::uint64_t[]>(kPageWords);
      ++m_pages;
    }
    m_cached_page = page;
    m_cached = slot.get();
  }

  MemoryBudget* m_budget;
  std::vector<std::unique_ptr<std::uint64_t[]>> m_directory;  ///< by page; null until touched
  std::uint64_t m_pages = 0;
  std::uint64_t m_cached_page = ~std::uint64_t{0};
  std::uint64_t* m_cached = nullptr;
};

}  // namespace memwall
