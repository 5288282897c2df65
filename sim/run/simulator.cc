#include "sim/run/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/event_queue.h"
#include "sim/core/interrupt.h"
#include "sim/hw/sm.h"
#include "sim/run/memory_system.h"
#include "sim/run/timeline.h"

namespace memwall {
namespace {

/// Event kinds; also their priority (a finish frees a slot, and memory issue proceeds, before
/// ops execute at the same tick).
constexpr std::uint32_t kFinish = 0;
constexpr std::uint32_t kStream = 1;
constexpr std::uint32_t kStep = 2;

/// How far ahead of the earliest other event a CTA's memory stream may book its SM port. Boxes
/// are issued in chunks so that reservations on shared resources are made roughly in time order.
constexpr Tick kIssueWindow = 100'000;

const char* const kPipeSliceNames[kPipeCount] = {"tensor", "fp32", "sfu", "smem"};

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
  bool is_store = false;
  Tick issue = 0;  ///< when its op issued
  BoxCursor cursor;
  Arrival arrival;
};

/// A resident CTA: its ops, its position in them, its outstanding memory, its time split.
struct CtaSlot {
  std::vector<PendingBox> backlog;  ///< boxes being issued, in op order, from backlog_head
  std::size_t backlog_head = 0;
  bool stream_scheduled = false;    ///< a kStream event will continue the backlog
  bool blocked = false;             ///< waiting for the backlog (at a wait op or at the end)
  bool woken = false;               ///< resumed after being blocked; the op is not re-charged
  Tick block_start = 0;
  std::vector<Op> ops;
  std::size_t pc = 0;
  std::uint32_t sm = 0;
  std::uint32_t slot = 0;  ///< slot index within its SM (timeline track)
  std::uint64_t index = 0; ///< CTA index in the grid
  Tick start = 0;
  Tick drain_ready = 0;    ///< every load and store of the CTA has completed
  Tick drain_unloaded = 0; ///< the same without queueing
  std::vector<TagState> tags;
  Tick compute = 0;        ///< time issuing ops, computing or waiting for a pipe
  /// End of the latest compute or smem op of the current run of them (its warps overlap them
  /// when efficiency.pipe_serial < 1); the next other op waits for it.
  Tick pipes_end = 0;
  Tick latency = 0;        ///< memory waits, unloaded part
  Tick bandwidth = 0;      ///< memory waits, queueing part
};

/// Per-SM sums of its CTAs' time split, over the current kernel.
struct SmTime {
  Tick compute = 0;
  Tick latency = 0;
  Tick bandwidth = 0;
};

/// A wait from `t` until `ready`, of which everything up to `unloaded` is latency.
void account_wait(CtaSlot& c, Tick t, Tick ready, Tick unloaded) {
  if (ready <= t) return;
  const Tick wait = ready - t;
  const Tick lat = std::clamp<Tick>(unloaded - t, 0, wait);
  c.latency += lat;
  c.bandwidth += wait - lat;
}

/// Compute and shared-memory ops run on an SM pipe; the others are memory ops, waits, barriers.
bool is_pipe_op(OpKind kind) { return kind == OpKind::compute || kind == OpKind::smem; }

class Engine {
 public:
  Engine(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
         Timeline* timeline)
      : m_config(config),
        m_source(source),
        m_options(options),
        m_timeline(timeline),
        m_memory(config, source.workload()),
        m_sms(config.sm.count, Sm(config)),
        m_sm_time(config.sm.count),
        m_free_slots(config.sm.count),
        m_op_overhead(config.efficiency.op_overhead),
        m_pipe_serial(config.efficiency.pipe_serial) {}

