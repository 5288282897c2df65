#include "sim/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/engine/timeline_sink.h"
#include "sim/hw/config_loader.h"
#include "traces/recorder.h"

namespace memwall {
namespace {

/// `config`, once it has passed validate_config: a config built in code meets the loader's checks
/// before the models of the chip are built from it (they trust its geometry and rates).
const HardwareConfig& validated(const HardwareConfig& config) {
  validate_config(config);
  return config;
}

}  // namespace

Engine::Engine(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
               TimelineSink* timeline)
    : m_config(validated(config)),
      m_source(source),
      m_options(options),
      m_timeline(timeline),
      m_budget(options.max_memory.count != 0 ? options.max_memory : default_memory_limit()),
      m_memory(config, source.workload()),
      m_sms(config.sm.count, Sm(config)),
      m_sm_time(config.sm.count),
      m_scheduler(config.sm.count),
      m_executor(config, m_memory, m_sms, m_queue, timeline, *this),
      m_power(config.power) {
  m_budget.take(fixed_memory_bytes(config), "the model of the chip",
                "the chip's SMs, L2 sets and HBM banks");
  m_memory.set_memory_budget(&m_budget);
}

std::uint64_t Engine::fixed_memory_bytes(const HardwareConfig& config) {
  // Each figure is at most about 2^50 (the schema bounds every count), so the sum cannot wrap.
  const DerivedConfig d = derive(config);
  const std::uint64_t l2_sets = d.l2_usable_sets_per_slice * config.l2.slices;
  const std::uint64_t l2 =
      l2_sets * config.l2.ways *
      L2::way_bytes(
          l2_sets,
          static_cast<std::uint32_t>(config.l2.line_size.count / config.l2.sector_size.count),
          config.l2.far_reads == FarReads::kCopy && config.l2.partitions > 1);
  const std::uint64_t banks = std::uint64_t{config.hbm.channels} * config.hbm.banks_per_channel;
  const std::uint64_t hbm = banks * (sizeof(std::uint64_t) + sizeof(Tick));
  const std::uint64_t sms = std::uint64_t{config.sm.count} * (sizeof(Sm) + sizeof(SmTime) + 256);
  return l2 + hbm + sms;
}

RunResult Engine::run() {
  RunResult result;
  result.workload = m_source.workload();
  result.config_name = m_config.name;
  result.flush_l2_between_kernels = m_options.flush_l2_between_kernels;
  result.sm_count = m_config.sm.count;
  if (m_timeline != nullptr) {
    m_timeline->begin(m_config.sm.count, m_config.name, result.workload.name);
  }
  Tick now = 0;
  KernelInfo info;
  while (m_source.next_kernel(info)) {
    if (m_options.flush_l2_between_kernels && !result.kernels.empty()) m_memory.flush_l2();
    result.kernels.push_back(run_kernel(info, now));
    now = result.kernels.back().end;
  }
  result.time = now;
  for (const KernelResult& k : result.kernels) {
    result.traffic.add(k.traffic);
    result.stall.add(k.stall);
  }
  result.dram_dirty_bytes_at_end = m_memory.dirty_bytes();
  result.dram_flush_writeback_bytes = m_memory.flush_writeback_bytes();
  result.dram_bytes_by_tensor = m_memory.tensor_traffic();
  result.dram_bytes_by_reason = m_memory.reason_traffic();
  result.events = m_queue.scheduled_count();
  return result;
}

KernelResult Engine::run_kernel(const KernelInfo& info, Tick start) {
  KernelResult k;
  k.name = info.name;
  k.info = info;
  k.start = start;
  const Occupancy occ = occupancy(
      m_config.sm,
      CtaResources{info.smem_bytes_per_cta, info.threads_per_cta, info.registers_per_thread},
      info.name);
  k.ctas_per_sm = occ.ctas_per_sm;
  k.occupancy_limit = to_string(occ.limited_by);
  // Slots per SM: as many as the occupancy allows, but no more than the grid can fill. The first
  // wave places CTAs breadth-first, one per SM per pass, so a grid that fits at once uses
  // ⌈ctas / SMs⌉ slots of each SM and no CTA waits for a slot: placement and timing are those of
  // the full occupancy, without slot arrays sized for CTAs the kernel does not have. What the
  // slots take (the executor's and the scheduler's) counts against --max-memory.
  const std::uint64_t sms = m_config.sm.count;
  const std::uint64_t fill = std::max<std::uint64_t>((info.ctas + sms - 1) / sms, 1);
  const auto slots_per_sm =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(occ.ctas_per_sm, fill));
  const std::uint64_t slots = sms * slots_per_sm;
  if (slots > m_slot_capacity) {
    m_budget.take((slots - m_slot_capacity) * CtaExecutor::kSlotBytes,
                  "the slots of the resident CTAs",
                  "the SMs times the CTAs each holds at once (the occupancy, at most the grid)");
    m_slot_capacity = slots;
  }
  // Each slot keeps its CTA's ops, and a persistent kernel's CTA (one per SM, looping over tiles:
  // --gemm wgmma, flash3) holds its whole loop, which grows with the shape. Half of what is left
  // of --max-memory is theirs for the kernel (taken from the budget, so that the record of
  // fetched sectors grows into the other half only): a CTA with more ops than its share (a vector
  // may hold twice its size) is refused before it is allocated (start_cta says which and why),
  // and op lists an earlier kernel grew past the share are freed. The CTAs resident at once are
  // the slots, or the grid where it has fewer CTAs.
  m_budget.give_back(m_ops_reserved);
  const std::uint64_t left =
      m_budget.limit().count - std::min(m_budget.used_bytes(), m_budget.limit().count);
  m_ops_reserved = left / 2;
  m_budget.take(m_ops_reserved, "the op lists of the resident CTAs", "the kernel's ops per CTA");
  m_kernel_slots = std::max<std::uint64_t>(std::min<std::uint64_t>(slots, info.ctas), 1);
  const std::uint64_t max_ops = cta_op_limit(Bytes{m_ops_reserved / m_kernel_slots});
  m_source.limit_cta_ops(max_ops);
  m_scheduler.begin_kernel(slots_per_sm);
  for (Sm& sm : m_sms) sm.begin_kernel();
  m_executor.begin_kernel(m_scheduler.slot_count(), info.threads_per_cta, k.traffic, 2 * max_ops);
  for (SmTime& s : m_sm_time) s = SmTime{};
  m_kernel = &k;
  m_kernel_end = start + m_config.efficiency.launch_overhead;
  m_next_dispatch = m_kernel_end;
  m_next_index = 0;
  m_exhausted = false;
  m_memory.set_kernel_counters(&k.traffic);
  const std::uint64_t row_misses_before = m_memory.hbm().row_misses();
  m_window_start = start;
  m_window_base = k.traffic;
  m_kernel_joules = 0;
  m_kernel_sm_cycles = 0;
  // The power limiter's windows start with the first CTAs, after the launch overhead (which the
  // first call books at static power, the clock unchanged): a window's phase against the work is
  // then the same whatever the overhead, and a run differs from another of a longer overhead only
  // by that much time (docs/hopper.md, "The wgmma qk is bistable in the model").
  const Tick t0 = m_kernel_end;
  power_window(t0, false);
  m_next_window =
      m_power.limited() ? checked_end(t0, m_config.power.window, "a power window") : kMaxTick;

