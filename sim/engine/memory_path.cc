#include "sim/engine/memory_path.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <numeric>
#include <string>

#include "sim/core/bits.h"
#include "sim/core/error.h"

namespace memwall {
namespace {

/// Bits [lo, hi) set.
std::uint32_t bit_range(std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo) return 0;
  const std::uint64_t width_mask =
      (hi - lo >= 64) ? ~std::uint64_t{0} : ((std::uint64_t{1} << (hi - lo)) - 1);
  return static_cast<std::uint32_t>(width_mask << lo);
}

/// How many rows ahead of the current one a box prefetches its L2 sets into the host cache.
constexpr std::uint64_t kPrefetchRows = 4;

}  // namespace

MemoryPath::MemoryPath(const HardwareConfig& config, const WorkloadInfo& workload)
    : MemoryPath(config, Topology(config), workload) {}

MemoryPath::MemoryPath(const HardwareConfig& config, const Topology& topology,
                       const WorkloadInfo& workload)
    : m_xbar(config, topology),
      m_l2(config, topology),
      m_hbm(config, topology),
      m_line_bytes(m_l2.line_bytes()),
      m_sector_bytes(m_l2.sector_bytes()),
      m_line_shift(static_cast<std::uint32_t>(std::countr_zero(m_l2.line_bytes()))),
      m_sector_shift(static_cast<std::uint32_t>(std::countr_zero(m_l2.sector_bytes()))),
      m_sectors_per_line(m_l2.sectors_per_line()),
      m_slices(topology.slice_count()),
      m_channels(topology.channel_count()) {
  if (topology.sm_count() != config.sm.count || m_slices != config.l2.slices ||
      m_channels != config.hbm.channels) {
    throw UsageError(
        "memory path: the topology's SM, slice or channel count differs from the config's");
  }
  for (std::uint32_t sm = 0; sm < topology.sm_count(); ++sm) {
    m_port_latency.push_back(topology.sm_port_latency(sm));
    m_sm_crossbar.push_back(topology.crossbar_of_sm(sm));
  }
  for (std::uint32_t x = 0; x < topology.crossbar_count(); ++x) {
    for (std::uint32_t slice = 0; slice < m_slices; ++slice) {
      m_return_latency.push_back(topology.crossbar_to_slice_latency(x, slice));
      const bool far = topology.partition_of_crossbar(x) != topology.partition_of_slice(slice);
      m_miss_return_latency.push_back(m_return_latency.back() +
                                      (far ? config.l2.far_miss_latency : 0));
    }
  }
  if (m_l2.keeps_copies()) {
    // Slices are split among the partitions in equal contiguous groups: a line's copy for a
    // crossbar's SMs is in the slice of the same place in the crossbar's group.
    const std::uint32_t per_partition = m_slices / topology.partition_count();
    for (std::uint32_t x = 0; x < topology.crossbar_count(); ++x) {
      const std::uint32_t near = topology.partition_of_crossbar(x);
      for (std::uint32_t slice = 0; slice < m_slices; ++slice) {
        m_copy_slice.push_back(topology.partition_of_slice(slice) == near
                                   ? kNoCopy
                                   : near * per_partition + slice % per_partition);
      }
    }
  }
  for (std::uint32_t slice = 0; slice < m_slices; ++slice) {
    for (std::uint32_t ch = 0; ch < m_channels; ++ch) {
      m_channel_latency.push_back(topology.slice_to_channel_latency(slice, ch));
    }
  }
  m_channel_latency_uniform = !m_channel_latency.empty() &&
                              std::all_of(m_channel_latency.begin(), m_channel_latency.end(),
                                          [&](Tick l) { return l == m_channel_latency.front(); });
  if (m_channel_latency_uniform) m_one_channel_latency = m_channel_latency.front();
  // Sort the tensors by address for the lookup; remember the report order.
  std::vector<std::size_t> order(workload.tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return workload.tensors[a].base < workload.tensors[b].base;
  });
  m_report_order.assign(workload.tensors.size(), 0);
  for (std::size_t sorted = 0; sorted < order.size(); ++sorted) {
    const TensorInfo& t = workload.tensors[order[sorted]];
    TensorState s;
    s.first_sector = t.base / m_sector_bytes;
    s.end_sector = (t.base + t.bytes + m_sector_bytes - 1) / m_sector_bytes;
    s.traffic.name = t.name;
    m_tensors.push_back(std::move(s));
    m_report_order[order[sorted]] = sorted;
  }
  for (std::size_t i = 1; i < m_tensors.size(); ++i) {
    if (m_tensors[i].first_sector < m_tensors[i - 1].end_sector) m_tensors_disjoint = false;
  }
  TensorState untracked;
  untracked.traffic.name = "(untracked)";
  m_tensors.push_back(std::move(untracked));
}

