#pragma once
/// What a simulation produces: counters per kernel and for the whole workload, the stall
/// breakdown, DRAM bytes by tensor and by reason. Plain data; the writers (report_json.h,
/// report_text.h) are separate from the counters.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.h"
#include "traces/op.h"

namespace memwall {

/// Byte and op counters of one kernel or of a whole run. Incremented in the hot path; each is
/// registered once in figure_stats(), which the writers and add() visit.
struct TrafficCounters {
  std::uint64_t dram_read_bytes = 0;  ///< sectors read from HBM (load misses, partial-write fills)
  std::uint64_t dram_write_bytes = 0;  ///< dirty sectors written back to HBM on eviction
  std::uint64_t dram_row_misses = 0;  ///< HBM accesses (reads, write-backs) opening a new row
  std::uint64_t l2_read_bytes = 0;  ///< sector bytes requested by loads (SM → L2 reads)
  std::uint64_t l2_write_bytes = 0;  ///< sector bytes written by stores (SM → L2 writes)
  std::uint64_t l2_hit_sectors = 0;  ///< load sectors found valid in L2
  std::uint64_t l2_miss_sectors = 0;  ///< load sectors fetched from HBM
  std::uint64_t l2_line_accesses = 0;  ///< L2 line lookups (loads and stores)
  std::uint64_t smem_bytes = 0;  ///< shared-memory bytes of smem ops
  std::uint64_t flops = 0;  ///< FLOPs/ops of compute ops (tensor, fp32, sfu)
  std::uint64_t tensor_flops = 0;  ///< of those, the tensor pipe's (tensor and mma_sync ops)
  std::uint64_t sfu_ops = 0;  ///< of those, the special-function units' (exp, reciprocal)
  std::uint64_t warp_instructions = 0;  ///< warp instructions of issue ops
  std::uint64_t ctas = 0;  ///< CTAs that ran
  std::uint64_t energy_pj = 0;  ///< board energy over the span (power model), picojoules
  std::uint64_t sm_cycles = 0;  ///< SM clock cycles over the span (the power limiter's clock)

  /// hits / (hits + misses), 0 when no sector was loaded.
  double l2_hit_rate() const {
    const std::uint64_t n = l2_hit_sectors + l2_miss_sectors;
    return n == 0 ? 0.0 : static_cast<double>(l2_hit_sectors) / static_cast<double>(n);
  }
  /// Adds every registered counter of `o`.
  void add(const TrafficCounters& o);
};

/// Achieved DRAM bandwidth in bytes/s: (read + write) / time; 0 for a zero time.
double achieved_dram_bandwidth(const TrafficCounters& traffic, Tick time);

/// One figure that a kernel and a run both report, registered once: its name (the JSON key and
/// the sweep column), what it is with its unit, and where it comes from: a counter of
/// TrafficCounters (summed over kernels) or a value derived from the counters and the span.
struct FigureStat {
  /// How a figure reads, for the writers that format it for people.
  enum class Unit : std::uint8_t {
    kSeconds,
    kBytes,
    kCount,
    kFlops,
    kOps,
    kFraction,
    kBandwidth,
    kWatts,
    kHertz
  };
  std::string_view name;
  /// Its row in the `--html` page's figure table; empty: an engine counter without a reading of
  /// its own there (the JSON and the sweep columns still carry it).
  std::string_view label;
  /// Its row in the text report's figure table (format_run_report, format_comparison); empty:
  /// not shown there.
  std::string_view text;
  Unit unit;
  std::string_view help;
  std::uint64_t TrafficCounters::*counter = nullptr;  ///< a counter, or
  double (*derived)(const TrafficCounters&, Tick span) = nullptr;  ///< a derived value, or
  std::uint64_t (*derived_count)(const TrafficCounters&) = nullptr;  ///< a derived whole number