  // First wave: breadth-first over the SMs, one CTA per SM per pass.
  m_scheduler.first_wave(
      [&](std::uint32_t sm, std::uint32_t slot) { return start_cta(sm, slot, t0); });
  std::uint64_t handled = 0;
  while (!m_queue.empty()) {
    const Event e = m_queue.pop();
    if (e.tick >= m_next_window) power_window(e.tick, true);
    if (e.kind == CtaExecutor::kFinish) {
      cta_done(e.target, e.tick);
    } else if (e.kind == CtaExecutor::kStream) {
      m_executor.stream(e.target, e.tick);
    } else {
      m_executor.step(e.target, e.tick);
    }
    if ((++handled & 0xFFF) == 0) throw_if_interrupted();
  }
  // The kernel lasts until the DRAM traffic counted in it (write-backs of the lines its accesses
  // evicted included) has crossed the channels, so that its DRAM bandwidth never exceeds the peak.
  k.end = std::max(m_kernel_end, m_memory.hbm().busy_until());
  k.traffic.dram_row_misses = m_memory.hbm().row_misses() - row_misses_before;
  power_window(std::max(k.end, m_window_start), false);
  // Both counters are whole numbers of at most 2^63: a config whose energies are absurd for the
  // work (the schema allows 10^6 pJ per unit) could pass that, and is refused rather than wrapped.
  constexpr double kCounterLimit = 9.2e18;
  if (!(m_kernel_joules * 1e12 < kCounterLimit) || !(m_kernel_sm_cycles < kCounterLimit)) {
    throw UsageError("kernel \"" + k.name + "\": its energy by the power model (" +
                     format_si(m_kernel_joules, "J") + ") or its SM cycles are more than the " +
                     "report's counters hold (2^63 pJ, 2^63 cycles): check the power.* energies");
  }
  k.traffic.energy_pj = static_cast<std::uint64_t>(std::llround(m_kernel_joules * 1e12));
  k.traffic.sm_cycles = static_cast<std::uint64_t>(std::llround(m_kernel_sm_cycles));

  // Stall breakdown: each SM's busy time split in proportion to its CTAs' time split.
  const Tick span = k.end - k.start;
  for (std::uint32_t s = 0; s < m_config.sm.count; ++s) {
    const Tick busy = m_sms[s].take_busy_ticks();
    const SmTime& t = m_sm_time[s];
    const TickSum cta_time = t.compute + t.latency + t.bandwidth;
    if (cta_time > 0) {
      const double scale = static_cast<double>(busy) / static_cast<double>(cta_time);
      k.stall.compute += static_cast<double>(t.compute) * scale;
      k.stall.memory_latency += static_cast<double>(t.latency) * scale;
      k.stall.memory_bandwidth += static_cast<double>(t.bandwidth) * scale;
    }
    k.stall.idle += static_cast<double>(span - busy);
  }
  take_resource_use(k);
  if (m_timeline != nullptr) m_timeline->kernel(k.name, k.start, k.end);
  m_kernel = nullptr;
  return k;
}

