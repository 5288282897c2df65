#pragma once
/// A deterministic discrete-event queue: events fire in (tick, priority, sequence) order, where
/// `sequence` is the order in which they were scheduled. Two runs that schedule the same events
/// pop them in the same order, whatever the heap's internal layout.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/units.h"

namespace memwall {

/// One scheduled event. `target` and `kind` are opaque to the queue: the owner decides who
/// handles the event and what it means.
struct Event {
  Tick tick = 0;  ///< when it fires, in ps
  std::uint32_t priority = 0;  ///< among events at the same tick, lower fires first
  std::uint64_t sequence = 0;  ///< scheduling order; breaks every remaining tie
  std::uint32_t target = 0;  ///< e.g. a CTA slot index
  std::uint32_t kind = 0;  ///< e.g. "execute the next op" or "finish"
};

/// A binary min-heap of events. Scheduling is O(log n), popping O(log n), no allocation once the
/// heap has reached its largest size.
class EventQueue {
 public:
  /// Schedules an event at `tick` (>= now(), else throws Error: an event in the past is a bug).
  void schedule(Tick tick, std::uint32_t priority, std::uint32_t target, std::uint32_t kind);

  bool empty() const { return m_heap.empty(); }
  std::size_t size() const { return m_heap.size(); }
  /// The next event to fire; the queue must not be empty.
  const Event& top() const { return m_heap.front(); }
  /// Removes and returns the next event; advances now() to its tick.
  Event pop();
  /// The tick of the last popped event (0 before the first).
  Tick now() const { return m_now; }
  /// Events scheduled since construction.
  std::uint64_t scheduled_count() const { return m_next_sequence; }

 private:
  std::vector<Event> m_heap;
  std::uint64_t m_next_sequence = 0;
  Tick m_now = 0;
};

}  // namespace memwall