  /// Whether its value is a whole number (a counter or a derived count: JSON writes an integer).
  bool whole() const { return counter != nullptr || derived_count != nullptr; }
  /// Its whole-number value (whole() only).
  std::uint64_t count(const TrafficCounters& c) const {
    return counter != nullptr ? c.*counter : derived_count(c);
  }
  /// Its value as a double (a whole number converted).
  double value(const TrafficCounters& c, Tick span) const {
    return whole() ? static_cast<double>(count(c)) : derived(c, span);
  }
};

/// The figures in report order (the JSON writes them in this order at every level, before the
/// stall fractions; docs/simulator.md lists them).
std::span<const FigureStat> figure_stats();

/// SM time split into four causes, in SM·ticks (summed over all SMs); see docs/simulator.md.
struct StallTime {
  double compute = 0;  ///< a pipe busy (or the CTA waiting for it), op issue
  double memory_latency = 0;  ///< waiting on memory for as long as an unloaded path takes
  double memory_bandwidth = 0;  ///< the rest of a memory wait: queueing at port, slice, channel
  double idle = 0;  ///< no CTA resident (launch overhead, tail of the last wave)

  double total() const { return compute + memory_latency + memory_bandwidth + idle; }
  void add(const StallTime& o) {
    compute += o.compute;
    memory_latency += o.memory_latency;
    memory_bandwidth += o.memory_bandwidth;
    idle += o.idle;
  }
};

/// The kinds of reserved resource whose queueing the engine reports. The crossbar itself is
/// latency only (its inputs, the SM ports, are the contended resource); an HBM channel's class
/// counts both its banks' row activations and its data bus.
enum class ResourceClass : std::uint8_t {
  kSmPort = 0,  ///< an SM's port into the crossbar, one per SM and direction
  kL2Slice = 1,  ///< an L2 slice
  kHbmChannel = 2,  ///< an HBM channel (banks and bus)
  kTensorPipe = 3,  ///< an SM's tensor pipe, booked by tensor ops
  kFp32Pipe = 4,
  kSfuPipe = 5,
  kSmemPipe = 6,  ///< shared-memory ops (on the tensor pipe when sm.smem_pipe = tensor)
  kIssuePipe = 7,  ///< an SM's warp schedulers, booked by issue ops
};
inline constexpr std::size_t kResourceClassCount = 8;

/// "sm_port", "l2_slice", "hbm_channel", "tensor_pipe", "fp32_pipe", "sfu_pipe", "smem_pipe",
/// "issue_pipe".
const char* resource_class_name(ResourceClass c);

/// The name of instance `index` of class `c`: "sm 5 to_sm", "slice 17", "channel 3", "sm 12".
std::string resource_instance_name(ResourceClass c, std::uint32_t index);

/// How one class of resources was used during a kernel.
struct ResourceUse {
  std::uint64_t requests =
      0;  ///< bookings: lines at a port or slice, misses and write-backs at a channel, ops at a pipe
  TickSum queue =
      0;  ///< the requests' waits for their instance, summed (write-backs wait for no one)
  std::uint32_t busiest =
      0;  ///< index of the busiest instance: 2·SM + direction (0 to the SM) for ports, SM for pipes
  Tick busiest_busy = 0;  ///< that instance's busy time (transfer or op time booked on it)

  /// queue / requests, 0 without requests.
  double mean_queue() const {
    return requests == 0 ? 0.0 : static_cast<double>(queue) / static_cast<double>(requests);
  }
};

using ResourceUses = std::array<ResourceUse, kResourceClassCount>;

/// One figure of how a resource class was used during a kernel, registered once: its name (the
/// JSON key under resources.<class> and the sweep column), its column in the `--html` page's and
/// the text report's queueing tables (empty: not there), its kind and its value.
struct ResourceStat {
  enum class Kind : std::uint8_t {
    kCount,  ///< a whole number (JSON integer)
    kSeconds,
    kFraction,  ///< of the kernel's span
    kInstance,  ///< the busiest instance (JSON string: resource_instance_name)
  };
  std::string_view name;
  std::string_view label;
  std::string_view text;
  Kind kind;
  std::string_view help;
  /// Its fraction of a kernel of span `span` (kFraction).
  double (*fraction)(const ResourceUse&, Tick span) = nullptr;
  /// Its count (kCount).
  std::uint64_t (*count)(const ResourceUse&) = nullptr;
  /// Its duration in ticks (kSeconds; a double: a mean wait has fractions of a tick). The
  /// writers that round it to a duration start from the ticks: seconds × 10^12 does not always
  /// give them back exactly at a half tick.
  double (*ticks)(const ResourceUse&) = nullptr;