void MemoryPath::set_memory_budget(MemoryBudget* budget) {
  for (TensorState& t : m_tensors) t.fetched.set_budget(budget);
}

std::size_t MemoryPath::tensor_of(std::uint64_t sector) {
  const std::size_t untracked = m_tensors.size() - 1;
  const TensorState& last = m_tensors[m_last_tensor];
  if (m_last_tensor != untracked && sector >= last.first_sector && sector < last.end_sector) {
    return m_last_tensor;
  }
  // The last tensor whose first sector is <= sector.
  std::size_t lo = 0;
  std::size_t hi = untracked;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (m_tensors[mid].first_sector <= sector) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo > 0 && sector < m_tensors[lo - 1].end_sector) {
    m_last_tensor = lo - 1;
    return lo - 1;
  }
  return untracked;
}

std::size_t MemoryPath::tensor_of_line(std::uint64_t line, LineRange& last) {
  if (line - last.first < last.count) return last.tensor;  // empty unless tensors are disjoint
  const std::uint64_t first = line * m_sectors_per_line;
  const std::size_t ti = tensor_of(first);
  const TensorState& ts = m_tensors[ti];
  if (ti == m_tensors.size() - 1 || first + m_sectors_per_line > ts.end_sector) return kMixedLine;
  // The lines wholly inside the tensor: from its first whole line to the last.
  const std::uint64_t lo = (ts.first_sector + m_sectors_per_line - 1) / m_sectors_per_line;
  const std::uint64_t hi = ts.end_sector / m_sectors_per_line;
  if (m_tensors_disjoint) last = LineRange{lo, hi - lo, ti};
  return ti;
}

void MemoryPath::count_dram_read(std::uint64_t line, std::uint32_t mask) {
  const std::uint64_t bytes = popcount8(mask) * m_sector_bytes;
  m_counters->dram_read_bytes += bytes;
  const std::size_t untracked = m_tensors.size() - 1;
  const std::size_t line_tensor = tensor_of_line(line, m_read_lines);
  if (line_tensor != kMixedLine) {
    TensorState& ts = m_tensors[line_tensor];
    ts.traffic.read += bytes;
    // The line's sectors are consecutive bits of the tensor's bitmap: when they share one word,
    // test and set them at once (the common case; a line is at most 8 sectors).
    const std::uint64_t bit = line * m_sectors_per_line - ts.first_sector;
    if (bit % 64 + m_sectors_per_line <= 64) {
      std::uint64_t& word = ts.fetched.word(bit);
      const std::uint64_t flags = std::uint64_t{mask} << (bit % 64);
      const std::uint64_t seen =
          popcount8(static_cast<std::uint32_t>((word & flags) >> (bit % 64)));
      m_reason.reread += seen * m_sector_bytes;
      ts.traffic.reread += seen * m_sector_bytes;
      m_reason.compulsory += bytes - seen * m_sector_bytes;
      word |= flags;
      return;
    }
  }
  for (std::uint32_t bits = mask; bits != 0; bits &= bits - 1) {
    const std::uint64_t sector =
        line * m_sectors_per_line + static_cast<std::uint32_t>(std::countr_zero(bits));
    const std::size_t ti = line_tensor != kMixedLine ? line_tensor : tensor_of(sector);
    TensorState& ts = m_tensors[ti];
    if (line_tensor == kMixedLine) ts.traffic.read += m_sector_bytes;
    if (ti == untracked) {
      m_reason.compulsory += m_sector_bytes;
      continue;
    }
    const std::uint64_t bit = sector - ts.first_sector;
    std::uint64_t& word = ts.fetched.word(bit);
    const std::uint64_t flag = std::uint64_t{1} << (bit % 64);
    if (word & flag) {
      m_reason.reread += m_sector_bytes;
      ts.traffic.reread += m_sector_bytes;
    } else {
      word |= flag;
      m_reason.compulsory += m_sector_bytes;
    }
  }
}

