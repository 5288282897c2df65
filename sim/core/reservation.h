#pragma once
/// Bandwidth by reservation, for the reserved resources (SM ports, L2 slices, SM pipes): each
/// instance keeps the tick at which it is next free; a request of duration d arriving at t is
/// served from max(t, next_free) and holds the instance for d. Each instance also sums the time
/// booked on it, for the busiest-instance report. The HBM channels book the same way on their own
/// per-channel state (sim/hw/hbm.h), whose duration depends on the start.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/core/units.h"

namespace memwall {

class Reservations {
 public:
  /// `instances` resources, all free at tick 0.
  explicit Reservations(std::size_t instances = 0)
      : m_next_free(instances, 0), m_busy(instances, 0) {}

  /// Books instance `i` for `duration` from the first tick >= `t` at which it is free; adds the
  /// wait (start - t) to `wait` and returns the end of the booking. Throws UsageError when the
  /// end would pass kMaxTick (`t` and `duration` are >= 0 and at most kMaxTick).
  Tick reserve(std::size_t i, Tick t, Tick duration, Tick& wait) {
    return view().reserve(i, t, duration, wait);
  }

  /// The instances' state as raw arrays, for a caller that books many of them in a run (the
  /// memory path's lines, one L2 slice each): `reserve` books exactly as Reservations::reserve.
  /// Valid while the Reservations lives and is not resized.
  struct View {
    Tick* next_free;
    Tick* busy;
    Tick reserve(std::size_t i, Tick t, Tick duration, Tick& wait) const {
      Tick& free = next_free[i];
      const Tick start = t > free ? t : free;
      wait += start - t;
      busy[i] += duration;  // at most the end of the last booking: bounded as `free` is
      free = checked_end(start, duration, "a transfer");
      return free;
    }
  };
  View view() { return View{m_next_free.data(), m_busy.data()}; }

  /// The tick instance `i` is next free.
  Tick next_free(std::size_t i) const { return m_next_free[i]; }
  /// Time booked on instance `i` since the last reset_busy.
  Tick busy(std::size_t i) const { return m_busy[i]; }
  /// Sets instance `i`'s next-free tick and booked time: for a caller that books one instance many
  /// times in a row with the two kept in registers meanwhile (Xbar::Run), and writes them back.
  void set_state(std::size_t i, Tick next_free, Tick busy) {
    m_next_free[i] = next_free;
    m_busy[i] = busy;
  }
  /// The latest tick any instance is booked until.
  Tick busy_until() const {
    return m_next_free.empty() ? 0 : *std::max_element(m_next_free.begin(), m_next_free.end());
  }
  /// Time booked on each instance since the last reset_busy.
  const std::vector<Tick>& busy() const { return m_busy; }
  void reset_busy() { std::fill(m_busy.begin(), m_busy.end(), Tick{0}); }
  std::size_t size() const { return m_next_free.size(); }

 private:
  std::vector<Tick> m_next_free;
  std::vector<Tick> m_busy;
};

}  // namespace memwall