void Engine::take_resource_use(KernelResult& k) {
  m_memory.take_resource_use(k.resources);
  const std::array<ResourceUse, kPipeCount> pipes = m_executor.take_pipe_use();
  for (std::size_t pipe = 0; pipe < kPipeCount; ++pipe) {
    k.resources[static_cast<std::size_t>(ResourceClass::kTensorPipe) + pipe] = pipes[pipe];
  }
  for (std::uint32_t s = 0; s < m_config.sm.count; ++s) {
    const std::array<Tick, kPipeCount> busy = m_sms[s].take_pipe_busy();
    for (std::size_t pipe = 0; pipe < kPipeCount; ++pipe) {
      ResourceUse& u = k.resources[static_cast<std::size_t>(ResourceClass::kTensorPipe) + pipe];
      if (busy[pipe] > u.busiest_busy) {
        u.busiest_busy = busy[pipe];
        u.busiest = s;
      }
    }
  }
}

void Engine::power_window(Tick t, bool adjust) {
  const TrafficCounters& now = m_kernel->traffic;
  const TrafficCounters& then = m_window_base;
  PowerWork work;
  work.tensor_flops = static_cast<double>(now.tensor_flops - then.tensor_flops);
  work.sfu_ops = static_cast<double>(now.sfu_ops - then.sfu_ops);
  work.fp32_flops = static_cast<double>(now.flops - then.flops) - work.tensor_flops - work.sfu_ops;
  work.smem_bytes = static_cast<double>(now.smem_bytes - then.smem_bytes);
  work.l2_bytes = static_cast<double>(now.l2_read_bytes - then.l2_read_bytes + now.l2_write_bytes -
                                      then.l2_write_bytes);
  work.dram_bytes = static_cast<double>(now.dram_read_bytes - then.dram_read_bytes +
                                        now.dram_write_bytes - then.dram_write_bytes);
  const double span_s = seconds(t - m_window_start);
  m_kernel_joules += m_power.joules(work, span_s, m_clock_scale);
  m_kernel_sm_cycles += span_s * m_config.sm.clock.hertz * m_clock_scale;
  m_window_base = now;
  m_window_start = t;
  if (!adjust) return;
  m_next_window = checked_end(t, m_config.power.window, "a power window");
  const double scale = m_power.next_scale(work, span_s, m_clock_scale);
  if (scale == m_clock_scale) return;
  m_clock_scale = scale;
  for (Sm& sm : m_sms) sm.set_clock_scale(scale);
  m_executor.set_clock_scale(scale);
}

bool Engine::start_cta(std::uint32_t sm, std::uint32_t j, Tick t) {
  if (m_exhausted) return false;
  const std::uint32_t id = m_scheduler.slot_id(sm, j);
  bool more = false;
  try {
    more = m_source.next_cta(m_executor.ops(id));
  } catch (const CtaOpLimitError& e) {
    throw UsageError("kernel " + m_kernel->name + ", CTA " + std::to_string(m_next_index) +
                     ": more than " + std::to_string(e.limit()) + " ops (" +
                     format_bytes(Bytes{e.limit() * sizeof(Op)}) +
                     "), the most each of the kernel's " + std::to_string(m_kernel_slots) +
                     " CTAs resident at once may hold within half of --max-memory " +
                     format_bytes(m_budget.limit()) + ". " + CtaOpLimitError::kAdvice);
  }
  if (!more) {
    m_exhausted = true;
    return false;
  }
  // The chip's CTA dispatcher starts one CTA per sm.cta_launch_interval, in the order asked.
  const Tick at = std::max(t, m_next_dispatch);
  m_next_dispatch = checked_end(at, m_config.sm.cta_launch_interval, "a CTA's launch");
  m_executor.start(id, sm, j, m_next_index++, at);
  return true;
}

void Engine::cta_done(std::uint32_t id, Tick t) {
  const std::uint32_t sm = m_executor.sm_of(id), slot = m_executor.slot_of(id);
  m_sms[sm].remove_cta(t);
  const CtaExecutor::CtaTime& time = m_executor.time_of(id);
  SmTime& st = m_sm_time[sm];
  st.compute += static_cast<TickSum>(time.compute);
  st.latency += static_cast<TickSum>(time.latency);
  st.bandwidth += static_cast<TickSum>(time.bandwidth);
  ++m_kernel->traffic.ctas;
  m_kernel_end = std::max(m_kernel_end, t);
  if (m_timeline != nullptr) {
    m_timeline->cta(sm, slot, m_kernel->name, m_executor.index_of(id), m_executor.start_of(id), t);
  }
  m_scheduler.release(sm, slot);
  if (start_cta(sm, m_scheduler.next_slot(sm), t)) m_scheduler.take_slot(sm);
}

}  // namespace memwall