void MemoryPath::write_back(std::uint64_t line, std::uint32_t mask, Tick t) {
  const std::uint32_t n = popcount8(mask);
  ++m_uses[static_cast<std::size_t>(ResourceClass::kHbmChannel)].requests;
  Tick ignored_delay = 0;
  m_hbm.access<HbmOp::kWrite>(line << m_line_shift, n, t, ignored_delay);
  const std::uint64_t bytes = n * m_sector_bytes;
  m_counters->dram_write_bytes += bytes;
  m_reason.writeback += bytes;
  const std::size_t line_tensor = tensor_of_line(line, m_writeback_lines);
  if (line_tensor != kMixedLine) {
    m_tensors[line_tensor].traffic.write += bytes;
    return;
  }
  for (std::uint32_t bits = mask; bits != 0; bits &= bits - 1) {
    const std::uint64_t sector =
        line * m_sectors_per_line + static_cast<std::uint32_t>(std::countr_zero(bits));
    m_tensors[tensor_of(sector)].traffic.write += m_sector_bytes;
  }
}

template <bool kStore>
void MemoryPath::add_tally(const LineTally& tally) {
  ResourceUse& port = m_uses[static_cast<std::size_t>(ResourceClass::kSmPort)];
  ResourceUse& slice = m_uses[static_cast<std::size_t>(ResourceClass::kL2Slice)];
  ResourceUse& channel = m_uses[static_cast<std::size_t>(ResourceClass::kHbmChannel)];
  port.requests += tally.lines;
  port.queue += tally.port_queue;
  slice.requests += tally.lines;
  slice.queue += tally.slice_queue;
  channel.requests += tally.channel_requests;
  channel.queue += tally.channel_queue;
  TrafficCounters& c = *m_counters;
  c.l2_line_accesses += tally.lines;
  if constexpr (kStore) {
    c.l2_write_bytes += tally.sectors * m_sector_bytes;
  } else {
    c.l2_read_bytes += tally.sectors * m_sector_bytes;
    c.l2_hit_sectors += tally.hit_sectors;
    c.l2_miss_sectors += tally.miss_sectors;
  }
}

template <bool kStore, class Word>
[[gnu::always_inline]] inline void MemoryPath::access_line(SmRun<Word>& run, std::uint64_t line,
                                                           std::uint32_t mask, std::uint32_t full,
                                                           std::uint32_t n, Tick t, Tick box_issue,
                                                           Arrival& arrival, LineTally& tally) {
  Tick port_queue = 0;
  Tick slice_queue = 0;
  Tick channel_queue = 0;
  const L2Place place = run.ways.place(line);
  const std::uint32_t slice = place.slice;
  const Tick t1 = Xbar::book(run.port, n, t, port_queue);
  ++tally.lines;
  tally.sectors += n;
  Tick done = 0;
  std::uint32_t fetched = 0;
  if (!kStore && run.copy_slice != nullptr && run.copy_slice[slice] != kNoCopy) {
    done = far_load(run, line, place, run.copy_slice[slice], mask, n, t1 + run.port_latency,
                    slice_queue, fetched, channel_queue, tally);
  } else {
    Tick at = t1 + run.port_latency;
    const std::uint32_t near = run.copy_slice != nullptr ? run.copy_slice[slice] : kNoCopy;
    if (kStore && near != kNoCopy) {  // a store from the other partition passes its copy's slice
      at = run.slices.reserve(near, at, run.slice_ticks[near * run.slice_stride + n], slice_queue);
    }
    Tick home_wait = 0;
    const Tick t3 =
        run.slices.reserve(slice, at, run.slice_ticks[slice * run.slice_stride + n], home_wait);
    slice_queue += home_wait;
    const L2Outcome o = kStore ? run.ways.write(place, mask, full) : run.ways.read(place, mask);
    if (kStore && run.copy_slice != nullptr) store_copy(run.ways, place, near, mask, t3);
    fetched = o.fetch_mask == 0 ? 0 : popcount8(o.fetch_mask);
    done = kStore ? t3 : t3 + run.return_latency[slice];
    if ((o.victim_dirty | o.fetch_mask | o.cleaned_dirty) != 0) {
      done = beyond_l2<kStore>(line, slice, o, fetched, t3, run.miss_return_latency[slice], done,
                               channel_queue, tally);
    }
  }
  if constexpr (!kStore) {
    tally.hit_sectors += n - fetched;  // a load's sectors are hits or fetched
    tally.miss_sectors += fetched;
  }
  tally.port_queue += static_cast<TickSum>(port_queue);
  tally.slice_queue += static_cast<TickSum>(slice_queue);
  tally.channel_queue += static_cast<TickSum>(channel_queue);
  if (done > arrival.ready) arrival.ready = done;
  const Tick queue_delay = port_queue + slice_queue + channel_queue;
  const Tick unloaded = box_issue + (done - queue_delay - t);
  if (unloaded > arrival.unloaded) arrival.unloaded = unloaded;
}

