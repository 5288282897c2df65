#pragma once
/// The board's power and its power limiter. A chip that draws more than its limit is slowed by
/// its firmware: the SM clock (and with it the voltage) falls until the power is back under the
/// limit. The H200 does this under dense tensor work (traces/measured/h200-power-ubench: a wgmma
/// loop on all 132 SMs runs at 0.85 of the clock it reaches on 66, at the limit's power).
///
/// Model: power at SM clock scale s (the clock over sm.clock) doing work at rates r_k is
///   P = static + s^β · Σ_k e_k · r_k,
/// e_k the energy of a unit of work k at sm.clock's voltage (power.*_pj_per_*), β
/// power.voltage_exponent (the voltage falls with the clock, energy goes as its square). The
/// limiter looks at each window of simulated time (power.window): from the work done in it at
/// scale s it sets the next window's scale s' so that the same work, its rates following the
/// clock, would draw the limit: static + s'^β · D · s'/s = limit, D = Σ e_k r_k. Memory-bound
/// work (whose rates do not follow the clock) converges to its fixed point over a few windows.

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// Work done in a span of time, in the units the energies are given in.
struct PowerWork {
  double tensor_flops = 0;
  double fp32_flops = 0;
  double sfu_ops = 0;
  double smem_bytes = 0;
  double l2_bytes = 0;  ///< SM->L2 read and write bytes
  double dram_bytes = 0;  ///< HBM read and write bytes
};

/// The power model of one config (sim/hw/config.h PowerConfig).
class PowerModel {
 public:
  /// The lowest clock scale the limiter sets: a bound of the simulator, so that a config whose
  /// work would draw far more than its limit still finishes (the H200's idle clock is 0.17 of its
  /// maximum).
  static constexpr double kMinClockScale = 1.0 / 16;

  explicit PowerModel(const PowerConfig& config) : m_config(config) {}

  /// Whether the limiter acts (power.limit_watts > 0).
  bool limited() const { return m_config.limited(); }
  /// Joules that `work` takes beyond the static power, done at clock scale `scale`.
  double dynamic_joules(const PowerWork& work, double scale) const;
  /// Joules of a span of `seconds` in which `work` was done at clock scale `scale`, static
  /// power included.
  double joules(const PowerWork& work, double seconds, double scale) const;
  /// The clock scale the limiter sets after a window of `seconds` in which `work` was done at
  /// `scale`: the one at which that work, its rates following the clock, draws power.limit_watts;
  /// 1 when it draws less at full clock; never below kMinClockScale.
  double next_scale(const PowerWork& work, double seconds, double scale) const;

 private:
  PowerConfig m_config;
};

}  // namespace memwall
