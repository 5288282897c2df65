#pragma once
/// A one-line progress bar on stderr for long work (a sweep's points, what-if variants, io's
/// points, a simulation's CTAs), drawn only when stderr is a terminal: piped or redirected output
/// stays free of it (issue 18, finding 16).

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace memwall {

/// Whether stderr is a terminal (where a progress line belongs).
bool stderr_is_terminal();

/// "\r[#####     ] 3/10 points  1.50 points/s  0:05 left", redrawn on each step (at most every
/// 100 ms when `throttled`), ended with a newline by finish() or the destructor. Thread-safe.
class ProgressLine {
 public:
  /// `enabled` false draws nothing (the object is then free to keep); a `total` of 0 draws
  /// nothing until restart(). restart()'s label precedes the bar ("flash2 kernel 2 (softmax)");
  /// `unit` names what is counted ("points").
  ProgressLine(bool enabled, std::uint64_t total, std::uint64_t already = 0,
               std::string unit = "points", bool throttled = false);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// One more unit done.
  void step();
  /// A new stage: `label`, counting from 0 to `total` again.
  void restart(std::string label, std::uint64_t total);
  /// Ends the line (idempotent).
  void finish();

 private:
  void draw(bool force);

  bool m_enabled;
  bool m_throttled;
  bool m_finished = false;
  bool m_drawn_any = false;  ///< whether a line was drawn (finish() then ends it)
  std::string m_label;
  std::string m_unit;
  std::uint64_t m_total;
  std::uint64_t m_done;
  std::uint64_t m_start_done;
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_drawn;
  std::mutex m_lock;
};

}  // namespace memwall
