#pragma once
/// One streaming multiprocessor's resources: what is resident (occupancy) and when each of its
/// pipes (tensor, fp32, SFU, shared memory) is next free. The CTA scheduler and the op execution
/// live in sim/engine; this class only books resources.

#include <array>
#include <cstdint>
#include <string>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// What one CTA of a kernel needs to be resident on an SM.
struct CtaResources {
  std::uint64_t smem_bytes = 0;  ///< shared memory per CTA
  std::uint32_t threads = 0;  ///< threads per CTA, > 0
  std::uint32_t registers_per_thread = 0;  ///< 32-bit registers per thread
};

/// Which SM resource decides how many CTAs are resident.
enum class OccupancyLimit : std::uint8_t { kMaxCtas, kSharedMemory, kThreads, kRegisters };

/// "max_ctas_per_sm", "shared memory", "threads", "registers" (the JSON's occupancy_limit).
const char* to_string(OccupancyLimit limit);

/// How many CTAs of one kind fit on an SM, and which limit decides it.
struct Occupancy {
  std::uint32_t ctas_per_sm = 0;  ///< > 0 for a CTA that fits at all
  OccupancyLimit limited_by = OccupancyLimit::kMaxCtas;
};

/// Resident CTAs per SM for `cta` on `sm`; a CTA has ⌈threads / sm.warp_size⌉ warps, and each
/// warp's registers are rounded up to whole sm.register_alloc_unit. Throws UsageError (naming `kernel_name`, what the CTA
/// asks and what fits) when the CTA cannot be resident on any SM: shared memory above
/// smem_per_block, threads above max_threads_per_block, or registers above registers_per_sm.
Occupancy occupancy(const SmConfig& sm, const CtaResources& cta, const std::string& kernel_name);

/// The pipes of an SM: tensor, fp32, SFU, shared memory and the warp schedulers' issue slots (the
/// engine maps a trace op to one).
inline constexpr std::size_t kPipeCount = 5;
inline constexpr std::size_t kTensorPipe = 0;
inline constexpr std::size_t kFp32Pipe = 1;
inline constexpr std::size_t kSfuPipe = 2;
inline constexpr std::size_t kSmemPipe = 3;
/// sm.issue_per_cycle warp instructions per cycle: an op of unit issue declares the instructions
/// a kernel issues besides what its other ops book, so that a kernel whose schedulers are the
/// limit (naive softmax) is timed by them.
inline constexpr std::size_t kIssuePipe = 4;
/// Not a pipe of its own: the rate of mma_sync ops (sm.mma_sync_flops_per_cycle), which book the
/// tensor pipe. pipe_ticks takes it; reserve_pipe and the busy counts take kTensorPipe.
inline constexpr std::size_t kMmaSyncRate = kPipeCount;

/// One SM's resident CTAs and pipe reservations.
class Sm {
 public:
  /// Seconds-per-op of each pipe come from `config` (per-cycle rate × efficiency × clock).
  explicit Sm(const HardwareConfig& config);

  /// Ticks one pipe needs for `amount` FLOPs/ops (pipes 0..2), bytes (kSmemPipe), warp
  /// instructions (kIssuePipe) or mma.sync FLOPs (kMmaSyncRate); at least 1 for
  /// a non-zero amount. Throws UsageError if the pipe has zero throughput in the config.
  Tick pipe_ticks(std::size_t pipe, std::uint64_t amount) const;

  /// Runs the SM's pipes (shared memory included) at `scale` × their sm.clock rates from now on:
  /// the power limiter's clock (sim/hw/power.h). Ops already booked keep their durations.
  void set_clock_scale(double scale);

  /// The SM books tensor work (a tensor or mma_sync op): with sm.tensor_clock_scope = sm, its
  /// other pipes run at sm.tensor_clock (× the limiter's scale) from now until begin_kernel.
  void tensor_work() {
    if (m_tensor_clock_whole_sm && !m_at_tensor_clock) {
      m_at_tensor_clock = true;
      apply_clock();
    }
  }
  /// What a number of SM cycles takes beyond its time at sm.clock (× the limiter's scale): the
  /// ratio sm.clock / sm.tensor_clock once tensor_work has set the SM at the tensor clock, else 1.
  double cycle_stretch() const { return m_at_tensor_clock ? m_tensor_clock_stretch : 1.0; }
  /// A kernel starts: the SM's pipes are back at their sm.clock rates until its tensor work.
  void begin_kernel() {
    if (m_at_tensor_clock) {
      m_at_tensor_clock = false;
      apply_clock();
    }
  }

  /// Reserves `pipe` for `duration` from the earliest tick >= `t` it is free; returns the start.
  /// With sm.smem_pipe = tensor, kSmemPipe is booked on the tensor pipe (at its own rate); with
  /// sm.issue_pipe = tensor, so is kIssuePipe (at its own rate). With `turns` the pipe is its
  /// own, and every booking of the tensor pipe also books it for as long (from `t`, when it is
  /// free), so that its work and the MMAs add up; the tensor booking does not wait for it.
  Tick reserve_pipe(std::size_t pipe, Tick t, Tick duration);

  /// Ticks booked on behalf of ops of each kind (indexed like pipes; smem and issue ops count
  /// under their own index even when booked on the tensor pipe) since the last take_pipe_busy.
  std::array<Tick, kPipeCount> take_pipe_busy() {
    const std::array<Tick, kPipeCount> b = m_pipe_busy;
    m_pipe_busy = {};
    return b;
  }

  /// Resident CTAs right now.
  std::uint32_t resident() const { return m_resident; }
  /// Marks one more CTA resident at `t` (the SM becomes busy if it was empty).
  void add_cta(Tick t);
  /// Marks one CTA gone at `t`.
  void remove_cta(Tick t);
  /// Total ticks with at least one CTA resident since the last `take_busy_ticks`; the SM must be
  /// empty when called. Resets the count.
  Tick take_busy_ticks();

 private:
  std::array<double, kPipeCount + 1>
      m_ps_per_unit{};  ///< ps per FLOP/op/byte (and mma_sync FLOP), 0 = no such pipe
  std::array<double, kPipeCount + 1> m_full_clock_ps_per_unit{};  ///< the same at sm.clock
  /// The same with every pipe at sm.tensor_clock (sm.tensor_clock_scope = sm)
  std::array<double, kPipeCount + 1> m_tensor_clock_ps_per_unit{};
  double m_clock_scale = 1.0;  ///< the power limiter's (set_clock_scale)
  bool m_tensor_clock_whole_sm = false;  ///< sm.tensor_clock_scope = sm
  double m_tensor_clock_stretch = 1.0;  ///< sm.clock / sm.tensor_clock
  bool m_at_tensor_clock = false;  ///< since tensor_work, until begin_kernel
  /// m_ps_per_unit from the clock the SM is at and the limiter's scale.
  void apply_clock();
  std::array<Tick, kPipeCount> m_pipe_free{};  ///< tick at which each pipe is next free
  std::array<Tick, kPipeCount> m_pipe_busy{};  ///< ticks booked per op kind
  /// The pipe each kind of op books: itself, or the tensor pipe for shared memory and issue
  /// ops when sm.smem_pipe / sm.issue_pipe = tensor.
  std::array<std::size_t, kPipeCount> m_booked_on{};
  /// The pipes booked `turns` (sm.smem_pipe, sm.issue_pipe): every booking of the tensor pipe
  /// books them for as long too.
  std::array<bool, kPipeCount> m_held_by_tensor{};
  std::uint32_t m_resident = 0;
  Tick m_busy_since = 0;
  Tick m_busy_ticks = 0;
};

}  // namespace memwall
