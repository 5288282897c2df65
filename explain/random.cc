#include "explain/random.h"

#include <cmath>
#include <numbers>

namespace memwall::explain {

double Random::uniform() {
  // The top 53 bits of a 64-bit draw, scaled by 2^-53: every double in [0, 1) on a 2^-53 grid.
  return static_cast<double>(m_engine() >> 11) * 0x1.0p-53;
}

double Random::normal() {
  if (m_has_spare) {
    m_has_spare = false;
    return m_spare;
  }
  // Box–Muller: u1 in (0, 1] so that log(u1) is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  m_spare = radius * std::sin(angle);
  m_has_spare = true;
  return radius * std::cos(angle);
}

}  // namespace memwall::explain
