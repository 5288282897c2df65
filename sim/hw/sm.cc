#include "sim/hw/sm.h"

#include <algorithm>
#include <cmath>

#include "sim/core/error.h"

namespace memwall {
namespace {

const char* const kPipeNames[kPipeCount + 1] = {"tensor",        "fp32",  "sfu",
                                                "shared-memory", "issue", "tensor (mma.sync)"};

std::uint64_t round_up(std::uint64_t a, std::uint64_t unit) { return (a + unit - 1) / unit * unit; }

double ps_per_unit(double units_per_second) {
  return units_per_second > 0.0 ? 1e12 / units_per_second : 0.0;
}

}  // namespace

const char* to_string(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::kMaxCtas: return "max_ctas_per_sm";
    case OccupancyLimit::kSharedMemory: return "shared memory";
    case OccupancyLimit::kThreads: return "threads";
    case OccupancyLimit::kRegisters: return "registers";
  }
  return "?";
}

Occupancy occupancy(const SmConfig& sm, const CtaResources& cta, const std::string& kernel_name) {
  const std::string what = "kernel \"" + kernel_name + "\": ";
  if (cta.threads == 0) throw UsageError(what + "a CTA has 0 threads");
  if (cta.smem_bytes > sm.smem_per_block.count) {
    throw UsageError(what + "a CTA needs " + format_bytes(Bytes{cta.smem_bytes}) +
                     " of shared memory, but at most " + format_bytes(sm.smem_per_block) +
                     " fits one CTA (sm.smem_per_block)");
  }
  if (cta.threads > sm.max_threads_per_block) {
    throw UsageError(what + "a CTA has " + std::to_string(cta.threads) + " threads, but at most " +
                     std::to_string(sm.max_threads_per_block) +
                     " fit one CTA (sm.max_threads_per_block)");
  }
  // Registers are allocated per warp, in whole units of sm.register_alloc_unit: a CTA holds
  // whole units for each of its warps.
  const std::uint64_t warp = sm.warp_size;
  const std::uint64_t warps = round_up(cta.threads, warp) / warp;
  const std::uint64_t regs_per_warp =
      round_up(std::uint64_t{cta.registers_per_thread} * warp, sm.register_alloc_unit);
  const std::uint64_t regs = regs_per_warp * warps;
  if (regs > sm.registers_per_sm) {
    throw UsageError(what + "a CTA needs " + std::to_string(regs) + " registers (" +
                     std::to_string(cta.registers_per_thread) + " per thread), but an SM has " +
                     std::to_string(sm.registers_per_sm) + " (sm.registers_per_sm)");
  }
  Occupancy o{sm.max_ctas_per_sm, OccupancyLimit::kMaxCtas};
  auto limit = [&](std::uint64_t n, OccupancyLimit why) {
    if (n < o.ctas_per_sm) o = Occupancy{static_cast<std::uint32_t>(n), why};
  };
  if (cta.smem_bytes > 0)
    limit(sm.smem_per_sm.count / cta.smem_bytes, OccupancyLimit::kSharedMemory);
  limit(sm.max_threads_per_sm / cta.threads, OccupancyLimit::kThreads);
  if (regs > 0) limit(sm.registers_per_sm / regs_per_warp / warps, OccupancyLimit::kRegisters);
  if (o.ctas_per_sm == 0) {
    throw UsageError(what + "a CTA (" + format_bytes(Bytes{cta.smem_bytes}) + " shared memory, " +
                     std::to_string(cta.threads) +
                     " threads) fits no SM: " + to_string(o.limited_by) + " allows 0 per SM");
  }
  return o;
}