  /// Its value as JSON writes it: seconds (kSeconds) or the fraction (kFraction).
  double value(const ResourceUse& u, Tick span) const {
    return kind == Kind::kSeconds ? ticks(u) / static_cast<double>(kTicksPerSecond)
                                  : fraction(u, span);
  }
};

/// The resource figures in report order (docs/simulator.md lists them).
std::span<const ResourceStat> resource_stats();

/// One tensor's DRAM figure, registered once: its name (the JSON key under
/// dram_bytes_by_tensor.<tensor>), its column in the `--html` page and in the text report (empty:
/// not there), and its bytes.
struct TensorStat {
  std::string_view name;
  std::string_view label;
  std::string_view text;
  std::string_view help;
  std::uint64_t (*bytes)(const struct TensorDramBytes&) = nullptr;
};

/// The tensor figures in report order.
std::span<const TensorStat> tensor_stats();

/// One kernel launch as simulated.
struct KernelResult {
  std::string name;
  KernelInfo info;
  std::uint32_t ctas_per_sm = 0;  ///< occupancy
  std::string occupancy_limit;  ///< which resource set ctas_per_sm
  Tick start = 0;  ///< when the launch began (before launch overhead)
  Tick end =
      0;  ///< when its last CTA finished (stores accepted) and its DRAM traffic crossed the channels
  TrafficCounters traffic;
  StallTime stall;
  ResourceUses resources{};  ///< by ResourceClass

  Tick duration() const { return end - start; }
};

/// DRAM bytes of one tensor. Its reads split as the run's do (ReasonTraffic): `reread` of them
/// fetched a sector again after an eviction or a flush, the rest (read − reread) were compulsory;
/// its writes are all dirty evictions.
struct TensorDramBytes {
  std::string name;
  std::uint64_t read = 0;
  std::uint64_t write = 0;
  std::uint64_t reread = 0;  ///< part of `read`

  std::uint64_t compulsory() const { return read - reread; }
};

/// DRAM bytes by why they moved.
struct ReasonTraffic {
  std::uint64_t compulsory = 0;  ///< read: first fetch of that sector in the run
  std::uint64_t reread = 0;  ///< read: fetched again after an eviction or a flush
  std::uint64_t writeback = 0;  ///< write: dirty sectors evicted
};

/// A whole simulated workload.
struct RunResult {
  WorkloadInfo workload;
  std::string config_name;
  bool flush_l2_between_kernels = false;
  std::uint32_t sm_count = 0;
  std::vector<KernelResult> kernels;
  Tick time = 0;  ///< end of the last kernel
  TrafficCounters traffic;  ///< sum over kernels
  StallTime stall;  ///< sum over kernels
  std::uint64_t dram_dirty_bytes_at_end = 0;  ///< dirty in L2 at the end, never written back
  std::uint64_t dram_flush_writeback_bytes = 0;  ///< written back by between-kernel flushes
  std::vector<TensorDramBytes>
      dram_bytes_by_tensor;  ///< in WorkloadInfo::tensors order, then "(untracked)" if used
  ReasonTraffic dram_bytes_by_reason;
  std::uint64_t events = 0;  ///< events scheduled (engine work, not a result)
};

}  // namespace memwall
