#pragma once
/// Where CTAs run: the resident-CTA slots of every SM for the kernel now running. A kernel's
/// first wave is placed breadth-first (one CTA per SM per pass, SM 0 first, until every slot is
/// taken or the grid is exhausted); afterwards each freed slot takes the next CTA of the grid, so
/// CTAs start in grid order. Within an SM the lowest free slot is taken first. Slot ids are dense,
/// sm · slots_per_sm + slot, so callers keep per-slot state in one flat array.

#include <cstdint>
#include <vector>

namespace memwall {

class CtaScheduler {
 public:
  /// A scheduler for `sm_count` SMs (> 0).
  explicit CtaScheduler(std::uint32_t sm_count);

  /// Starts a kernel whose CTAs fit `slots_per_sm` (> 0) at a time on each SM; every slot is free.
  void begin_kernel(std::uint32_t slots_per_sm);

  std::uint32_t sm_count() const { return static_cast<std::uint32_t>(m_free.size()); }
  std::uint32_t slots_per_sm() const { return m_slots_per_sm; }
  /// Slots of the kernel over all SMs: the size of a per-slot array.
  std::size_t slot_count() const { return std::size_t{sm_count()} * m_slots_per_sm; }

  /// The dense id of slot `slot` of SM `sm`.
  std::uint32_t slot_id(std::uint32_t sm, std::uint32_t slot) const {
    return sm * m_slots_per_sm + slot;
  }

  /// Places the first wave: calls `place(sm, slot)` breadth-first over the SMs, taking the slot
  /// only when it returns true; stops at the first false (the grid is exhausted).
  template <class PlaceFn>
  void first_wave(PlaceFn&& place) {
    for (bool placed = true; placed;) {
      placed = false;
      for (std::uint32_t sm = 0; sm < sm_count(); ++sm) {
        if (m_free[sm].empty()) continue;
        if (!place(sm, m_free[sm].back())) return;
        m_free[sm].pop_back();
        placed = true;
      }
    }
  }

  /// True when SM `sm` has a free slot.
  bool has_free_slot(std::uint32_t sm) const { return !m_free[sm].empty(); }
  /// The slot SM `sm` would give the next CTA; it must have one.
  std::uint32_t next_slot(std::uint32_t sm) const { return m_free[sm].back(); }
  /// Takes that slot.
  void take_slot(std::uint32_t sm) { m_free[sm].pop_back(); }
  /// Frees slot `slot` of SM `sm` (its CTA finished); it is the next one taken on that SM.
  void release(std::uint32_t sm, std::uint32_t slot) { m_free[sm].push_back(slot); }

 private:
  std::vector<std::vector<std::uint32_t>> m_free;  ///< per SM, a stack of free slots
  std::uint32_t m_slots_per_sm = 0;
};

}  // namespace memwall