  RunResult run() {
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

 private:
  KernelResult run_kernel(const KernelInfo& info, Tick start) {
    KernelResult k;
    k.name = info.name;
    k.info = info;
    k.start = start;
    const Occupancy occ = occupancy(
        m_config.sm, CtaResources{info.smem_bytes_per_cta, info.threads_per_cta, info.registers_per_thread},
        info.name);
    k.ctas_per_sm = occ.ctas_per_sm;
    k.occupancy_limit = occ.limited_by;
    m_per_sm = occ.ctas_per_sm;
    m_slots.resize(std::max<std::size_t>(m_slots.size(), std::size_t{m_config.sm.count} * m_per_sm));
    for (std::vector<std::uint32_t>& free : m_free_slots) {
      free.clear();
      for (std::uint32_t j = m_per_sm; j-- > 0;) free.push_back(j);  // lowest slot on top
    }
    for (SmTime& s : m_sm_time) s = SmTime{};
    m_kernel = &k;
    m_kernel_end = start + m_config.efficiency.launch_overhead;
    m_next_index = 0;
    m_exhausted = false;
    m_memory.set_kernel_counters(&k.traffic);

    // First wave: breadth-first over the SMs, one CTA per SM per pass.
    const Tick t0 = m_kernel_end;
    for (bool placed = true; placed && !m_exhausted;) {
      placed = false;
      for (std::uint32_t s = 0; s < m_config.sm.count && !m_exhausted; ++s) {
        if (!m_free_slots[s].empty() && place(s, t0)) placed = true;
      }
    }
    std::uint64_t handled = 0;
    while (!m_queue.empty()) {
      const Event e = m_queue.pop();
      if (e.kind == kFinish) {
        finish(e.target, e.tick);
      } else if (e.kind == kStream) {
        stream(e.target, e.tick);
      } else {
        step(e.target, e.tick);
      }
      if ((++handled & 0xFFF) == 0) throw_if_interrupted();
    }
    // The kernel lasts until the DRAM traffic counted in it (write-backs of the lines its accesses
    // evicted included) has crossed the channels, so that its DRAM bandwidth never exceeds the peak.
    k.end = std::max(m_kernel_end, m_memory.hbm().busy_until());

    // Stall breakdown: each SM's busy time split in proportion to its CTAs' time split.
    const Tick span = k.end - k.start;
    for (std::uint32_t s = 0; s < m_config.sm.count; ++s) {
      const Tick busy = m_sms[s].take_busy_ticks();
      const SmTime& t = m_sm_time[s];
      const Tick cta_time = t.compute + t.latency + t.bandwidth;
      if (cta_time > 0) {
        const double scale = static_cast<double>(busy) / static_cast<double>(cta_time);
        k.stall.compute += static_cast<double>(t.compute) * scale;
        k.stall.memory_latency += static_cast<double>(t.latency) * scale;
        k.stall.memory_bandwidth += static_cast<double>(t.bandwidth) * scale;
      }
      k.stall.idle += static_cast<double>(span - busy);
    }
    if (m_timeline != nullptr) m_timeline->kernel(k.name, k.start, k.end);
    m_kernel = nullptr;
    return k;
  }

  /// Pulls the next CTA onto SM `sm` at `t`; false once the kernel has no more.
  bool place(std::uint32_t sm, Tick t) {
    if (m_exhausted) return false;
    const std::uint32_t j = m_free_slots[sm].back();
    CtaSlot& c = m_slots[std::size_t{sm} * m_per_sm + j];
    if (!m_source.next_cta(c.ops)) {
      m_exhausted = true;
      return false;
    }
    m_free_slots[sm].pop_back();
    c.pc = 0;
    c.sm = sm;
    c.slot = j;
    c.index = m_next_index++;
    c.start = t;
    c.drain_ready = t;
    c.drain_unloaded = t;
    c.tags.clear();
    c.backlog.clear();
    c.backlog_head = 0;
    c.stream_scheduled = c.blocked = c.woken = false;
    c.compute = c.latency = c.bandwidth = 0;
    c.pipes_end = 0;
    m_sms[sm].add_cta(t);
    m_queue.schedule(t, kStep, sm * m_per_sm + j, kStep);
    return true;
  }

  TagState& tag_state(CtaSlot& c, std::uint16_t tag, Tick t) {
    for (TagState& s : c.tags) {
      if (s.tag == tag) return s;
    }
    c.tags.push_back(TagState{tag, t, t});
    return c.tags.back();
  }

  bool has_pending_tag(const CtaSlot& c, std::uint16_t tag) const {
    for (std::size_t i = c.backlog_head; i < c.backlog.size(); ++i) {
      if (!c.backlog[i].is_store && c.backlog[i].tag == tag) return true;
    }
    return false;
  }

  /// Issues CTA `id`'s backlog of boxes at `t` until done or the port is booked past the window;
  /// wakes the CTA if it was blocked on the backlog.
  void stream(std::uint32_t id, Tick t) {
    CtaSlot& c = m_slots[id];
    c.stream_scheduled = false;
    const Tick limit = m_queue.empty() ? std::numeric_limits<Tick>::max() / 2
                                       : std::max(t, m_queue.top().tick) + kIssueWindow;
    while (c.backlog_head < c.backlog.size()) {
      PendingBox& p = c.backlog[c.backlog_head];
      if (!m_memory.issue(c.sm, p.box, p.is_store, std::max(t, p.issue), p.issue, limit, p.cursor,
                          p.arrival)) {
        c.stream_scheduled = true;
        m_queue.schedule(std::max(t, m_memory.port_free(c.sm, p.is_store)), kStream, id, kStream);
        return;
      }
      if (!p.is_store) {
        TagState& s = tag_state(c, p.tag, p.issue);
        s.ready = std::max(s.ready, p.arrival.ready);
        s.unloaded = std::max(s.unloaded, p.arrival.unloaded);
      }
      c.drain_ready = std::max(c.drain_ready, p.arrival.ready);
      c.drain_unloaded = std::max(c.drain_unloaded, p.arrival.unloaded);
      ++c.backlog_head;
    }
    c.backlog.clear();
    c.backlog_head = 0;
    if (c.blocked) {
      c.blocked = false;
      c.woken = true;
      step(id, t);
    }
  }

  /// Executes CTA `id`'s ops from `t` for as long as no other event comes first.
  void step(std::uint32_t id, Tick t) {
    CtaSlot& c = m_slots[id];
    Sm& sm = m_sms[c.sm];
    const bool detail = m_timeline != nullptr && m_timeline->detail();
    while (true) {
      if (c.pc == c.ops.size() || !is_pipe_op(c.ops[c.pc].kind)) {
        // Memory ops, waits, barriers and the end of the CTA come after its pipes are done.
        if (c.pipes_end > t) {
          c.compute += c.pipes_end - t;
          t = c.pipes_end;
        }
        c.pipes_end = 0;
      }
      if (c.pc == c.ops.size()) {
        if (c.backlog_head < c.backlog.size()) {
          c.blocked = true;
          c.block_start = t;
          return;
        }
        const Tick from = c.woken ? c.block_start : t;
        c.woken = false;
        const Tick end = std::max(t, c.drain_ready);
        account_wait(c, from, end, c.drain_unloaded);
        if (end > t) {
          if (detail) m_timeline->slice(c.sm, c.slot, "drain", from, end, "");
          m_queue.schedule(end, kFinish, id, kFinish);
        } else {
          finish(id, t);
        }
        return;
      }
      const Op& op = c.ops[c.pc];
      Tick issue = t;
      if (!c.woken) {
        issue = t + m_op_overhead;
        c.compute += m_op_overhead;
      }
      Tick next = issue;
      switch (op.kind) {
        case OpKind::load:
        case OpKind::store: {
          ++c.pc;
          PendingBox p;
          p.box = op.box;
          p.tag = op.tag;
          p.is_store = op.kind == OpKind::store;
          p.issue = issue;
          p.arrival = Arrival{issue, issue};
          c.backlog.push_back(p);
          if (detail) {
            m_timeline->instant(c.sm, c.slot, p.is_store ? "store" : "load", issue,
                                "\"bytes\":" + std::to_string(op.box.bytes()) + ",\"tag\":" +
                                    std::to_string(op.tag));
          }
          if (!c.stream_scheduled) stream(id, issue);
          break;
        }
        case OpKind::wait: {
          if (has_pending_tag(c, op.tag)) {
            c.blocked = true;
            c.block_start = issue;
            return;
          }
          ++c.pc;
          const Tick from = c.woken ? c.block_start : issue;
          c.woken = false;
          const TagState& s = tag_state(c, op.tag, issue);
          account_wait(c, from, std::max(issue, s.ready), s.unloaded);
          if (s.ready > issue) next = s.ready;
          if (detail && next > from) {
            m_timeline->slice(c.sm, c.slot, "wait", from, next, "\"tag\":" + std::to_string(op.tag));
          }
          break;
        }
        case OpKind::compute:
        case OpKind::smem: {
          ++c.pc;
          const std::size_t pipe =
              op.kind == OpKind::smem ? kSmemPipe : static_cast<std::size_t>(op.unit);
          if (pipe >= kPipeCount) throw UsageError("trace: unknown compute unit");
          if (op.kind == OpKind::smem) {
            m_kernel->traffic.smem_bytes += op.amount;
          } else {
            m_kernel->traffic.flops += op.amount;
          }
          const Tick d = sm.pipe_ticks(pipe, op.amount);
          const Tick begin = sm.reserve_pipe(pipe, issue, d);
          c.pipes_end = std::max(c.pipes_end, begin + d);
          // The CTA's next op waits for pipe_serial of this one (all of it at 1).
          next = m_pipe_serial >= 1.0 ? begin + d
                                      : begin + static_cast<Tick>(std::llround(static_cast<double>(d) * m_pipe_serial));
          c.compute += next - issue;
          if (detail && d > 0) m_timeline->slice(c.sm, c.slot, kPipeSliceNames[pipe], begin, begin + d, "");
          break;
        }
        case OpKind::barrier:
          ++c.pc;
          break;
      }
      c.woken = false;
      t = next;
      if (!m_queue.empty() && m_queue.top().tick < t) {
        m_queue.schedule(t, kStep, id, kStep);
        return;
      }
    }
  }

  /// CTA `id` leaves its SM at `t`; the SM takes the next CTA of the kernel.
  void finish(std::uint32_t id, Tick t) {
    CtaSlot& c = m_slots[id];
    m_sms[c.sm].remove_cta(t);
    SmTime& st = m_sm_time[c.sm];
    st.compute += c.compute;
    st.latency += c.latency;
    st.bandwidth += c.bandwidth;
    ++m_kernel->traffic.ctas;
    m_kernel_end = std::max(m_kernel_end, t);
    if (m_timeline != nullptr) m_timeline->cta(c.sm, c.slot, m_kernel->name, c.index, c.start, t);
    m_free_slots[c.sm].push_back(c.slot);
    place(c.sm, t);
  }

  const HardwareConfig& m_config;
  TraceSource& m_source;
  SimOptions m_options;
  Timeline* m_timeline;
  MemorySystem m_memory;
  std::vector<Sm> m_sms;
  std::vector<SmTime> m_sm_time;
  std::vector<std::vector<std::uint32_t>> m_free_slots;  ///< per SM, a stack of free slot indices
  std::vector<CtaSlot> m_slots;                          ///< [sm · per_sm + slot]
  EventQueue m_queue;
  Tick m_op_overhead;
  double m_pipe_serial;  ///< efficiency.pipe_serial
  std::uint32_t m_per_sm = 0;
  KernelResult* m_kernel = nullptr;
  Tick m_kernel_end = 0;
  std::uint64_t m_next_index = 0;
  bool m_exhausted = false;
};

}  // namespace

RunResult simulate(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
                   Timeline* timeline) {
  if (config.sm.count == 0) throw UsageError("config: sm.count must be > 0");
  Engine engine(config, source, options, timeline);
  return engine.run();
}

}  // namespace memwall
