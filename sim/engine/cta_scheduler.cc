#include "sim/engine/cta_scheduler.h"

namespace memwall {

CtaScheduler::CtaScheduler(std::uint32_t sm_count) : m_free(sm_count) {}

void CtaScheduler::begin_kernel(std::uint32_t slots_per_sm) {
  m_slots_per_sm = slots_per_sm;
  for (std::vector<std::uint32_t>& free : m_free) {
    free.clear();
    for (std::uint32_t j = slots_per_sm; j-- > 0;) free.push_back(j);  // lowest slot on top
  }
}

}  // namespace memwall