template <bool kStore>
Tick MemoryPath::beyond_l2(std::uint64_t line, std::uint32_t slice, L2Outcome o,
                           std::uint32_t fetched, Tick t3, Tick back, Tick done,
                           Tick& channel_queue, LineTally& tally) {
  if (o.victim_dirty != 0) write_back(o.victim_line, o.victim_dirty, t3);
  if (kStore && o.cleaned_dirty != 0) write_back(o.cleaned_line, o.cleaned_dirty, t3);
  if (o.fetch_mask == 0) return done;
  std::uint32_t ch = 0;
  const Tick t4 = m_hbm.access<HbmOp::kRead>(line << m_line_shift, fetched, t3, channel_queue, ch);
  ++tally.channel_requests;
  const Tick dram = m_channel_latency_uniform
                        ? m_one_channel_latency
                        : m_channel_latency[std::size_t{slice} * m_channels + ch];
  count_dram_read(line, o.fetch_mask);
  return t4 + (kStore ? dram : dram + back);
}

template <class Word>
Tick MemoryPath::far_load(SmRun<Word>& run, std::uint64_t line, const L2Place& home,
                          std::uint32_t near, std::uint32_t mask, std::uint32_t n, Tick at_slice,
                          Tick& slice_wait, std::uint32_t& fetched, Tick& channel_wait,
                          LineTally& tally) {
  const L2Place copy = run.ways.copy_of(home, near);
  fetched = 0;
  if (run.ways.copy_hit(copy, mask)) {
    const Tick t_near = run.slices.reserve(
        near, at_slice, run.slice_ticks[near * run.slice_stride + n], slice_wait);
    return t_near + run.return_latency[near];
  }
  return far_fill(run, line, home, copy, mask, n, at_slice, slice_wait, fetched, channel_wait,
                  tally);
}

template <class Word>
Tick MemoryPath::far_fill(SmRun<Word>& run, std::uint64_t line, const L2Place& home,
                          const L2Place& copy, std::uint32_t mask, std::uint32_t n, Tick at_slice,
                          Tick& slice_wait, std::uint32_t& fetched, Tick& channel_wait,
                          LineTally& tally) {
  Tick home_wait = 0;
  const Tick t3 = run.slices.reserve(home.slice, at_slice,
                                     run.slice_ticks[home.slice * run.slice_stride + n], home_wait);
  slice_wait += home_wait;
  const L2Outcome o = run.ways.read(home, mask);
  Tick done = t3 + run.return_latency[home.slice];
  if ((o.victim_dirty | o.fetch_mask) != 0) {
    fetched = o.fetch_mask == 0 ? 0 : popcount8(o.fetch_mask);
    done = beyond_l2<false>(line, home.slice, o, fetched, t3, run.miss_return_latency[home.slice],
                            done, channel_wait, tally);
  }
  // The line, now the most recently used of its set, cannot be the copy's victim (ways > 1).
  const L2Outcome c = run.ways.read(copy, mask);
  if (c.victim_dirty != 0) write_back(c.victim_line, c.victim_dirty, t3);
  return done;
}

template <class Word>
inline void MemoryPath::store_copy(const L2Ways<Word>& ways, const L2Place& place,
                                   std::uint32_t near, std::uint32_t mask, Tick t) {
  if (near == kNoCopy) {
    ways.invalidate(ways.copy_of(place, place.slice));
    return;
  }
  const L2Outcome c = ways.read(ways.copy_of(place, near), mask);
  if (c.victim_dirty != 0) write_back(c.victim_line, c.victim_dirty, t);
}

namespace {

/// A sum of waits kept in a 64-bit register: each wait is at most kMaxTick (2^62), and the
/// register is emptied into the 128-bit total once it reaches kMaxTick, so it never wraps.
struct WaitSum {
  std::uint64_t part = 0;
  TickSum total = 0;
  void add(Tick wait) {
    part += static_cast<std::uint64_t>(wait);
    if (part >= static_cast<std::uint64_t>(kMaxTick)) [[unlikely]] {
      total += part;
      part = 0;
    }
  }
  TickSum sum() const { return total + part; }
};

}  // namespace

