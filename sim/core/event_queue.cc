#include "sim/core/event_queue.h"

#include <algorithm>
#include <string>

#include "sim/core/error.h"

namespace memwall {
namespace {

/// std::push_heap builds a max-heap; "greater" puts the earliest event on top. A function object
/// rather than a function pointer, so that the heap operations inline it.
struct FiresLater {
  bool operator()(const Event& a, const Event& b) const {
    if (a.tick != b.tick) return a.tick > b.tick;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.sequence > b.sequence;
  }
};

}  // namespace

void EventQueue::schedule(Tick tick, std::uint32_t priority, std::uint32_t target,
                          std::uint32_t kind) {
  if (tick > kMaxTick) [[unlikely]]
    throw_tick_overflow("an event", m_now, tick - m_now);
  if (tick < m_now) {
    throw Error("internal: event scheduled at " + std::to_string(tick) + " ps, before now (" +
                    std::to_string(m_now) + " ps)",
                kExitFailure);
  }
  m_heap.push_back(Event{tick, priority, m_next_sequence++, target, kind});
  std::push_heap(m_heap.begin(), m_heap.end(), FiresLater{});
}

Event EventQueue::pop() {
  std::pop_heap(m_heap.begin(), m_heap.end(), FiresLater{});
  const Event e = m_heap.back();
  m_heap.pop_back();
  m_now = e.tick;
  return e;
}

}  // namespace memwall
