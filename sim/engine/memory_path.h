#pragma once
/// The memory path of every load and store: SM port → crossbar → L2 slice → HBM channel, timed on
/// the edges of the topology (sim/hw/topology.h). Expands a trace box into 128-byte lines with
/// sector masks, books each resource by reservation, updates the L2 per line in issue order, and
/// counts bytes (per kernel, by tensor, by reason).
///
/// Per line of a load by SM s issued at t (n = requested sectors, S = sector size, x = the
/// crossbar of s, latencies are the topology's edges):
///   port:  t1 = reserve(port of s, t, n·S)
///   to the slice:  t2 = t1 + lat(s → x)                   (xbar.latency)
///   slice: t3 = reserve(slice, t2, n·S)                   slice = hash(line)
///   hit:   arrival = t3 + lat(x → slice)                  (l2.hit_latency - xbar.latency [+ far])
///   miss:  t4 = reserve(channel, t3, m·S [after a row miss's penalty]),  m = sectors missing
///          arrival = t4 + lat(slice → channel) + lat(x → slice)         (+ hbm.latency)
///          [+ l2.far_miss_latency when the slice is in another partition than the SM's]
/// So with no queueing and transfers of 0 ps, a near hit arrives l2.hit_latency after issue, a
/// far hit l2.far_latency later, a miss hbm.latency later still (a far one l2.far_miss_latency
/// more): the config reference's contract.
/// With l2.far_reads: copy, a load from an SM of another partition than the line's slice first
/// books and looks up the copy's slice in the SM's partition (same set, a copy tag): a copy that
/// holds the sectors arrives as a near hit; else the line's slice is booked after it and serves
/// the load as above (far), and the copy takes the sectors. A store from the other partition
/// passes the copy's slice and leaves its sectors in the copy; one from the line's partition
/// invalidates the copy.
/// A store follows the same path into the slice (accepted at t3, or at t4 + lat(slice → channel)
/// when a partially written sector has to be fetched first). Dirty victims are written back on
/// the victim's channel at t3 without delaying the request, and so is a line a store cleans
/// (l2.dirty_ways).
///
/// Latencies are cached per (crossbar, slice) and (slice, channel) pair when the path is built,
/// from the graph's edges; the hot path reads two small tables.

#include <cstdint>
#include <vector>

#include "sim/core/memory_budget.h"
#include "sim/core/sparse_bitmap.h"
#include "sim/core/units.h"
#include "sim/engine/run_result.h"
#include "sim/hw/config.h"
#include "sim/hw/hbm.h"
#include "sim/hw/l2.h"
#include "sim/hw/topology.h"
#include "sim/hw/xbar.h"
#include "traces/op.h"

namespace memwall {

/// When a box's data is there, and when it would be with no queueing anywhere.
struct Arrival {
  Tick ready = 0;  ///< max over its lines of the arrival (load) or acceptance (store)
  Tick unloaded = 0;  ///< the box's issue tick + the largest per-line latency without queueing
};

/// Where the expansion of a box stands, so that a large box can be issued in several steps.
struct BoxCursor {
  std::uint64_t row = 0;  ///< next row (of the box after merging contiguous rows)
  std::uint64_t line = 0;  ///< next line index within that row, valid when `started`
  bool started = false;
};

class MemoryPath {
 public:
  /// `workload` names the tensors used to attribute DRAM bytes.
  MemoryPath(const HardwareConfig& config, const WorkloadInfo& workload);
  /// The same on a topology built elsewhere (whose counts match `config`'s).
  MemoryPath(const HardwareConfig& config, const Topology& topology, const WorkloadInfo& workload);

  /// Counts the record of fetched sectors against `budget` from now on (null: no limit); it must
  /// outlive the path. Throws UsageError, from an access, once the record would pass the limit.
  void set_memory_budget(MemoryBudget* budget);

  /// Counters of the kernel now running; every access adds to them. Must be set before access.
  void set_kernel_counters(TrafficCounters* counters) { m_counters = counters; }

  /// A load of `box` by SM `sm` issued at `t`, all of it at once.
  Arrival load(std::uint32_t sm, const Box& box, Tick t);
  /// A store of `box` by SM `sm` issued at `t`, all of it at once.
  Arrival store(std::uint32_t sm, const Box& box, Tick t);