Sm::Sm(const HardwareConfig& c) {
  const double hz = c.sm.clock.hertz;
  // The tensor cores run at sm.tensor_clock when it is given (a power-limited clock under tensor load).
  const double tensor_hz = c.sm.tensor_clock.hertz > 0 ? c.sm.tensor_clock.hertz : hz;
  const double mma_sync = c.sm.mma_sync_flops_per_cycle > 0 ? c.sm.mma_sync_flops_per_cycle
                                                            : c.sm.tensor_flops_per_cycle;
  m_ps_per_unit[kTensorPipe] =
      ps_per_unit(c.sm.tensor_flops_per_cycle * c.efficiency.tensor * tensor_hz);
  m_ps_per_unit[kMmaSyncRate] = ps_per_unit(mma_sync * c.efficiency.mma_sync * tensor_hz);
  m_ps_per_unit[1] = ps_per_unit(c.sm.fp32_flops_per_cycle * c.efficiency.fp32 * hz);
  m_ps_per_unit[2] = ps_per_unit(c.sm.sfu_ops_per_cycle * c.efficiency.sfu * hz);
  m_ps_per_unit[kSmemPipe] = ps_per_unit(c.sm.smem_bandwidth.bytes_per_second);
  m_ps_per_unit[kIssuePipe] = ps_per_unit(c.sm.issue_per_cycle * hz);
  for (std::size_t p = 0; p < kPipeCount; ++p) m_booked_on[p] = p;
  if (c.sm.smem_pipe == PipeBooking::kTensor) m_booked_on[kSmemPipe] = kTensorPipe;
  if (c.sm.issue_pipe == PipeBooking::kTensor) m_booked_on[kIssuePipe] = kTensorPipe;
  m_held_by_tensor[kSmemPipe] = c.sm.smem_pipe == PipeBooking::kTurns;
  m_held_by_tensor[kIssuePipe] = c.sm.issue_pipe == PipeBooking::kTurns;
  m_full_clock_ps_per_unit = m_ps_per_unit;
  m_tensor_clock_ps_per_unit = m_ps_per_unit;
  m_tensor_clock_whole_sm = c.sm.tensor_clock_scope == TensorClockScope::kSm && tensor_hz != hz;
  if (m_tensor_clock_whole_sm) {
    m_tensor_clock_stretch = hz / tensor_hz;
    for (const std::size_t p : {kFp32Pipe, kSfuPipe, kSmemPipe, kIssuePipe}) {
      m_tensor_clock_ps_per_unit[p] = m_full_clock_ps_per_unit[p] * hz / tensor_hz;
    }
  }
}

void Sm::set_clock_scale(double scale) {
  m_clock_scale = scale;
  apply_clock();
}

void Sm::apply_clock() {
  const auto& base = m_at_tensor_clock ? m_tensor_clock_ps_per_unit : m_full_clock_ps_per_unit;
  for (std::size_t i = 0; i < m_ps_per_unit.size(); ++i) {
    m_ps_per_unit[i] = base[i] / m_clock_scale;
  }
}

Tick Sm::pipe_ticks(std::size_t pipe, std::uint64_t amount) const {
  if (amount == 0) return 0;
  if (m_ps_per_unit[pipe] == 0.0) {
    throw UsageError(std::string("the trace computes on the ") + kPipeNames[pipe] +
                     " pipe, but the config gives it zero throughput");
  }
  const double ps = static_cast<double>(amount) * m_ps_per_unit[pipe];
  if (!(ps <= static_cast<double>(kMaxTick))) {
    throw UsageError(std::string("trace: an op of ") + std::to_string(amount) + " units on the " +
                     kPipeNames[pipe] + " pipe would take " +
                     format_duration(static_cast<Tick>(std::min(ps, 9.2e18))) +
                     ", more than the simulator's bound of " + format_duration(kMaxTick) +
                     " (2^62 ps)");
  }
  const Tick t = static_cast<Tick>(std::llround(ps));
  return std::max<Tick>(t, 1);
}

Tick Sm::reserve_pipe(std::size_t pipe, Tick t, Tick duration) {
  Tick& free = m_pipe_free[m_booked_on[pipe]];
  const Tick start = std::max(t, free);
  free = checked_end(start, duration, "an op on an SM pipe");
  if (pipe == kTensorPipe) {
    // Tensor work takes as long from the pipes booked `turns` (sm.smem_pipe, sm.issue_pipe),
    // booked on each as its own reservation from `t`: each such pipe's bookings add up with the
    // MMAs' (T + S cycles at least), without the tensor pipe waiting for them.
    for (std::size_t p = 0; p < kPipeCount; ++p) {
      if (m_held_by_tensor[p]) {
        m_pipe_free[p] = checked_end(std::max(t, m_pipe_free[p]), duration, "an op on an SM pipe");
      }
    }
  }
  m_pipe_busy[pipe] += duration;
  return start;
}

void Sm::add_cta(Tick t) {
  if (m_resident++ == 0) m_busy_since = t;
}

void Sm::remove_cta(Tick t) {
  if (--m_resident == 0) m_busy_ticks += t - m_busy_since;
}

Tick Sm::take_busy_ticks() {
  const Tick b = m_busy_ticks;
  m_busy_ticks = 0;
  return b;
}

}  // namespace memwall