/// Lines whose places an issue run computes ahead of booking them (a short loop of hashes alone,
/// so that the booking loop after it has the registers to itself).
constexpr std::uint64_t kPlaceBatch = 32;

template <bool kStore, bool kReduce, class Word>
std::uint64_t MemoryPath::access_whole_lines(SmRun<Word>& run, WholeLines& lines_left, Tick t,
                                             Tick box_issue, Tick limit, bool& issued_any,
                                             Arrival& arrival, LineTally& tally) {
  // A local copy (the stores of the loops below could alias the caller's), written back on the
  // way out.
  WholeLines seq = lines_left;
  const auto leave = [&](std::uint64_t issued) {
    lines_left = seq;
    return issued;
  };
  const std::uint32_t n = m_sectors_per_line;
  const std::uint32_t all = bit_range(0, n);
  // A reduction overwrites no sector whole: the L2 adds to what it holds, fetching the rest.
  const std::uint32_t full = kReduce ? 0 : all;
  // The port: every line takes d, issued at t, so from the first line's start s0 = max(t, next
  // free) the lines are booked back to back: line i starts at s0 + i·d and waits s0 + i·d − t.
  // The step stops before a line once the port is booked beyond `limit` (the step's first line
  // always issues), which fixes the count here.
  const Tick d = run.port.sector_ticks[n];
  if (seq.count == 0 || (issued_any && run.port.next_free > limit)) return leave(0);
  const Tick s0 = t > run.port.next_free ? t : run.port.next_free;
  std::uint64_t lines = 1;
  if (seq.count > 1 && limit >= s0) {
    const Tick room = limit - s0;
    lines +=
        static_cast<TickSum>(seq.count - 1) * static_cast<TickSum>(d) <= static_cast<TickSum>(room)
            ? seq.count - 1
            : static_cast<std::uint64_t>(room / d);  // < count - 1 here
  }
  if (static_cast<TickSum>(lines) * static_cast<TickSum>(d) > static_cast<TickSum>(kMaxTick - s0)) {
    // The port's booking would pass kMaxTick: line by line, which throws where it always did.
    std::uint64_t issued = 0;
    for (; seq.count != 0; seq.advance(), ++issued) {
      if (issued_any && run.port.next_free > limit) break;
      issued_any = true;
      access_line<kStore, Word>(run, seq.line, all, full, n, t, box_issue, arrival, tally);
    }
    return leave(issued);
  }
  issued_any = true;

  const Tick* const slice_ticks = run.whole_line_ticks;
  const Tick* const back_latency = run.return_latency;
  const Tick* const miss_back_latency = run.miss_return_latency;
  const L2Ways<Word> ways = run.ways;
  const Reservations::View slices = run.slices;
  const std::uint32_t* const copy_slice = run.copy_slice;
  const Tick port_part = d + run.port_latency;  // issue → slice, less the port's wait
  Tick at_slice = s0 + port_part;  // line i reaches its slice at s0 + (i + 1)·d + port latency
  WaitSum slice_queue;
  WaitSum channel_queue;
  std::uint64_t fetched_sectors = 0;
  Tick ready = arrival.ready;
  // A line's unloaded latency is done − its waits − t: for a line the L2 serves, d + port
  // latency + its slice's transfer [+ the return to the SM]; a line that goes beyond the L2
  // works it out in full. The max over the lines, + box_issue, is the box's unloaded arrival.
  Tick unloaded = std::numeric_limits<Tick>::min();
  std::uint64_t line_of[kPlaceBatch];
  L2Place places[kPlaceBatch];
  for (std::uint64_t left = lines; left != 0;) {
    const auto m = static_cast<std::uint32_t>(std::min(kPlaceBatch, left));
    left -= m;
    for (std::uint32_t j = 0; j < m;) {  // the rest of the row at most, then the next row
      const auto k =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(m - j, seq.row_last - seq.line + 1));
      for (std::uint32_t i = 0; i < k; ++i, ++j) {
        line_of[j] = seq.line + i;
        places[j] = ways.place(seq.line + i);
        ways.prefetch(places[j]);  // the host fetches the batch's sets while earlier lines book
      }
      seq.skip(k);
    }
    for (std::uint32_t j = 0; j < m; ++j, at_slice += d) {
      const L2Place& place = places[j];
      const std::uint32_t slice = place.slice;
      if (!kStore && copy_slice != nullptr && copy_slice[slice] != kNoCopy) {
        const std::uint32_t near = copy_slice[slice];
        const L2Place copy = ways.copy_of(place, near);
        if (ways.copy_hit(copy, all)) {
          // far_load's first case, here without its call and with its waits in registers: the
          // copy serves the line (most of flash2's far lines: K and V, read by CTA after CTA).
          // The unloaded latency is port, slice transfer and return, as for a near hit.
          Tick near_wait = 0;
          const Tick near_transfer = slice_ticks[near];
          const Tick done =
              slices.reserve(near, at_slice, near_transfer, near_wait) + back_latency[near];
          slice_queue.add(near_wait);
          const Tick u = port_part + near_transfer + back_latency[near];
          if (done > ready) ready = done;
          if (u > unloaded) unloaded = u;
          continue;
        }
        Tick slice_wait = 0;
        Tick channel_wait = 0;
        std::uint32_t fetched = 0;
        const Tick done = far_fill(run, line_of[j], place, copy, all, n, at_slice, slice_wait,
                                   fetched, channel_wait, tally);
        fetched_sectors += fetched;
        slice_queue.add(slice_wait);
        channel_queue.add(channel_wait);
        const Tick port_wait = at_slice - port_part - t;
        const Tick u = done - port_wait - slice_wait - channel_wait - t;
        if (done > ready) ready = done;
        if (u > unloaded) unloaded = u;
        continue;
      }
      Tick at = at_slice;
      Tick near_part = 0;  // a store's way through its copy's slice: transfer and wait
      std::uint32_t near = kNoCopy;
      if (kStore && copy_slice != nullptr) {
        near = copy_slice[slice];
        if (near != kNoCopy) {
          Tick near_wait = 0;
          at = slices.reserve(near, at, slice_ticks[near], near_wait);
          slice_queue.add(near_wait);
          near_part = at - at_slice;
        }
      }
      const Tick transfer = slice_ticks[slice];
      Tick slice_wait = 0;
      const Tick t3 = slices.reserve(slice, at, transfer, slice_wait);
      slice_queue.add(slice_wait);
      const L2Outcome o = kStore ? ways.write(place, all, full) : ways.read(place, all);
      if (kStore && copy_slice != nullptr) store_copy(ways, place, near, all, t3);
      const Tick back = kStore ? 0 : back_latency[slice];
      Tick done = t3 + back;
      Tick u = port_part + near_part + transfer + back;
      if ((o.victim_dirty | o.fetch_mask | o.cleaned_dirty) != 0) [[unlikely]] {
        const std::uint32_t fetched = o.fetch_mask == 0 ? 0 : popcount8(o.fetch_mask);
        fetched_sectors += fetched;
        Tick channel_wait = 0;
        done = beyond_l2<kStore>(line_of[j], slice, o, fetched, t3, miss_back_latency[slice], done,
                                 channel_wait, tally);
        channel_queue.add(channel_wait);
        const Tick port_wait = at_slice - port_part - t;
        u = done - port_wait - slice_wait - channel_wait - t;  // near_part counted in full
      }
      if (done > ready) ready = done;
      if (u > unloaded) unloaded = u;
    }
  }
  run.port.next_free = s0 + static_cast<Tick>(lines) * d;
  run.port.busy += static_cast<Tick>(lines) * d;
  tally.lines += lines;
  tally.sectors += lines * n;
  if constexpr (!kStore) {
    tally.hit_sectors += lines * n - fetched_sectors;  // a load's sectors are hits or fetched
    tally.miss_sectors += fetched_sectors;
  }
  // Σ over the lines of s0 + i·d − t.
  tally.port_queue += static_cast<TickSum>(lines) * static_cast<TickSum>(s0 - t) +
                      static_cast<TickSum>(d) * (static_cast<TickSum>(lines) * (lines - 1) / 2);
  tally.slice_queue += slice_queue.sum();
  tally.channel_queue += channel_queue.sum();
  arrival.ready = ready;
  if (box_issue + unloaded > arrival.unloaded) arrival.unloaded = box_issue + unloaded;
  return leave(lines);
}

