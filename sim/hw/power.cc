#include "sim/hw/power.h"

#include <algorithm>
#include <cmath>

namespace memwall {

double PowerModel::dynamic_joules(const PowerWork& w, double scale) const {
  const PowerConfig& c = m_config;
  const double pj = w.tensor_flops * c.tensor_pj_per_flop + w.fp32_flops * c.fp32_pj_per_flop +
                    w.sfu_ops * c.sfu_pj_per_op + w.smem_bytes * c.smem_pj_per_byte +
                    w.l2_bytes * c.l2_pj_per_byte + w.dram_bytes * c.dram_pj_per_byte;
  return pj * 1e-12 * std::pow(scale, c.voltage_exponent);
}

double PowerModel::joules(const PowerWork& work, double seconds, double scale) const {
  return m_config.static_watts * seconds + dynamic_joules(work, scale);
}

double PowerModel::next_scale(const PowerWork& work, double seconds, double scale) const {
  if (!limited() || !(seconds > 0)) return 1.0;
  // D: the window's dynamic power had it run at full voltage with the rates it had at `scale`.
  const double full_voltage_watts = dynamic_joules(work, 1.0) / seconds;
  const double headroom = m_config.limit_watts - m_config.static_watts;
  if (full_voltage_watts <= 0) return 1.0;
  // static + s'^β · D · s'/s = limit  ⇒  s'^(β+1) = headroom · s / D.
  const double next =
      std::pow(headroom * scale / full_voltage_watts, 1.0 / (m_config.voltage_exponent + 1.0));
  return std::clamp(next, kMinClockScale, 1.0);
}

}  // namespace memwall
