#pragma once
/// The CTA executor: runs the ops of the resident CTAs, one slot each, on the SMs' pipes and the
/// memory path, scheduling its own continuations in the engine's event queue:
///   - load/store/reduce: the box joins the CTA's backlog, whose lines are issued through the SM
///     port in chunks (at most sim.issue_window ahead of the earliest other event, so that
///     reservations on shared resources are made roughly in time order); the CTA goes on;
///   - wait(tag): blocks until every load (and tagged store) issued under the tag has arrived;
///   - compute/smem: books the op's pipe; the CTA's next op waits for efficiency.pipe_serial of it;
///   - barrier: orders the op stream (the trace already holds each warp's share).
/// A CTA is done when its ops are done and its last store is accepted; its host (the engine)
/// then frees the slot. Each CTA's time is split into compute, memory latency (what its waits
/// would be with no queueing) and memory bandwidth (the rest).

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/units.h"
#include "sim/engine/memory_path.h"
#include "sim/engine/run_result.h"
#include "sim/hw/config.h"
#include "sim/hw/sm.h"
#include "traces/op.h"

namespace memwall {

class TimelineSink;

class CtaExecutor {
 public:
  /// Event kinds the executor schedules, which the engine's event loop hands back to it (kStream,
  /// kStep) or to its host (kFinish); also their priority at one tick: a finish frees a slot,
  /// and memory issue proceeds, before ops execute.
  static constexpr std::uint32_t kFinish = 0;
  static constexpr std::uint32_t kStream = 1;
  static constexpr std::uint32_t kStep = 2;

  /// Who is told when a CTA is done.
  class Host {
   public:
    /// The CTA in slot `id` is done at `t` (its ops executed, its last store accepted).
    virtual void cta_done(std::uint32_t id, Tick t) = 0;

   protected:
    ~Host() = default;
  };

  /// A CTA's time, split as the engine's stall breakdown takes it.
  struct CtaTime {
    Tick compute = 0;  ///< issuing ops, computing or waiting for a pipe
    Tick latency = 0;  ///< memory waits, unloaded part
    Tick bandwidth = 0;  ///< memory waits, queueing part
  };

  /// An executor over `sms` (one Sm per config SM) and `memory`, scheduling in `queue`;
  /// `timeline` may be null. All must outlive it.
  CtaExecutor(const HardwareConfig& config, MemoryPath& memory, std::vector<Sm>& sms,
              EventQueue& queue, TimelineSink* timeline, Host& host);

  /// Starts a kernel of `slots` slots (CtaScheduler::slot_count) and CTAs of `threads_per_cta`
  /// threads, whose counters (FLOPs, warp instructions, shared-memory bytes) go to `counters`.
  /// Frees the op lists of slots the kernel does not use and those holding room for more than
  /// `max_op_capacity` ops (grown by an earlier kernel's longer CTAs).
  void begin_kernel(std::size_t slots, std::uint32_t threads_per_cta, TrafficCounters& counters,
                    std::uint64_t max_op_capacity);
  /// Latency ops count their cycles at `scale` × sm.clock from now on (the power limiter's clock;
  /// the SMs' pipes are set by Sm::set_clock_scale).
  void set_clock_scale(double scale) { m_sm_clock = Frequency{m_full_sm_clock.hertz * scale}; }

  /// The op list of slot `id`, for the caller to fill before start().
  std::vector<Op>& ops(std::uint32_t id) { return m_slots[id].ops; }
  /// Starts the CTA of grid index `index`, whose ops are in ops(id), in slot `slot` of SM `sm`
  /// (slot `id` overall) at `t`: its first step is scheduled at `t`.
  void start(std::uint32_t id, std::uint32_t sm, std::uint32_t slot, std::uint64_t index, Tick t);
  /// Issues CTA `id`'s backlog of boxes at `t` until done or the port is booked past the window;
  /// wakes the CTA if it was blocked on the backlog. (The kStream event.)
  void stream(std::uint32_t id, Tick t);
  /// Executes CTA `id`'s ops from `t` for as long as no other event comes first. (The kStep
  /// event.)
  void step(std::uint32_t id, Tick t);

  /// Slot `id`'s CTA: its SM, slot within the SM, grid index, start and time split.
  std::uint32_t sm_of(std::uint32_t id) const { return m_slots[id].sm; }
  std::uint32_t slot_of(std::uint32_t id) const { return m_slots[id].slot; }
  std::uint64_t index_of(std::uint32_t id) const { return m_slots[id].index; }
  Tick start_of(std::uint32_t id) const { return m_slots[id].start; }
  const CtaTime& time_of(std::uint32_t id) const { return m_slots[id].time; }

  /// The pipes' requests and queueing since the last call (the kernel's), by pipe.
  std::array<ResourceUse, kPipeCount> take_pipe_use();

  /// Host memory of one slot before its CTA's ops (its CtaSlot and the scheduler's entry).
  static const std::size_t kSlotBytes;

 private:
  /// Loads issued under one tag: when they have all arrived, and when they would have unloaded;
  /// and when the asynchronous compute ops issued under it end.
  struct TagState {
    std::uint16_t tag = 0;
    Tick ready = 0;
    Tick unloaded = 0;
    Tick compute_end = 0;
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
    /// End of the latest compute or smem op of the current run of them (its warps overlap them
    /// when efficiency.pipe_serial < 1); the next other op waits for it.
    Tick pipes_end = 0;
    /// End of the latest asynchronous compute op: the CTA ends no earlier.
    Tick async_end = 0;
    CtaTime time;
  };

  TagState& tag_state(CtaSlot& c, std::uint16_t tag, Tick t);
  bool has_pending_tag(const CtaSlot& c, std::uint16_t tag) const;
  /// An asynchronous compute op issued at `issue` under `tag` ends at `end`: waits on the tag and
  /// the CTA's end wait for it.
  void note_async_end(CtaSlot& c, std::uint16_t tag, Tick issue, Tick end);

  MemoryPath& m_memory;
  std::vector<Sm>& m_sms;
  EventQueue& m_queue;
  TimelineSink* m_timeline;
  Host& m_host;
  std::vector<CtaSlot> m_slots;  ///< by CtaScheduler::slot_id
  TrafficCounters* m_counters = nullptr;
  Tick m_op_overhead;
  Tick m_issue_window;  ///< sim.issue_window
  double m_pipe_serial;  ///< efficiency.pipe_serial
  Frequency m_sm_clock;  ///< the SM clock now (sm.clock × the power limiter's scale): latency ops
  Frequency m_full_sm_clock;  ///< sm.clock
  double m_warp_load_bytes_per_s;  ///< sm.warp_load_bandwidth
  double m_issue_per_cycle;  ///< sm.issue_per_cycle: the SM's sub-partitions
  double m_port_bytes_per_s;  ///< xbar.port_bandwidth
  /// Picoseconds per byte a load box of this kernel's CTAs spends beyond the port's: 1 / (the
  /// CTA's warp-path rate) − 1 / port, > 0 only when the warps cannot fill the port.
  double m_warp_path_ps_per_byte = 0;
  std::array<ResourceUse, kPipeCount> m_pipe_use{};  ///< the kernel's pipe requests and waits
};

}  // namespace memwall