void MemoryPath::check_range(const Box& box) const {
  // The last byte, computed without overflow: base + (rows - 1)·pitch + row_bytes - 1.
  const std::uint64_t limit = (L2::kMaxLine + 1) << m_line_shift;
  const std::uint64_t span = box.rows > 1 ? box.pitch : 0;
  bool ok = box.base < limit && (box.rows <= 1 || span <= (limit - box.base) / (box.rows - 1));
  if (ok) {
    const std::uint64_t last_row = box.base + (box.rows - 1) * span;
    ok = box.row_bytes <= limit - last_row;
  }
  if (!ok) {
    throw UsageError(
        "trace: a box at address " + std::to_string(box.base) + " (" + std::to_string(box.rows) +
        " rows of " + std::to_string(box.row_bytes) + " bytes, pitch " + std::to_string(box.pitch) +
        ") reaches beyond the simulated address space of " + std::to_string(limit) + " bytes");
  }
}

template <bool kStore, bool kReduce>
bool MemoryPath::access(std::uint32_t sm, const Box& box, Tick t, Tick box_issue, Tick limit,
                        BoxCursor& cursor, Arrival& arrival) {
  return m_l2.wide() ? access_words<std::uint64_t, kStore, kReduce>(sm, box, t, box_issue, limit,
                                                                    cursor, arrival)
                     : access_words<std::uint32_t, kStore, kReduce>(sm, box, t, box_issue, limit,
                                                                    cursor, arrival);
}