  /// Issues the lines of `box` from `cursor` at `t` (a load, a store, or a reduction: a store
  /// whose sectors the L2 must hold, fetching those it lacks, before it adds to them), folding
  /// them into `arrival`; `box_issue` is when the box's op issued (for `arrival.unloaded`). Stops
  /// before a line once the SM's port is booked beyond `limit` (after at least one line), so
  /// that reservations are made roughly in time order. Returns true when the box is finished.
  bool issue(std::uint32_t sm, const Box& box, OpKind kind, Tick t, Tick box_issue, Tick limit,
             BoxCursor& cursor, Arrival& arrival);

  /// The tick SM `sm`'s port is next free for loads (`is_store` false) or stores.
  Tick port_free(std::uint32_t sm, bool is_store) const {
    return m_xbar.next_free(sm, is_store ? PortDirection::from_sm : PortDirection::to_sm);
  }

  /// Moves the use of the ports, slices and channels since the last call (requests, queueing,
  /// busiest instance) into `uses`' kSmPort, kL2Slice and kHbmChannel entries, and starts anew.
  void take_resource_use(ResourceUses& uses);

  /// Writes back every dirty line and invalidates the L2 (no timing, not counted in any kernel).
  void flush_l2();

  /// Bytes still dirty in L2.
  std::uint64_t dirty_bytes() const { return m_l2.dirty_bytes(); }
  /// Bytes written back by flush_l2 so far.
  std::uint64_t flush_writeback_bytes() const { return m_flush_writeback_bytes; }
  /// DRAM bytes per tensor (WorkloadInfo::tensors order, then "(untracked)" if any byte fell
  /// outside every tensor).
  std::vector<TensorDramBytes> tensor_traffic() const;
  const ReasonTraffic& reason_traffic() const { return m_reason; }

  const Xbar& xbar() const { return m_xbar; }
  const L2& l2() const { return m_l2; }
  const Hbm& hbm() const { return m_hbm; }

 private:
  /// One tensor's address range and the sectors of it ever fetched from DRAM.
  struct TensorState {
    std::uint64_t first_sector = 0;  ///< base / sector_size
    std::uint64_t end_sector = 0;  ///< ⌈(base + bytes) / sector_size⌉
    SparseBitmap fetched;  ///< bit (sector - first_sector): fetched before; pages as touched
    TensorDramBytes traffic;
  };

  /// Counts of one issue step, kept in registers and added to the kernel's counters once per step
  /// (not per line: the per-line increments through a pointer were a measurable share of the
  /// hot path).
  struct LineTally {
    std::uint64_t lines = 0;
    std::uint64_t sectors = 0;  ///< requested sectors (reads or writes)
    std::uint64_t hit_sectors = 0;
    std::uint64_t miss_sectors = 0;
    TickSum port_queue = 0;  ///< waits for the SM port
    TickSum slice_queue = 0;  ///< waits for the slice
    TickSum channel_queue = 0;  ///< waits for the channel's bank and bus
    std::uint64_t channel_requests = 0;
  };

  template <bool kStore, bool kReduce = false>
  bool access(std::uint32_t sm, const Box& box, Tick t, Tick box_issue, Tick limit,
              BoxCursor& cursor, Arrival& arrival);
  /// access on the L2's words of type `Word` (L2::wide()).
  template <class Word, bool kStore, bool kReduce>
  bool access_words(std::uint32_t sm, const Box& box, Tick t, Tick box_issue, Tick limit,
                    BoxCursor& cursor, Arrival& arrival);
  /// What an issue step's lines share, copied into locals: their SM's port (booked in
  /// registers), the SM → crossbar latency, the crossbar → slice latencies of the SM's crossbar,
  /// the L2's tag array and the slices' reservations.
  template <class Word>
  struct SmRun {
    Xbar::Run port;
    Tick port_latency = 0;
    const Tick* return_latency = nullptr;  ///< [slice]
    /// [slice]: return_latency + l2.far_miss_latency for a slice of another partition: the way
    /// back of a load's line fetched from the HBM.
    const Tick* miss_return_latency = nullptr;
    L2Ways<Word> ways;
    Reservations::View slices;
    const Tick* slice_ticks = nullptr;  ///< [slice · (sectors_per_line + 1) + sectors]
    std::size_t slice_stride = 0;
    const Tick* whole_line_ticks = nullptr;  ///< [slice]: a whole line's transfer
    /// [slice]: the slice of the SM's partition that holds copies of the slice's lines, or
    /// kNoCopy for a slice of the SM's own partition; null when the L2 keeps no copies.
    const std::uint32_t* copy_slice = nullptr;
  };
  static constexpr std::uint32_t kNoCopy = ~std::uint32_t{0};

