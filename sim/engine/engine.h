#pragma once
/// The engine: runs the kernels of a TraceSource on one chip. It owns the deterministic event
/// queue, the SMs (their pipes), the memory path and the CTA scheduler, and executes each
/// resident CTA's ops:
///   - load/store: the box joins the CTA's backlog, whose lines are issued through the SM port in
///     chunks (at most sim.issue_window ahead of the earliest other event, so reservations on
///     shared resources are made roughly in time order); the CTA goes on;
///   - wait(tag): blocks until every load issued under the tag has arrived;
///   - compute/smem: books the op's pipe; the CTA's next op waits for efficiency.pipe_serial of it;
///   - barrier: orders the op stream (the trace already holds each warp's share).
/// A CTA ends when its ops are done and its last store is accepted; its slot takes the next CTA.
/// The time of every CTA is split into compute, memory latency (what the wait would be with no
/// queueing) and memory bandwidth (the rest), and each SM's busy time is split in proportion.

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/units.h"
#include "sim/engine/cta_scheduler.h"
#include "sim/engine/memory_path.h"
#include "sim/engine/run_result.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config.h"
#include "sim/hw/sm.h"
#include "traces/op.h"
#include "traces/trace_source.h"

namespace memwall {

class TimelineSink;

class Engine {
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
  /// Loads issued under one tag: when they have all arrived, and when they would have unloaded.
  struct TagState {
    std::uint16_t tag = 0;
    Tick ready = 0;
    Tick unloaded = 0;
  };

  /// A load or store whose lines are still being issued through the SM port.
  struct PendingBox {
    Box box;
    std::uint16_t tag = 0;
    OpKind kind = OpKind::load;  ///< load, store or reduce
    bool is_store = false;  ///< a store or a reduction: untagged, only the drain waits for it
    Tick issue = 0;  ///< when its op issued
    BoxCursor cursor;
    Arrival arrival;
    /// Whether a wait on its tag waits for it: every load, and a store with a nonzero tag.
    bool tracked() const { return !is_store || tag != 0; }
  };

  /// A resident CTA: its ops, its position in them, its outstanding memory, its time split.
  struct CtaSlot {
    std::vector<PendingBox> backlog;  ///< boxes being issued, in op order, from backlog_head
    std::size_t backlog_head = 0;
    bool stream_scheduled = false;  ///< a kStream event will continue the backlog
    bool blocked = false;  ///< waiting for the backlog (at a wait op or at the end)
    bool woken = false;  ///< resumed after being blocked; the op is not re-charged
    Tick block_start = 0;
    std::vector<Op> ops;
    std::size_t pc = 0;
    std::uint32_t sm = 0;
    std::uint32_t slot = 0;  ///< slot index within its SM (timeline track)
    std::uint64_t index = 0;  ///< CTA index in the grid
    Tick start = 0;
    Tick drain_ready = 0;  ///< every load and store of the CTA has completed
    Tick drain_unloaded = 0;  ///< the same without queueing
    std::vector<TagState> tags;
    Tick compute = 0;  ///< time issuing ops, computing or waiting for a pipe
    /// End of the latest compute or smem op of the current run of them (its warps overlap them
    /// when efficiency.pipe_serial < 1); the next other op waits for it.
    Tick pipes_end = 0;
    Tick latency = 0;  ///< memory waits, unloaded part
    Tick bandwidth = 0;  ///< memory waits, queueing part
  };

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
  TagState& tag_state(CtaSlot& c, std::uint16_t tag, Tick t);
  bool has_pending_tag(const CtaSlot& c, std::uint16_t tag) const;
  /// Issues CTA `id`'s backlog of boxes at `t` until done or the port is booked past the window;
  /// wakes the CTA if it was blocked on the backlog.
  void stream(std::uint32_t id, Tick t);
  /// Executes CTA `id`'s ops from `t` for as long as no other event comes first.
  void step(std::uint32_t id, Tick t);
  /// CTA `id` leaves its SM at `t`; the SM takes the next CTA of the kernel.
  void finish(std::uint32_t id, Tick t);
  /// Moves the kernel's use of ports, slices, channels and pipes into `k.resources`.
  void take_resource_use(KernelResult& k);

  const HardwareConfig& m_config;
  TraceSource& m_source;
  SimOptions m_options;
  TimelineSink* m_timeline;
  MemoryBudget m_budget;  ///< options.max_memory, against which the fetched-sector record grows
  MemoryPath m_memory;
  std::vector<Sm> m_sms;
  std::vector<SmTime> m_sm_time;
  CtaScheduler m_scheduler;
  std::vector<CtaSlot> m_slots;  ///< by CtaScheduler::slot_id
  EventQueue m_queue;
  Tick m_op_overhead;
  Tick m_issue_window;  ///< sim.issue_window
  double m_pipe_serial;  ///< efficiency.pipe_serial
  std::array<ResourceUse, kPipeCount> m_pipe_use{};  ///< the kernel's pipe requests and waits
  KernelResult* m_kernel = nullptr;
  Tick m_kernel_end = 0;
  std::uint64_t m_next_index = 0;
  bool m_exhausted = false;
};

}  // namespace memwall