template <class Word, bool kStore, bool kReduce>
bool MemoryPath::access_words(std::uint32_t sm, const Box& box, Tick t, Tick box_issue, Tick limit,
                              BoxCursor& cursor, Arrival& arrival) {
  std::uint64_t rows = box.rows;
  std::uint64_t row_bytes = box.row_bytes;
  if (rows == 0 || row_bytes == 0) return true;
  if (!cursor.started && cursor.row == 0) check_range(box);
  if (rows > 1 && box.pitch == row_bytes) {  // contiguous rows: one span
    row_bytes *= rows;
    rows = 1;
  }
  const PortDirection dir = kStore ? PortDirection::from_sm : PortDirection::to_sm;
  bool issued_any = false;
  LineTally tally;
  SmRun<Word> run{
      m_xbar.open(sm, dir),
      m_port_latency[sm],
      &m_return_latency[std::size_t{m_sm_crossbar[sm]} * m_slices],
      &m_miss_return_latency[std::size_t{m_sm_crossbar[sm]} * m_slices],
      m_l2.ways<Word>(),
      m_l2.slice_bus(),
      m_l2.slice_sector_ticks(),
      std::size_t{m_sectors_per_line} + 1,
      m_l2.whole_line_ticks(),
      m_copy_slice.empty() ? nullptr : &m_copy_slice[std::size_t{m_sm_crossbar[sm]} * m_slices]};
  // The cursor and the arrival live in locals while lines issue (through the references the
  // compiler stored them back on every line), and are written back on the way out.
  Arrival got = arrival;
  std::uint64_t row = cursor.row;
  std::uint64_t line = cursor.line;
  bool started = cursor.started;
  const auto leave = [&](bool done) {
    m_xbar.close(run.port);
    add_tally<kStore>(tally);
    arrival = got;
    cursor.row = row;
    cursor.line = line;
    cursor.started = started;
    return done;
  };
  const std::uint64_t line_mask = m_line_bytes - 1;
  if (((box.base | row_bytes | (rows > 1 ? box.pitch : 0)) & line_mask) == 0) {
    // Every row is whole lines: the box is one sequence of them, row after row.
    const std::uint64_t per_row = row_bytes >> m_line_shift;
    const std::uint64_t row_first = (box.base + row * box.pitch) >> m_line_shift;
    if (!started) line = row_first;
    WholeLines seq{line,
                   row_first + per_row - 1,
                   per_row,
                   rows > 1 ? box.pitch >> m_line_shift : 0,
                   (rows - row - 1) * per_row + (row_first + per_row - line),
                   row};
    access_whole_lines<kStore, kReduce, Word>(run, seq, t, box_issue, limit, issued_any, got,
                                              tally);
    row = seq.row;
    line = seq.line;
    started = true;
    return leave(seq.count == 0);
  }
  for (; row < rows; ++row, started = false) {
    const std::uint64_t start = box.base + row * box.pitch;
    const std::uint64_t end = start + row_bytes;
    const std::uint64_t first = start >> m_line_shift;
    const std::uint64_t last = (end - 1) >> m_line_shift;
    if (!started) {
      line = first;
      started = true;
    }
    // Later rows' sets are usually far away: ask the host to fetch them while this row runs.
    if (row + kPrefetchRows < rows)
      run.ways.prefetch((start + kPrefetchRows * box.pitch) >> m_line_shift);
    // The row's lines are whole but for a partial first and last one.
    const bool first_whole = (start & line_mask) == 0;
    const bool last_whole = (end & line_mask) == 0;
    while (line <= last) {
      if ((line > first || first_whole) && (line < last || last_whole)) {  // the common case
        const std::uint64_t whole_last = last_whole ? last : last - 1;  // line < last here if not
        WholeLines seq{line, whole_last, whole_last - line + 1, 0, whole_last - line + 1, row};
        line += access_whole_lines<kStore, kReduce, Word>(run, seq, t, box_issue, limit, issued_any,
                                                          got, tally);
        if (line <= whole_last) return leave(false);
        continue;
      }
      if (issued_any && run.port.next_free > limit) return leave(false);
      issued_any = true;
      const std::uint64_t line_base = line << m_line_shift;
      const std::uint64_t lo = line == first ? start - line_base : 0;
      const std::uint64_t hi = line == last ? end - line_base : m_line_bytes;
      // Sector sizes divide the (power-of-two) line size, so they are powers of two too.
      const std::uint32_t s = m_sector_shift;
      const std::uint32_t mask = bit_range(lo >> s, ((hi - 1) >> s) + 1);
      const std::uint32_t full = bit_range((lo + m_sector_bytes - 1) >> s, hi >> s);
      access_line<kStore, Word>(run, line, mask, kReduce ? 0 : full, popcount8(mask), t, box_issue,
                                got, tally);
      ++line;
    }
  }
  return leave(true);
}