  template <bool kStore, class Word>
  void access_line(SmRun<Word>& run, std::uint64_t line, std::uint32_t mask, std::uint32_t full,
                   std::uint32_t sectors, Tick t, Tick box_issue, Arrival& arrival,
                   LineTally& tally);
  template <bool kStore>
  void add_tally(const LineTally& tally);
  /// Whole lines of a box still to issue, in issue order: the rest of the current row, then
  /// `per_row` lines from every `pitch_lines` lines on, row after row.
  struct WholeLines {
    std::uint64_t line;  ///< the next one
    std::uint64_t row_last;  ///< the current row's last line
    std::uint64_t per_row;
    std::uint64_t pitch_lines;
    std::uint64_t count;  ///< lines left
    std::uint64_t row;  ///< the current row's index in the box (a cursor's row)
    void advance() { skip(1); }
    /// Passes `k` lines, at most the rest of the current row.
    void skip(std::uint64_t k) {
      count -= k;
      if (line + k <= row_last) {
        line += k;
        return;
      }
      ++row;
      row_last += pitch_lines;
      line = row_last + 1 - per_row;
    }
  };
  /// Issues whole lines (every sector requested) from `seq` at `t`, as access_line would one by
  /// one, with what is the same for every line (the sector count, the port's transfer time)
  /// hoisted and the counts kept in registers, advancing `seq`. Stops before a line once the port
  /// is booked beyond `limit`, unless it is the step's first (`issued_any` false). Returns the
  /// number of lines issued.
  template <bool kStore, bool kReduce, class Word>
  std::uint64_t access_whole_lines(SmRun<Word>& run, WholeLines& seq, Tick t, Tick box_issue,
                                   Tick limit, bool& issued_any, Arrival& arrival,
                                   LineTally& tally);
  /// What a line's access does beyond the L2 when it evicts a dirty line or misses: the
  /// write-back of the victim at `t3` (when the slice took the request), the fetch of the
  /// missing sectors from HBM and their count. Returns when the data is there (a load: `back`
  /// after the channel, the fetched line's way back to the SM) or the store accepted, given
  /// `done` without a fetch; adds the channel's wait to `channel_queue`. `o` is taken by value:
  /// by reference, the hot loops kept every line's outcome on the stack for it.
  template <bool kStore>
  Tick beyond_l2(std::uint64_t line, std::uint32_t slice, L2Outcome o, std::uint32_t fetched,
                 Tick t3, Tick back, Tick done, Tick& channel_queue, LineTally& tally);
  /// A load's line of `n` sectors (`mask`), placed at `home`, from an SM of another partition
  /// when the L2 keeps copies (l2.far_reads: copy), reaching the SM's partition at `at_slice`:
  /// the copy (in slice `near`) is looked up; a copy holding the sectors serves them, booking
  /// that slice. Otherwise the line's own slice serves them (and the HBM if it misses), and the
  /// copy takes them (a dirty line it evicts is written back): the miss in `near` is a tag
  /// lookup, which books no slice time, and the fill's pass through `near` is not charged
  /// (booking `near` before the line's slice fits the measured kernels worse, docs/simulator.md).
  /// Returns when the data is there; sets `slice_wait` (the serving slice's wait) and `fetched`
  /// (sectors read from the HBM), adds the channel's wait to `channel_wait`.
  template <class Word>
  Tick far_load(SmRun<Word>& run, std::uint64_t line, const L2Place& home, std::uint32_t near,
                std::uint32_t mask, std::uint32_t n, Tick at_slice, Tick& slice_wait,
                std::uint32_t& fetched, Tick& channel_wait, LineTally& tally);
  /// far_load once its copy (at `copy`) has missed: the line's own slice serves it, and the copy
  /// takes the sectors. `fetched` must be 0 on the way in.
  template <class Word>
  Tick far_fill(SmRun<Word>& run, std::uint64_t line, const L2Place& home, const L2Place& copy,
                std::uint32_t mask, std::uint32_t n, Tick at_slice, Tick& slice_wait,
                std::uint32_t& fetched, Tick& channel_wait, LineTally& tally);
  /// After a store of sectors `mask` to the line at `place` accepted at `t` (l2.far_reads:
  /// copy): from the other partition (`near`, its copy's slice) the copy takes the sectors, as a
  /// load's would (a dirty line it evicts is written back); from the line's own partition
  /// (kNoCopy) the copy is invalidated. Always inlined: it runs for every stored line when the
  /// L2 keeps copies.
  template <class Word>
  [[gnu::always_inline]] void store_copy(const L2Ways<Word>& ways, const L2Place& place,
                                         std::uint32_t near, std::uint32_t mask, Tick t);
  /// Throws UsageError if `box` reaches beyond the addresses the L2 can tag.
  void check_range(const Box& box) const;
  /// Index into m_tensors of the tensor holding `sector`, or m_tensors.size() - 1 (untracked).
  std::size_t tensor_of(std::uint64_t sector);
  /// The lines wholly inside one tracked tensor, last found by tensor_of_line: [first, first +
  /// count). Reads and write-backs keep one each (naive's softmax reads S while P's stores
  /// write S back: one shared entry would miss on every other line).
  struct LineRange {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
    std::size_t tensor = 0;
  };
  /// The tensor holding every sector of `line`, or kMixedLine (straddles a boundary, untracked);
  /// `last` is the caller's range of the last answer.
  std::size_t tensor_of_line(std::uint64_t line, LineRange& last);
  static constexpr std::size_t kMixedLine = ~std::size_t{0};
  void count_dram_read(std::uint64_t line, std::uint32_t mask);
  void write_back(std::uint64_t line, std::uint32_t mask, Tick t);

