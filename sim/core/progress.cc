#include "sim/core/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace memwall {

using Clock = std::chrono::steady_clock;

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

ProgressLine::ProgressLine(bool enabled, std::uint64_t total, std::uint64_t already,
                           std::string unit, bool throttled)
    : m_enabled(enabled),
      m_throttled(throttled),
      m_unit(std::move(unit)),
      m_total(total),
      m_done(already),
      m_start_done(already),
      m_start(Clock::now()),
      m_drawn(m_start) {
  const std::lock_guard<std::mutex> guard(m_lock);
  if (m_total > 0) draw(true);  // a line of nothing yet (a stage to come) waits for restart()
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::step() {
  if (!m_enabled) return;
  const std::lock_guard<std::mutex> guard(m_lock);
  ++m_done;
  draw(m_done == m_total);
}

void ProgressLine::restart(std::string label, std::uint64_t total) {
  if (!m_enabled) return;
  const std::lock_guard<std::mutex> guard(m_lock);
  m_label = std::move(label);
  m_total = total;
  m_done = 0;
  m_start_done = 0;
  m_start = Clock::now();
  draw(true);
}

void ProgressLine::finish() {
  const std::lock_guard<std::mutex> guard(m_lock);
  if (!m_enabled || m_finished) return;
  m_finished = true;
  if (m_drawn_any) std::fputs("\n", stderr);
}

void ProgressLine::draw(bool force) {
  if (!m_enabled || m_finished) return;
  const Clock::time_point now = Clock::now();
  if (m_throttled && !force && now - m_drawn < std::chrono::milliseconds(100)) return;
  m_drawn = now;
  m_drawn_any = true;
  constexpr int kWidth = 30;
  const double frac = m_total ? static_cast<double>(m_done) / static_cast<double>(m_total) : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const std::uint64_t fresh = m_done - m_start_done;
  const double rate = elapsed > 0 && fresh > 0 ? static_cast<double>(fresh) / elapsed : 0.0;
  char left[32] = "--:--";
  if (rate > 0) {
    const auto secs = static_cast<long long>(static_cast<double>(m_total - m_done) / rate + 0.5);
    std::snprintf(left, sizeof left, "%lld:%02lld", secs / 60, secs % 60);
  }
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, ' ');
  // \033[K clears what a longer previous line left.
  std::fprintf(stderr, "\r%s%s[%s] %llu/%llu %s  %.2f %s/s  %s left \033[K", m_label.c_str(),
               m_label.empty() ? "" : " ", bar.c_str(), static_cast<unsigned long long>(m_done),
               static_cast<unsigned long long>(m_total), m_unit.c_str(), rate, m_unit.c_str(),
               left);
  std::fflush(stderr);
}

}  // namespace memwall
