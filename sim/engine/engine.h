#pragma once
/// The engine: runs the kernels of a TraceSource on one chip. It owns the deterministic event
/// queue, the SMs (their pipes), the memory path, the CTA scheduler (which slot takes the next
/// CTA) and the CTA executor (which runs each resident CTA's ops: sim/engine/cta_executor.h),
/// and dispatches the queue's events to them. A CTA's slot takes the next CTA of the grid when
/// the executor reports it done. Each SM's busy time is split in proportion to its CTAs' time
/// split (compute, memory latency, memory bandwidth).

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/units.h"
#include "sim/engine/cta_executor.h"
#include "sim/engine/cta_scheduler.h"
#include "sim/engine/memory_path.h"
#include "sim/engine/run_result.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config.h"
#include "sim/hw/power.h"
#include "sim/hw/sm.h"
#include "traces/op.h"
#include "traces/trace_source.h"

namespace memwall {

class TimelineSink;

class Engine final : private CtaExecutor::Host {
 public:
  /// An engine for `config` (validated, sm.count > 0) over `source`; `timeline` may be null.
  Engine(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
         TimelineSink* timeline);

  /// An estimate of the memory the engine's config-sized structures take (L2 tags and masks, HBM
  /// bank state, per-SM state), in bytes; what grows with the trace is counted as it grows.
  static std::uint64_t fixed_memory_bytes(const HardwareConfig& config);

  /// Simulates every kernel of the source, one after the other. Callable once.
  RunResult run();

 private:
  /// Per-SM sums of its CTAs' time split, over the current kernel.
  /// (Sums over the SM's CTAs: 128-bit, as a forged trace's CTAs may each last near the time bound.)
  struct SmTime {
    TickSum compute = 0;
    TickSum latency = 0;
    TickSum bandwidth = 0;
  };

  KernelResult run_kernel(const KernelInfo& info, Tick start);
  /// Pulls the next CTA of the grid into slot `slot` of SM `sm` at `t`; false once the grid is
  /// exhausted (the slot stays free).
  bool start_cta(std::uint32_t sm, std::uint32_t slot, Tick t);
  /// CTA `id` leaves its SM at `t` (its time split added to the SM's); the SM takes the next CTA
  /// of the kernel.
  void cta_done(std::uint32_t id, Tick t) override;
  /// Moves the kernel's use of ports, slices, channels and pipes into `k.resources`.
  void take_resource_use(KernelResult& k);
  /// Closes the power window that ends at `t`: adds its energy and SM cycles to the kernel's,
  /// and when `adjust`, lets the power limiter set the SM clock for the next window.
  void power_window(Tick t, bool adjust);

  const HardwareConfig& m_config;
  TraceSource& m_source;
  SimOptions m_options;
  TimelineSink* m_timeline;
  std::uint64_t m_kernel_slots = 0;  ///< the current kernel's CTAs resident at once, at most
  MemoryBudget m_budget;  ///< options.max_memory, against which the fetched-sector record grows
  MemoryPath m_memory;
  std::vector<Sm> m_sms;
  std::vector<SmTime> m_sm_time;
  CtaScheduler m_scheduler;
  EventQueue m_queue;
  CtaExecutor m_executor;  ///< after the memory path, the SMs and the queue it uses
  KernelResult* m_kernel = nullptr;
  Tick m_kernel_end = 0;
  Tick m_next_dispatch = 0;  ///< when the CTA dispatcher can start the next CTA
  std::uint64_t m_next_index = 0;
  std::uint64_t m_slot_capacity = 0;  ///< slots counted against the memory budget so far
  std::uint64_t m_ops_reserved = 0;  ///< the current kernel's op lists' share of the budget
  bool m_exhausted = false;
  // The power model (sim/hw/power.h): the limiter's clock scale carries from kernel to kernel.
  PowerModel m_power;
  double m_clock_scale = 1.0;  ///< the SM clock over sm.clock, as the limiter last set it
  Tick m_window_start = 0;  ///< where the current power window began
  Tick m_next_window = kMaxTick;  ///< the first event at or after this closes the window
  TrafficCounters m_window_base;  ///< the kernel's counters when the window began
  double m_kernel_joules = 0;  ///< the kernel's energy so far
  double m_kernel_sm_cycles = 0;  ///< its SM cycles so far
};

}  // namespace memwall
