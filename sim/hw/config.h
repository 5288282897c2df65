#pragma once
/// The typed hardware description a YAML config resolves to (see docs/config-reference.md).
///
/// Every field is in base units (Bytes, Bandwidth in bytes/s, Frequency in Hz, Tick in ps). Values
/// given "per cycle" or "in cycles" in YAML are converted with the SM clock at load time. A loaded
/// HardwareConfig has passed validation: every invariant documented here holds.

#include <cstdint>
#include <string>

#include "sim/core/units.h"

namespace memwall {

/// Where an SM books shared-memory traffic (sm.smem_pipe) or warp instructions (sm.issue_pipe).
enum class PipeBooking : std::uint8_t {
  kOwn = 0,  ///< "own": a pipe of its own, overlapping the tensor pipe
  kTensor = 1,  ///< "tensor": on the tensor pipe, taking turns with the MMAs
  /// "turns": a pipe of its own that tensor work also holds while it runs: it takes turns with
  /// the MMAs but overlaps every other pipe (and whatever else is booked on the tensor pipe)
  kTurns = 2,
};

/// "own", "tensor" or "turns".
const char* to_string(PipeBooking pipe);
/// Parses "own", "tensor" or "turns"; throws UnitError otherwise.
PipeBooking parse_pipe_booking(const std::string& text);

/// Where a load from an SM of another L2 partition than its line's slice is served (l2.far_reads).
enum class FarReads : std::uint8_t {
  kHome = 0,  ///< "home": by the line's own slice, every time
  /// "copy": the first such load leaves a copy of the line in the SM's partition, which serves
  /// the partition's later loads and takes capacity there; a store invalidates it
  kCopy = 1,
};

/// "home" or "copy".
const char* to_string(FarReads reads);
/// Parses "home" or "copy"; throws UnitError otherwise.
FarReads parse_far_reads(const std::string& text);

/// What runs at sm.tensor_clock (sm.tensor_clock_scope).
enum class TensorClockScope : std::uint8_t {
  kPipe = 0,  ///< "pipe": tensor and mma_sync ops; the SM's other pipes at sm.clock
  /// "sm": the whole SM (issue slots, fp32, SFU, shared memory too) from its first tensor or
  /// mma_sync op of a kernel to the kernel's end, as one clock per SM does
  kSm = 1,
};

/// "pipe" or "sm".
const char* to_string(TensorClockScope scope);
/// Parses "pipe" or "sm"; throws UnitError otherwise.
TensorClockScope parse_tensor_clock_scope(const std::string& text);

/// Streaming multiprocessors: count, clock, occupancy limits, per-cycle throughputs.
struct SmConfig {
  std::uint32_t count = 0;  ///< SMs on the chip, > 0
  Frequency clock;  ///< SM clock, > 0
  Bytes smem_per_sm;  ///< shared memory per SM
  Bytes smem_per_block;  ///< largest shared memory one CTA may use, <= smem_per_sm
  std::uint32_t max_threads_per_sm = 0;  ///< resident threads per SM
  std::uint32_t max_threads_per_block = 0;  ///< <= max_threads_per_sm
  std::uint32_t registers_per_sm = 0;  ///< 32-bit registers per SM
  std::uint32_t max_ctas_per_sm = 0;  ///< resident CTAs per SM
  std::uint32_t arch = 90;  ///< compute capability x 10 (80, 89, 90)
  std::uint32_t warp_size = 32;  ///< threads per warp
  std::uint32_t register_alloc_unit =
      256;  ///< registers per warp allocation unit, a multiple of warp_size
  double tensor_flops_per_cycle = 0;  ///< dense fp16 tensor-core FLOP per SM per cycle
  /// Dense fp16 FLOP per SM per cycle of warp-level mma.sync; 0: tensor_flops_per_cycle.
  double mma_sync_flops_per_cycle = 0;
  /// The SM clock while its tensor pipe is busy (power-limited); 0 Hz: sm.clock. Tensor and
  /// mma_sync ops are timed at it, and with tensor_clock_scope = kSm every op of the SM from its
  /// first tensor or mma_sync op of a kernel on.
  Frequency tensor_clock;
  TensorClockScope tensor_clock_scope = TensorClockScope::kPipe;
  double fp32_flops_per_cycle = 0;  ///< fp32 FLOP per SM per cycle (an FMA counts 2)
  double sfu_ops_per_cycle = 0;  ///< special-function (exp, rcp) ops per SM per cycle
  double issue_per_cycle = 4;  ///< warp instructions the SM's schedulers issue per cycle
  /// The rate one warp's loads move at (its sub-partition's share of the SM's path from the L2);
  /// a CTA of w warps loads at most min(w, issue_per_cycle) × this. 0 B/s: no such limit.
  Bandwidth warp_load_bandwidth;
  /// The chip starts at most one CTA per this interval, all SMs together (its CTA dispatch rate);
  /// 0: a CTA starts as soon as a slot is free.
  Tick cta_launch_interval = 0;
  Bandwidth smem_bandwidth;  ///< shared-memory bandwidth of one SM
  /// Where shared-memory traffic is booked: its own pipe, overlapping the tensor pipe, or the
  /// tensor pipe (MMA operands are loaded from shared memory by the warps that issue the MMAs,
  /// as mma.sync kernels do).
  PipeBooking smem_pipe = PipeBooking::kOwn;
  /// Where ops of unit `issue` are booked: their own pipe (the schedulers, overlapping the tensor
  /// pipe) or the tensor pipe (at the issue rate), when the schedulers cannot issue a kernel's
  /// other instructions while its MMAs run.
  PipeBooking issue_pipe = PipeBooking::kOwn;
};

/// The crossbar (NoC) between SMs and L2 slices.
struct XbarConfig {
  Bandwidth port_bandwidth;  ///< one SM's port into the crossbar (each direction)
  /// The SM → crossbar direction (stores, reductions) when it differs; 0: port_bandwidth.
  Bandwidth write_port_bandwidth;
  Tick latency = 0;  ///< one-way traversal latency
};

/// The L2 cache: sectored, set-associative, split into address-hashed slices and partitions.
/// The most sectors per L2 line the L2 model holds (a way's word keeps one valid and one dirty bit
/// per sector); the loader refuses a config with more.
inline constexpr std::uint64_t kMaxSectorsPerLine = 8;

struct L2Config {
  Bytes size;  ///< total capacity; = slices * sets_per_slice * ways * line_size
  Bytes line_size;  ///< bytes per line (tag granularity), a power of two
  Bytes sector_size;  ///< bytes per sector (fill and transfer granularity), divides line_size
  std::uint32_t ways = 0;  ///< associativity
  std::uint32_t slices = 0;  ///< address-hashed slices, a multiple of partitions
  std::uint32_t partitions = 1;  ///< partitions (slices are split evenly among them)
  /// Unloaded load-to-use latency of a hit in the SM's own partition, from the SM; includes
  /// xbar.latency (>= it).
  Tick hit_latency = 0;
  Tick far_latency = 0;  ///< added for a slice of another partition than the SM's
  /// Added to a load that misses when its slice is in another partition than the SM's (the data
  /// crosses the partition hop on its way back from the HBM).
  Tick far_miss_latency = 0;
  FarReads far_reads = FarReads::kHome;  ///< loads across partitions: from home, or a near copy
  /// Most dirty lines a set keeps: a store past it writes back the least recently used other
  /// dirty line of the set, which stays (clean). 0: no limit.
  std::uint32_t dirty_ways = 0;
  Bandwidth bandwidth;  ///< total L2 bandwidth (all slices together)
};

/// High-bandwidth memory.
struct HbmConfig {
  Bytes capacity;  ///< device memory size
  std::uint32_t channels = 0;  ///< independent channels (address-interleaved)
  Bandwidth bandwidth;  ///< total peak bandwidth (all channels together)
  Tick latency = 0;  ///< added latency of an access that misses L2
  Bytes row_size;  ///< row-buffer (page) size per channel, for locality
  Tick row_miss_penalty = 0;  ///< extra channel occupancy when an access opens a new row
  Bytes interleave;  ///< bytes mapped to one channel before moving to the next
  std::uint32_t banks_per_channel = 16;  ///< banks of the row-buffer model, each one open row
  /// A channel's write rate, as a fraction of its read rate, while it serves writes alone.
  double write_rate = 1.0;
  /// The same while it also serves reads (its bus turns between the two), in (0, 1].
  double mixed_write_rate = 1.0;
  /// A channel's read rate while it also serves writes, as a fraction of its read rate alone.
  double mixed_read_rate = 1.0;
  /// A transfer is mixed when its channel served the other direction less than this long before
  /// it starts.
  Tick mix_window = 1'000'000;
};

/// Achieved-vs-peak factors the calibration fits. 1.0 means "the datasheet peak".
struct EfficiencyConfig {
  double tensor =
      1.0;  ///< fraction of the tensor pipe's peak (tensor ops: wgmma) achieved, in (0, 1]
  double mma_sync = 1.0;  ///< fraction of the mma.sync rate (mma_sync ops) achieved, in (0, 1]
  double fp32 = 1.0;  ///< fraction of fp32 peak achieved, in (0, 1]
  double sfu = 1.0;  ///< fraction of SFU peak achieved, in (0, 1]
  double l2 = 1.0;  ///< fraction of L2 bandwidth achieved, in (0, 1]
  double hbm = 1.0;  ///< fraction of HBM bandwidth achieved, in (0, 1]
  /// Fraction of l2.size that holds distinct lines, in (0, 1]: the simulated L2 keeps this
  /// fraction of its sets (at least one per slice).
  double l2_capacity = 1.0;
  /// Fraction of a compute or shared-memory op that a CTA's next such op waits for, in (0, 1]:
  /// 1 runs a CTA's ops one after another; below 1 its warps overlap consecutive ops.
  double pipe_serial = 1.0;
  Tick op_overhead = 0;  ///< fixed issue cost per trace op on an SM
  Tick launch_overhead = 0;  ///< fixed cost per kernel launch
};

/// The board's power and the limiter that holds it under a limit by lowering the SM clock
/// (sim/hw/power.h). Power at SM clock scale s (the clock over sm.clock) is
/// static_watts + s^voltage_exponent × Σ energy × rate over the pipes' and the memory's work;
/// every energy is at sm.clock's voltage. All zero: no power model (the clock stays sm.clock).
struct PowerConfig {
  double limit_watts = 0;  ///< the sustained board power the limiter holds; 0: no limit
  double static_watts = 0;  ///< the board awake at sm.clock with no pipe busy
  double tensor_pj_per_flop = 0;  ///< a tensor-pipe FLOP (tensor and mma_sync ops)
  double fp32_pj_per_flop = 0;  ///< an fp32 FLOP (an FMA counts 2)
  double sfu_pj_per_op = 0;  ///< a special-function op
  double smem_pj_per_byte = 0;  ///< a byte of a shared-memory op
  double l2_pj_per_byte = 0;  ///< a byte between an SM and the L2 (loads and stores)
  double dram_pj_per_byte = 0;  ///< a byte read from or written to HBM (beyond its L2 byte)
  double voltage_exponent = 2;  ///< energy per op ∝ s^this as the limiter lowers the voltage
  Tick window = 1'000'000;  ///< how often the limiter sets the clock (simulated time), > 0
  /// Whether the limiter acts (a limit and a static power are given).
  bool limited() const { return limit_watts > 0; }
};

/// Settings of the simulator itself (not of the chip).
struct SimConfig {
  Tick issue_window = 100'000;  ///< how far ahead of the next event a CTA books its SM port, > 0
};

/// A whole chip.
struct HardwareConfig {
  std::string name;  ///< short display name, e.g. "NVIDIA H200"
  std::string description;  ///< one line for `memwall config list`
  std::string source_file;  ///< file it was loaded from (for messages), empty if built in code
  SmConfig sm;
  XbarConfig xbar;
  L2Config l2;
  HbmConfig hbm;
  EfficiencyConfig efficiency;
  PowerConfig power;
  SimConfig sim;
};

/// Values derived from a config, computed once (`derive`) and shown by `memwall config show`.
struct DerivedConfig {
  Bytes total_smem;  ///< sm.count * sm.smem_per_sm
  std::uint64_t l2_sets_per_slice;  ///< l2.size / (slices * ways * line_size)
  std::uint64_t l2_sets;  ///< l2_sets_per_slice * slices
  /// Sets per slice that hold lines: l2_sets_per_slice × efficiency.l2_capacity, rounded down,
  /// at least 1 (what the simulated L2 uses).
  std::uint64_t l2_usable_sets_per_slice;
  Bytes l2_usable;  ///< l2_usable_sets_per_slice × slices × ways × line_size
  double peak_tensor_flops;  ///< FLOP/s, all SMs
  double peak_fp32_flops;  ///< FLOP/s, all SMs
  double peak_sfu_ops;  ///< op/s, all SMs
  Bandwidth hbm_bandwidth;  ///< peak HBM bytes/s
  Bandwidth l2_bandwidth;  ///< peak L2 bytes/s
  Bandwidth xbar_bandwidth;  ///< sm.count * xbar.port_bandwidth
  Bandwidth smem_bandwidth;  ///< sm.count * sm.smem_bandwidth
  double ridge_point_tensor;  ///< FLOP per HBM byte where tensor compute meets bandwidth
  double ridge_point_fp32;  ///< FLOP per HBM byte where fp32 compute meets bandwidth
};

/// Computes the derived values of a validated config.
DerivedConfig derive(const HardwareConfig& config);

}  // namespace memwall
