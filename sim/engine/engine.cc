#include "sim/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/engine/timeline_sink.h"
#include "sim/hw/config_loader.h"

namespace memwall {
namespace {

/// Event kinds; also their priority (a finish frees a slot, and memory issue proceeds, before
/// ops execute at the same tick).
constexpr std::uint32_t kFinish = 0;
constexpr std::uint32_t kStream = 1;
constexpr std::uint32_t kStep = 2;

const char* const kPipeSliceNames[kPipeCount] = {"tensor", "fp32", "sfu", "smem", "issue"};

/// A wait from `t` until `ready`, of which everything up to `unloaded` is latency; adds its parts
/// to the CTA's `c.latency` and `c.bandwidth`.
template <class Cta>
void account_wait(Cta& c, Tick t, Tick ready, Tick unloaded) {
  if (ready <= t) return;
  const Tick wait = ready - t;
  const Tick lat = std::clamp<Tick>(unloaded - t, 0, wait);
  c.latency += lat;
  c.bandwidth += wait - lat;
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
  }
  throw UsageError("trace: unknown compute unit " + std::to_string(static_cast<unsigned>(op.unit)));
}

/// Compute and shared-memory ops run on an SM pipe; the others are memory ops, waits, barriers.
bool is_pipe_op(OpKind kind) { return kind == OpKind::compute || kind == OpKind::smem; }

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
      m_op_overhead(config.efficiency.op_overhead),
      m_issue_window(config.sim.issue_window),
      m_pipe_serial(config.efficiency.pipe_serial) {
  m_budget.take(fixed_memory_bytes(config), "the model of the chip");
  m_memory.set_memory_budget(&m_budget);
}

std::uint64_t Engine::fixed_memory_bytes(const HardwareConfig& config) {
  // Each figure is at most about 2^50 (the schema bounds every count), so the sum cannot wrap.
  const DerivedConfig d = derive(config);
  const std::uint64_t l2_sets = d.l2_usable_sets_per_slice * config.l2.slices;
  const std::uint64_t l2 =
      l2_sets * config.l2.ways *
      L2::way_bytes(l2_sets, static_cast<std::uint32_t>(config.l2.line_size.count /
                                                        config.l2.sector_size.count));
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
  m_scheduler.begin_kernel(occ.ctas_per_sm);
  m_slots.resize(std::max(m_slots.size(), m_scheduler.slot_count()));
  for (SmTime& s : m_sm_time) s = SmTime{};
  m_kernel = &k;
  m_kernel_end = start + m_config.efficiency.launch_overhead;
  m_next_index = 0;
  m_exhausted = false;
  m_memory.set_kernel_counters(&k.traffic);

  // First wave: breadth-first over the SMs, one CTA per SM per pass.
  const Tick t0 = m_kernel_end;
  m_scheduler.first_wave(
      [&](std::uint32_t sm, std::uint32_t slot) { return start_cta(sm, slot, t0); });
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
  for (std::size_t pipe = 0; pipe < kPipeCount; ++pipe) {
    ResourceUse& u = k.resources[static_cast<std::size_t>(ResourceClass::kTensorPipe) + pipe];
    u = m_pipe_use[pipe];
    m_pipe_use[pipe] = ResourceUse{};
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

bool Engine::start_cta(std::uint32_t sm, std::uint32_t j, Tick t) {
  if (m_exhausted) return false;
  const std::uint32_t id = m_scheduler.slot_id(sm, j);
  CtaSlot& c = m_slots[id];
  if (!m_source.next_cta(c.ops)) {
    m_exhausted = true;
    return false;
  }
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
  m_queue.schedule(t, kStep, id, kStep);
  return true;
}

Engine::TagState& Engine::tag_state(CtaSlot& c, std::uint16_t tag, Tick t) {
  for (TagState& s : c.tags) {
    if (s.tag == tag) return s;
  }
  c.tags.push_back(TagState{tag, t, t});
  return c.tags.back();
}

bool Engine::has_pending_tag(const CtaSlot& c, std::uint16_t tag) const {
  for (std::size_t i = c.backlog_head; i < c.backlog.size(); ++i) {
    if (c.backlog[i].tag == tag && c.backlog[i].tracked()) return true;
  }
  return false;
}

void Engine::stream(std::uint32_t id, Tick t) {
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

void Engine::step(std::uint32_t id, Tick t) {
  CtaSlot& c = m_slots[id];
  Sm& sm = m_sms[c.sm];
  // Past the timeline's budget an op-level event is only counted (the sink says how many).
  const bool detail = m_timeline != nullptr && m_timeline->detail();
  const bool dropping = m_timeline != nullptr && !detail;
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
        if (dropping) m_timeline->drop_detail(from);
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
        if (detail && next > from) {
          m_timeline->slice(c.sm, c.slot, "wait", from, next, "\"tag\":" + std::to_string(op.tag));
        }
        if (dropping && next > from) m_timeline->drop_detail(from);
        break;
      }
      case OpKind::compute:
      case OpKind::smem: {
        ++c.pc;
        const std::size_t pipe = pipe_of(op);
        if (op.kind == OpKind::smem) {
          m_kernel->traffic.smem_bytes += op.amount;
        } else if (pipe == kIssuePipe) {
          m_kernel->traffic.warp_instructions += op.amount;
        } else {
          m_kernel->traffic.flops += op.amount;
        }
        const bool mma_sync = op.kind == OpKind::compute && op.unit == ComputeUnit::mma_sync;
        const Tick d = sm.pipe_ticks(mma_sync ? kMmaSyncRate : pipe, op.amount);
        const Tick begin = sm.reserve_pipe(pipe, issue, d);
        ResourceUse& use = m_pipe_use[pipe];
        ++use.requests;
        use.queue += static_cast<TickSum>(begin - issue);
        c.pipes_end = std::max(c.pipes_end, begin + d);
        // The CTA's next op waits for pipe_serial of this one (all of it at 1).
        next =
            m_pipe_serial >= 1.0
                ? begin + d
                : begin + static_cast<Tick>(std::llround(static_cast<double>(d) * m_pipe_serial));
        c.compute += next - issue;
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

void Engine::finish(std::uint32_t id, Tick t) {
  CtaSlot& c = m_slots[id];
  m_sms[c.sm].remove_cta(t);
  SmTime& st = m_sm_time[c.sm];
  st.compute += static_cast<TickSum>(c.compute);
  st.latency += static_cast<TickSum>(c.latency);
  st.bandwidth += static_cast<TickSum>(c.bandwidth);
  ++m_kernel->traffic.ctas;
  m_kernel_end = std::max(m_kernel_end, t);
  if (m_timeline != nullptr) m_timeline->cta(c.sm, c.slot, m_kernel->name, c.index, c.start, t);
  m_scheduler.release(c.sm, c.slot);
  if (start_cta(c.sm, m_scheduler.next_slot(c.sm), t)) m_scheduler.take_slot(c.sm);
}

}  // namespace memwall
