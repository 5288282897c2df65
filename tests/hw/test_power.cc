// The power model and its limiter (sim/hw/power.h), against the formulas of its contract.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/hw/power.h"

using namespace memwall;

namespace {

PowerConfig h200_like() {
  PowerConfig c;
  c.limit_watts = 665;
  c.static_watts = 122.2;
  c.tensor_pj_per_flop = 0.89;
  c.fp32_pj_per_flop = 5.9;
  c.sfu_pj_per_op = 20.9;
  c.smem_pj_per_byte = 10.5;
  c.l2_pj_per_byte = 30.1;
  c.dram_pj_per_byte = 60.5;
  c.voltage_exponent = 2.02;
  return c;
}

PowerWork some_work() {
  PowerWork w;
  w.tensor_flops = 1e12;
  w.fp32_flops = 3e10;
  w.sfu_ops = 2e9;
  w.smem_bytes = 5e10;
  w.l2_bytes = 8e9;
  w.dram_bytes = 2e8;
  return w;
}

}  // namespace

TEST_CASE("A span's energy is the static power's plus each unit of work's energy", "[power]") {
  const PowerConfig c = h200_like();
  const PowerModel m(c);
  const PowerWork w = some_work();
  const double pj = w.tensor_flops * c.tensor_pj_per_flop + w.fp32_flops * c.fp32_pj_per_flop +
                    w.sfu_ops * c.sfu_pj_per_op + w.smem_bytes * c.smem_pj_per_byte +
                    w.l2_bytes * c.l2_pj_per_byte + w.dram_bytes * c.dram_pj_per_byte;
  CHECK(m.dynamic_joules(w, 1.0) == Approx(pj * 1e-12).epsilon(1e-12));
  CHECK(m.joules(w, 2e-3, 1.0) == Approx(c.static_watts * 2e-3 + pj * 1e-12).epsilon(1e-12));
  // A lower clock lowers the voltage: each unit of work costs scale^voltage_exponent as much.
  CHECK(m.dynamic_joules(w, 0.8) ==
        Approx(pj * 1e-12 * std::pow(0.8, c.voltage_exponent)).epsilon(1e-12));
}

TEST_CASE("The limiter keeps the clock where the work draws less than the limit", "[power]") {
  const PowerConfig c = h200_like();
  const PowerModel m(c);
  PowerWork light;
  light.tensor_flops = 1e8;  // 1e8 FLOP in 1 ms: 0.089 W above the static power
  CHECK(m.next_scale(light, 1e-3, 1.0) == 1.0);
  CHECK(m.next_scale(PowerWork{}, 1e-3, 0.7) == 1.0);
  PowerConfig off = c;
  off.limit_watts = 0;
  CHECK_FALSE(PowerModel(off).limited());
  CHECK(PowerModel(off).next_scale(some_work(), 1e-3, 1.0) == 1.0);
}

TEST_CASE(
    "Over the limit, the next clock is the one at which the window's work, its rates following "
    "the clock, draws the limit",
    "[power]") {
  const PowerConfig c = h200_like();
  const PowerModel m(c);
  const PowerWork w = some_work();
  for (const double scale : {1.0, 0.9, 0.6}) {
    const double seconds = 1.5e-3;
    const double next = m.next_scale(w, seconds, scale);
    REQUIRE(next < 1.0);
    // At `next` the same work takes seconds · scale / next and costs next^β of its full-voltage
    // energy: static + that energy over that time is the limit.
    const double t = seconds * scale / next;
    CHECK(m.joules(w, t, next) / t == Approx(c.limit_watts).epsilon(1e-9));
  }
}

TEST_CASE("The limiter never sets a clock below PowerModel::kMinClockScale", "[power]") {
  PowerConfig c = h200_like();
  c.limit_watts = 122.3;  // 0.1 W of headroom
  const PowerModel m(c);
  CHECK(m.next_scale(some_work(), 1e-3, 1.0) == PowerModel::kMinClockScale);
}