bool MemoryPath::issue(std::uint32_t sm, const Box& box, OpKind kind, Tick t, Tick box_issue,
                       Tick limit, BoxCursor& cursor, Arrival& arrival) {
  switch (kind) {
    case OpKind::store: return access<true>(sm, box, t, box_issue, limit, cursor, arrival);
    case OpKind::reduce: return access<true, true>(sm, box, t, box_issue, limit, cursor, arrival);
    default: return access<false>(sm, box, t, box_issue, limit, cursor, arrival);
  }
}

Arrival MemoryPath::load(std::uint32_t sm, const Box& box, Tick t) {
  Arrival a{t, t};
  BoxCursor cursor;
  access<false>(sm, box, t, t, std::numeric_limits<Tick>::max(), cursor, a);
  return a;
}

Arrival MemoryPath::store(std::uint32_t sm, const Box& box, Tick t) {
  Arrival a{t, t};
  BoxCursor cursor;
  access<true>(sm, box, t, t, std::numeric_limits<Tick>::max(), cursor, a);
  return a;
}

void MemoryPath::take_resource_use(ResourceUses& uses) {
  auto take = [&](ResourceClass c, const std::vector<Tick>& busy) {
    ResourceUse u = m_uses[static_cast<std::size_t>(c)];
    const auto it = std::max_element(busy.begin(), busy.end());  // first of equals: deterministic
    u.busiest = it == busy.end() ? 0 : static_cast<std::uint32_t>(it - busy.begin());
    u.busiest_busy = it == busy.end() ? 0 : *it;
    uses[static_cast<std::size_t>(c)] = u;
    m_uses[static_cast<std::size_t>(c)] = ResourceUse{};
  };
  take(ResourceClass::kSmPort, m_xbar.busy());
  take(ResourceClass::kL2Slice, m_l2.busy());
  take(ResourceClass::kHbmChannel, m_hbm.busy());
  m_xbar.reset_busy();
  m_l2.reset_busy();
  m_hbm.reset_busy();
}

void MemoryPath::flush_l2() {
  m_l2.flush([&](std::uint64_t, std::uint32_t dirty) {
    m_flush_writeback_bytes += popcount8(dirty) * m_sector_bytes;
  });
}

std::vector<TensorDramBytes> MemoryPath::tensor_traffic() const {
  std::vector<TensorDramBytes> out;
  for (const std::size_t i : m_report_order) out.push_back(m_tensors[i].traffic);
  const TensorDramBytes& untracked = m_tensors.back().traffic;
  if (untracked.read != 0 || untracked.write != 0) out.push_back(untracked);
  return out;
}

}  // namespace memwall
