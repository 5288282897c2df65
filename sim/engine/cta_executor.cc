#include "sim/engine/cta_executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/engine/timeline_sink.h"

namespace memwall {
namespace {

const char* const kPipeSliceNames[kPipeCount] = {"tensor", "fp32", "sfu", "smem", "issue"};

/// A wait from `t` until `ready`, of which everything up to `unloaded` is latency; adds its parts
/// to the CTA's `c.time`.
template <class Cta>
void account_wait(Cta& c, Tick t, Tick ready, Tick unloaded) {
  if (ready <= t) return;
  const Tick wait = ready - t;
  const Tick lat = std::clamp<Tick>(unloaded - t, 0, wait);
  c.time.latency += lat;
  c.time.bandwidth += wait - lat;
}

/// The SM pipe a compute or smem op books (the trace's units and the SM's pipes are numbered
/// independently). Throws UsageError for a unit no pipe serves.
std::size_t pipe_of(const Op& op) {
  if (op.kind == OpKind::smem) return kSmemPipe;
  switch (op.unit) {
    case ComputeUnit::tensor: return kTensorPipe;
    case ComputeUnit::fp32: return kFp32Pipe;
    case ComputeUnit::sfu: return kSfuPipe;
    case ComputeUnit::issue: return kIssuePipe;
    case ComputeUnit::mma_sync: return kTensorPipe;
    case ComputeUnit::latency: break;  // no pipe: the caller books it
  }
  throw UsageError("trace: unknown compute unit " + std::to_string(static_cast<unsigned>(op.unit)));
}

/// Compute and shared-memory ops run on an SM pipe; the others are memory ops, waits, barriers.
bool is_pipe_op(OpKind kind) { return kind == OpKind::compute || kind == OpKind::smem; }

}  // namespace

CtaExecutor::CtaExecutor(const HardwareConfig& config, MemoryPath& memory, std::vector<Sm>& sms,
                         EventQueue& queue, TimelineSink* timeline, Host& host)
    : m_memory(memory),
      m_sms(sms),
      m_queue(queue),
      m_timeline(timeline),
      m_host(host),
      m_op_overhead(config.efficiency.op_overhead),
      m_issue_window(config.sim.issue_window),
      m_pipe_serial(config.efficiency.pipe_serial),
      m_sm_clock(config.sm.clock),
      m_full_sm_clock(config.sm.clock),
      m_warp_load_bytes_per_s(config.sm.warp_load_bandwidth.bytes_per_second),
      m_issue_per_cycle(config.sm.issue_per_cycle),
      m_port_bytes_per_s(config.xbar.port_bandwidth.bytes_per_second) {}

void CtaExecutor::begin_kernel(std::size_t slots, std::uint32_t threads_per_cta,
                               TrafficCounters& counters, std::uint64_t max_op_capacity) {
  m_slots.resize(std::max(m_slots.size(), slots));
  for (std::size_t id = 0; id < m_slots.size(); ++id) {
    std::vector<Op>& ops = m_slots[id].ops;
    if (id >= slots || ops.capacity() > max_op_capacity) std::vector<Op>().swap(ops);
  }
  m_counters = &counters;
  m_warp_path_ps_per_byte = 0;
  if (m_warp_load_bytes_per_s > 0) {
    const double warps = std::ceil(static_cast<double>(threads_per_cta) / 32);
    const double cta_rate =
        std::min(std::max(warps, 1.0), m_issue_per_cycle) * m_warp_load_bytes_per_s;
    if (cta_rate < m_port_bytes_per_s) {
      m_warp_path_ps_per_byte = 1e12 / cta_rate - 1e12 / m_port_bytes_per_s;
    }
  }
}

void CtaExecutor::start(std::uint32_t id, std::uint32_t sm, std::uint32_t slot, std::uint64_t index,
                        Tick t) {
  CtaSlot& c = m_slots[id];
  c.pc = 0;
  c.sm = sm;
  c.slot = slot;
  c.index = index;
  c.start = t;
  c.drain_ready = t;
  c.drain_unloaded = t;
  c.tags.clear();
  c.backlog.clear();
  c.backlog_head = 0;
  c.stream_scheduled = c.blocked = c.woken = false;
  c.time = CtaTime{};
  c.pipes_end = 0;
  c.async_end = 0;
  m_sms[sm].add_cta(t);
  m_queue.schedule(t, kStep, id, kStep);
}

const std::size_t CtaExecutor::kSlotBytes = sizeof(CtaExecutor::CtaSlot) + sizeof(std::uint32_t);

std::array<ResourceUse, kPipeCount> CtaExecutor::take_pipe_use() {
  const std::array<ResourceUse, kPipeCount> use = m_pipe_use;
  m_pipe_use = {};
  return use;
}

CtaExecutor::TagState& CtaExecutor::tag_state(CtaSlot& c, std::uint16_t tag, Tick t) {
  for (TagState& s : c.tags) {
    if (s.tag == tag) return s;
  }
  c.tags.push_back(TagState{tag, t, t});
  return c.tags.back();
}

void CtaExecutor::note_async_end(CtaSlot& c, std::uint16_t tag, Tick issue, Tick end) {
  TagState& s = tag_state(c, tag, issue);
  s.compute_end = std::max(s.compute_end, end);
  c.async_end = std::max(c.async_end, end);
}

bool CtaExecutor::has_pending_tag(const CtaSlot& c, std::uint16_t tag) const {
  for (std::size_t i = c.backlog_head; i < c.backlog.size(); ++i) {
    if (c.backlog[i].tag == tag && c.backlog[i].tracked()) return true;
  }
  return false;
}

void CtaExecutor::stream(std::uint32_t id, Tick t) {
  CtaSlot& c = m_slots[id];
  c.stream_scheduled = false;
  const Tick limit = m_queue.empty() ? std::numeric_limits<Tick>::max() / 2
                                     : std::max(t, m_queue.top().tick) + m_issue_window;
  while (c.backlog_head < c.backlog.size()) {
    PendingBox& p = c.backlog[c.backlog_head];
    if (!m_memory.issue(c.sm, p.box, p.kind, std::max(t, p.issue), p.issue, limit, p.cursor,
                        p.arrival)) {
      c.stream_scheduled = true;
      m_queue.schedule(std::max(t, m_memory.port_free(c.sm, p.is_store)), kStream, id, kStream);
      return;
    }
    if (p.kind == OpKind::load && m_warp_path_ps_per_byte > 0) {
      // The CTA's warps move the box slower than its SM's port: it arrives the difference later
      // than the port's pace put its last line (latency: no other CTA's traffic causes it).
      const double bytes = static_cast<double>(p.box.rows) * static_cast<double>(p.box.row_bytes);
      const double ps = std::ceil(bytes * m_warp_path_ps_per_byte);
      const Tick extra = ps < static_cast<double>(kMaxTick) ? static_cast<Tick>(ps) : kMaxTick;
      const Tick floor = checked_end(p.arrival.unloaded, extra, "a CTA's warps' loads");
      p.arrival.unloaded = floor;
      p.arrival.ready = std::max(p.arrival.ready, floor);
    }
    if (p.tracked()) {
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

void CtaExecutor::step(std::uint32_t id, Tick t) {
  CtaSlot& c = m_slots[id];
  Sm& sm = m_sms[c.sm];
  // Past the timeline's budget an op-level event is only counted (the sink says how many).
  const bool detail = m_timeline != nullptr && m_timeline->detail();
  const bool dropping = m_timeline != nullptr && !detail;
  while (true) {
    if (c.pc == c.ops.size() || !is_pipe_op(c.ops[c.pc].kind)) {
      // Memory ops, waits, barriers and the end of the CTA come after its pipes are done.
      if (c.pipes_end > t) {
        c.time.compute += c.pipes_end - t;
        t = c.pipes_end;
      }
      c.pipes_end = 0;
    }
    if (c.pc == c.ops.size() && c.async_end > t) {
      // The CTA ends once its asynchronous compute has.
      c.time.compute += c.async_end - t;
      t = c.async_end;
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
        if (dropping) m_timeline->drop_detail(from);
        m_queue.schedule(end, kFinish, id, kFinish);
      } else {
        m_host.cta_done(id, t);
      }
      return;
    }
    const Op& op = c.ops[c.pc];
    Tick issue = t;
    if (!c.woken) {
      issue = t + m_op_overhead;
      c.time.compute += m_op_overhead;
    }
    Tick next = issue;
    switch (op.kind) {
      case OpKind::load:
      case OpKind::store:
      case OpKind::reduce: {
        ++c.pc;
        PendingBox p;
        p.box = op.box;
        p.tag = op.tag;
        p.kind = op.kind;
        p.is_store = writes_global(op.kind);
        p.issue = issue;
        p.arrival = Arrival{issue, issue};
        c.backlog.push_back(p);
        if (detail) {
          m_timeline->instant(
              c.sm, c.slot,
              op.kind == OpKind::load    ? "load"
              : op.kind == OpKind::store ? "store"
                                         : "reduce",
              issue,
              "\"bytes\":" + std::to_string(op.box.bytes()) + ",\"tag\":" + std::to_string(op.tag));
        }
        if (dropping) m_timeline->drop_detail(issue);
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
        if (s.compute_end > next) {  // asynchronous compute under the tag: its time is compute
          c.time.compute += s.compute_end - next;
          next = s.compute_end;
        }
        if (detail && next > from) {
          m_timeline->slice(c.sm, c.slot, "wait", from, next, "\"tag\":" + std::to_string(op.tag));
        }
        if (dropping && next > from) m_timeline->drop_detail(from);
        break;
      }
      case OpKind::compute:
      case OpKind::smem: {
        ++c.pc;
        if (op.kind == OpKind::compute && op.unit == ComputeUnit::latency) {
          // A warpgroup's dependent-issue time: the cycles pass on no shared pipe, at the SM's
          // clock (the tensor clock after its tensor work, with sm.tensor_clock_scope = sm).
          const Tick d =
              m_sm_clock.cycles_to_ticks(static_cast<double>(op.amount) * sm.cycle_stretch());
          const Tick end = checked_end(issue, d, "a latency op");
          if (op.tag != 0) {
            note_async_end(c, op.tag, issue, end);
          } else {
            next = end;
            c.time.compute += d;
          }
          break;
        }
        const std::size_t pipe = pipe_of(op);
        if (op.kind == OpKind::smem) {
          m_counters->smem_bytes += op.amount;
        } else if (pipe == kIssuePipe) {
          m_counters->warp_instructions += op.amount;
        } else {
          m_counters->flops += op.amount;
          if (pipe == kTensorPipe) {
            m_counters->tensor_flops += op.amount;
          } else if (pipe == kSfuPipe) {
            m_counters->sfu_ops += op.amount;
          }
        }
        const bool mma_sync = op.kind == OpKind::compute && op.unit == ComputeUnit::mma_sync;
        if (pipe == kTensorPipe) sm.tensor_work();
        const Tick d = sm.pipe_ticks(mma_sync ? kMmaSyncRate : pipe, op.amount);
        const Tick begin = sm.reserve_pipe(pipe, issue, d);
        ResourceUse& use = m_pipe_use[pipe];
        ++use.requests;
        use.queue += static_cast<TickSum>(begin - issue);
        if (op.tag != 0) {
          // Asynchronous (wgmma.mma_async; shared-memory traffic that other warps' work hides):
          // the pipe is booked, the CTA goes on; a wait on the tag, and the CTA's end, wait for it.
          const Tick end = checked_end(begin, d, "an asynchronous compute op");
          note_async_end(c, op.tag, issue, end);
          if (detail && d > 0)
            m_timeline->slice(c.sm, c.slot, kPipeSliceNames[pipe], begin, end, "");
          if (dropping && d > 0) m_timeline->drop_detail(begin);
          break;
        }
        c.pipes_end = std::max(c.pipes_end, begin + d);
        // The CTA's next op waits for pipe_serial of this one (all of it at 1).
        next =
            m_pipe_serial >= 1.0
                ? begin + d
                : begin + static_cast<Tick>(std::llround(static_cast<double>(d) * m_pipe_serial));
        c.time.compute += next - issue;
        if (detail && d > 0)
          m_timeline->slice(c.sm, c.slot, kPipeSliceNames[pipe], begin, begin + d, "");
        if (dropping && d > 0) m_timeline->drop_detail(begin);
        break;
      }
      case OpKind::barrier: ++c.pc; break;
    }
    c.woken = false;
    t = next;
    if (!m_queue.empty() && m_queue.top().tick < t) {
      m_queue.schedule(t, kStep, id, kStep);
      return;
    }
  }
}

}  // namespace memwall