  Xbar m_xbar;
  L2 m_l2;
  Hbm m_hbm;
  std::uint64_t m_line_bytes;
  std::uint64_t m_sector_bytes;
  std::uint32_t m_line_shift;
  std::uint32_t m_sector_shift;  ///< log2(sector size): sectors divide a power-of-two line
  std::uint32_t m_sectors_per_line;
  std::uint32_t m_slices;
  std::uint32_t m_channels;
  std::vector<Tick> m_port_latency;  ///< per SM: SM → crossbar edge
  std::vector<std::uint32_t> m_sm_crossbar;  ///< per SM: its crossbar
  std::vector<Tick> m_return_latency;  ///< [crossbar · slices + slice]: crossbar → slice edge
  /// [crossbar · slices + slice]: the same + l2.far_miss_latency across partitions (a load's
  /// line fetched from the HBM).
  std::vector<Tick> m_miss_return_latency;
  std::vector<Tick> m_channel_latency;  ///< [slice · channels + channel]: slice → channel edge
  /// [crossbar · slices + slice]: SmRun::copy_slice of the crossbar's SMs; empty when the L2
  /// keeps no copies.
  std::vector<std::uint32_t> m_copy_slice;
  /// Whether every slice → channel edge has the same latency (every config-built chip), then
  /// m_one_channel_latency: the table is tens of KiB, and a miss read it at random.
  bool m_channel_latency_uniform = false;
  Tick m_one_channel_latency = 0;
  TrafficCounters* m_counters = nullptr;
  std::vector<TensorState> m_tensors;  ///< sorted by address; last = "(untracked)"
  std::vector<std::size_t> m_report_order;  ///< m_tensors index for each WorkloadInfo tensor
  std::size_t m_last_tensor = 0;
  /// Whether no two tracked tensors share a sector: only then is a line's tensor a function of
  /// the line alone, which the LineRange caches rely on (a trace may declare overlapping
  /// tensors; then tensor_of's last-tensor entry decides, as it always did).
  bool m_tensors_disjoint = true;
  LineRange m_read_lines;  ///< tensor_of_line's last answer for count_dram_read
  LineRange m_writeback_lines;  ///< the same for write_back
  ReasonTraffic m_reason;
  ResourceUses m_uses{};  ///< requests and queueing so far (busiest instances at take time)
  std::uint64_t m_flush_writeback_bytes = 0;
};

}  // namespace memwall
