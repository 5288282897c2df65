#include "sim/hw/config_schema.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/edit_distance.h"

namespace memwall {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kPiB = kGiB * 1024 * 1024;

// Store and fetch functions for a field `member` of HardwareConfig whose parsed value has type T.
// Integer fields are range-checked against the key's maximum before the narrowing cast.
#define MEMWALL_FIELD(member, T)                                          \
  [](HardwareConfig& c, const KeyValue& v) {                              \
    c.member = static_cast<decltype(c.member)>(std::get<T>(v));           \
  },                                                                      \
      [](const HardwareConfig& c) -> KeyValue {                           \
        return KeyValue{std::in_place_type<T>, static_cast<T>(c.member)}; \
      }

// The same for a field whose value is one of a few words (sm.smem_pipe and sm.issue_pipe: `own` or
// `tensor`; l2.far_reads: `home` or `copy`; sm.tensor_clock_scope: `pipe` or `sm`): `parse` reads
// the word, to_string writes it back.
#define MEMWALL_WORD_FIELD(member, parse)                                                   \
  [](HardwareConfig& c, const KeyValue& v) { c.member = parse(std::get<std::string>(v)); }, \
      [](const HardwareConfig& c) -> KeyValue {                                             \
        return KeyValue{std::in_place_type<std::string>, std::string(to_string(c.member))}; \
      }

using U64 = std::uint64_t;

// The table. Order matters: sm.clock precedes every key that may be given per cycle.
const KeyDecl kSchema[] = {
    {"name", KeyType::kString, "NVIDIA H200", "Short display name of the machine.", "", true,
     "HardwareConfig::name", Bound::kNone, 0, MEMWALL_FIELD(name, std::string)},
    {"description", KeyType::kString, "Hopper, 141 GB HBM3e",
     "One line shown by `memwall config list`.", "\"\"", false, "HardwareConfig::description",
     Bound::kNone, 0, MEMWALL_FIELD(description, std::string)},
    {"extends", KeyType::kString, "h100-sxm",
     "Base config: a preset name, or a path relative to this file. Its keys are loaded first; this "
     "file's keys override them. Cycles are an error.",
     "(none)", false, "(loader only)", Bound::kNone, 0, nullptr, nullptr},

    {"sm.count", KeyType::kInteger, "132", "Streaming multiprocessors on the chip; at most 65,536.",
     "", true, "HardwareConfig::sm.count (uint32)", Bound::kPositive, 65536,
     MEMWALL_FIELD(sm.count, U64)},
    {"sm.clock", KeyType::kFrequency, "1.98 GHz",
     "SM clock; converts every \"per cycle\" and \"cycles\" value of the file.", "", true,
     "HardwareConfig::sm.clock (Frequency, Hz)", Bound::kPositive, 1e12,
     MEMWALL_FIELD(sm.clock, Frequency)},
    {"sm.smem_per_sm", KeyType::kSize, "228 KiB", "Shared memory per SM.", "", true,
     "HardwareConfig::sm.smem_per_sm (Bytes)", Bound::kPositive, kGiB,
     MEMWALL_FIELD(sm.smem_per_sm, Bytes)},
    {"sm.smem_per_block", KeyType::kSize, "227 KiB",
     "Largest shared memory one CTA may use; <= sm.smem_per_sm.", "", true,
     "HardwareConfig::sm.smem_per_block (Bytes)", Bound::kPositive, kGiB,
     MEMWALL_FIELD(sm.smem_per_block, Bytes)},
    {"sm.max_threads_per_sm", KeyType::kInteger, "2048", "Resident threads per SM.", "2048", false,
     "HardwareConfig::sm.max_threads_per_sm (uint32)", Bound::kPositive, 1e6,
     MEMWALL_FIELD(sm.max_threads_per_sm, U64)},
    {"sm.max_threads_per_block", KeyType::kInteger, "1024",
     "Threads one CTA may have; <= sm.max_threads_per_sm.", "1024", false,
     "HardwareConfig::sm.max_threads_per_block (uint32)", Bound::kPositive, 1e6,
     MEMWALL_FIELD(sm.max_threads_per_block, U64)},
    {"sm.registers_per_sm", KeyType::kInteger, "65536", "32-bit registers per SM.", "65536", false,
     "HardwareConfig::sm.registers_per_sm (uint32)", Bound::kPositive, 1e9,
     MEMWALL_FIELD(sm.registers_per_sm, U64)},
    {"sm.max_ctas_per_sm", KeyType::kInteger, "32", "Resident CTAs per SM.", "32", false,
     "HardwareConfig::sm.max_ctas_per_sm (uint32)", Bound::kPositive, 1e6,
     MEMWALL_FIELD(sm.max_ctas_per_sm, U64)},
    {"sm.tensor_flops_per_cycle", KeyType::kReal, "4096",
     "Dense fp16 tensor-core FLOP per SM per cycle.", "", true,
     "HardwareConfig::sm.tensor_flops_per_cycle (double)", Bound::kPositive, 1e9,
     MEMWALL_FIELD(sm.tensor_flops_per_cycle, double)},
    {"sm.mma_sync_flops_per_cycle", KeyType::kReal, "2660",
     "Dense fp16 FLOP per SM per cycle of warp-level mma.sync (m16n8k16), where it is slower than "
     "the chip's peak tensor path (wgmma on Hopper); 0: sm.tensor_flops_per_cycle. Books the "
     "mma_sync ops of kernels built on mma.sync.",
     "0", false, "HardwareConfig::sm.mma_sync_flops_per_cycle (double)", Bound::kNonNegative, 1e9,
     MEMWALL_FIELD(sm.mma_sync_flops_per_cycle, double)},
    {"sm.tensor_clock", KeyType::kFrequency, "1.80 GHz",
     "SM clock while its tensor pipe is busy (a power-limited chip runs its tensor cores below "
     "sm.clock); tensor and mma_sync ops are timed at it. 0 Hz: sm.clock.",
     "0 Hz", false, "HardwareConfig::sm.tensor_clock (Frequency, Hz)", Bound::kNonNegative, 1e12,
     MEMWALL_FIELD(sm.tensor_clock, Frequency)},
    {"sm.tensor_clock_scope", KeyType::kString, "sm",
     "What runs at sm.tensor_clock: `pipe` (tensor and mma_sync ops; the SM's issue slots, fp32, "
     "SFU, shared memory and latency ops at sm.clock) or `sm` (the whole SM, from its first tensor "
     "or mma_sync op of a kernel to the kernel's end: an SM has one clock, and an mma.sync "
     "kernel's SMs run at 1.71-1.80 GHz on 132 and on 16 SMs of the H200, "
     "traces/measured/h200-issue-probe).",
     "pipe", false, "HardwareConfig::sm.tensor_clock_scope (TensorClockScope)", Bound::kNone, 0,
     MEMWALL_WORD_FIELD(sm.tensor_clock_scope, parse_tensor_clock_scope)},
    {"sm.fp32_flops_per_cycle", KeyType::kReal, "256",
     "fp32 FLOP per SM per cycle (an FMA counts 2).", "", true,
     "HardwareConfig::sm.fp32_flops_per_cycle (double)", Bound::kPositive, 1e9,
     MEMWALL_FIELD(sm.fp32_flops_per_cycle, double)},
    {"sm.sfu_ops_per_cycle", KeyType::kReal, "16",
     "Special-function (exp, rcp) ops per SM per cycle.", "16", false,
     "HardwareConfig::sm.sfu_ops_per_cycle (double)", Bound::kPositive, 1e9,
     MEMWALL_FIELD(sm.sfu_ops_per_cycle, double)},
    {"sm.issue_per_cycle", KeyType::kReal, "4",
     "Warp instructions the SM's schedulers issue per cycle (one per scheduler; 4 on every NVIDIA "
     "SM since Maxwell). Books the issue ops of kernels that declare their instruction count.",
     "4", false, "HardwareConfig::sm.issue_per_cycle (double)", Bound::kPositive, 1e6,
     MEMWALL_FIELD(sm.issue_per_cycle, double)},
    {"sm.warp_load_bandwidth", KeyType::kBandwidth, "32 B/cycle",
     "The rate one warp's loads move at between the L2 and the SM (one sub-partition's share of "
     "the SM's path): a load box of a CTA of w warps arrives no sooner than its bytes at "
     "min(w, sm.issue_per_cycle) times this rate after its first line could, so a CTA of fewer "
     "warps than schedulers cannot use the whole port. 0 B/s: no limit below xbar.port_bandwidth.",
     "0 B/s", false, "HardwareConfig::sm.warp_load_bandwidth (Bandwidth, B/s)", Bound::kNonNegative,
     0, MEMWALL_FIELD(sm.warp_load_bandwidth, Bandwidth)},
    {"sm.cta_launch_interval", KeyType::kDuration, "0.6 ns",
     "The chip starts at most one CTA per this interval, all SMs together: a kernel's first wave "
     "of n CTAs takes n times it to start, and a CTA that takes a freed slot waits for its turn. "
     "0 ns: every CTA starts as soon as its slot is free.",
     "0 ns", false, "HardwareConfig::sm.cta_launch_interval (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(sm.cta_launch_interval, Tick)},
    {"sm.smem_bandwidth", KeyType::kBandwidth, "128 B/cycle", "Shared-memory bandwidth of one SM.",
     "128 B/cycle", false, "HardwareConfig::sm.smem_bandwidth (Bandwidth, B/s)", Bound::kPositive,
     0, MEMWALL_FIELD(sm.smem_bandwidth, Bandwidth)},
    {"sm.smem_pipe", KeyType::kString, "tensor",
     "Where shared-memory traffic is booked: `own` (a pipe of its own, which overlaps the tensor "
     "pipe), `tensor` (the tensor pipe: kernels built on mma.sync load their MMA operands from "
     "shared memory, with ldmatrix, in the warps that issue the MMAs, so the two take turns) or "
     "`turns` (a pipe of its own that the MMAs hold while they run: shared memory and MMAs take "
     "turns, but shared memory overlaps the issue of other instructions, so a kernel takes at "
     "least T + S and, with sm.issue_pipe = tensor, T + I cycles; "
     "traces/measured/h200-issue-probe/smem.txt).",
     "own", false, "HardwareConfig::sm.smem_pipe (PipeBooking)", Bound::kNone, 0,
     MEMWALL_WORD_FIELD(sm.smem_pipe, parse_pipe_booking)},
    {"sm.issue_pipe", KeyType::kString, "tensor",
     "Where ops of unit `issue` (the warp instructions a kernel declares) are booked: `own` (the "
     "schedulers' issue slots, a pipe that overlaps the tensor pipe), `tensor` (the tensor pipe, "
     "at sm.issue_per_cycle: with one or two warps per scheduler an mma.sync kernel's MMAs and its "
     "other instructions take turns, traces/measured/h200-issue-probe) or `turns` (issue slots of "
     "their own that the MMAs hold while they run, as sm.smem_pipe's `turns`).",
     "own", false, "HardwareConfig::sm.issue_pipe (PipeBooking)", Bound::kNone, 0,
     MEMWALL_WORD_FIELD(sm.issue_pipe, parse_pipe_booking)},

    {"sm.arch", KeyType::kInteger, "90",
     "Compute capability x 10 (80 Ampere, 89 Ada, 90 Hopper): whose ptxas register counts the "
     "workloads' kernels take for their occupancy (models/compiled_registers.h has them for 80 and "
     "90; any other architecture gets the models' estimate).",
     "90", false, "HardwareConfig::sm.arch (uint32)", Bound::kPositive, 1000,
     MEMWALL_FIELD(sm.arch, U64)},
    {"sm.warp_size", KeyType::kInteger, "32",
     "Threads per warp (the unit of issue and of register "
     "allocation).",
     "32", false, "HardwareConfig::sm.warp_size (uint32)", Bound::kPositive, 1024,
     MEMWALL_FIELD(sm.warp_size, U64)},
    {"sm.register_alloc_unit", KeyType::kInteger, "256",
     "Registers are given to a warp in whole units of this many (256 on every NVIDIA GPU since "
     "Kepler: the CUDA occupancy calculator's allocation granularity).",
     "256", false, "HardwareConfig::sm.register_alloc_unit (uint32)", Bound::kPositive, 1e6,
     MEMWALL_FIELD(sm.register_alloc_unit, U64)},

    {"xbar.port_bandwidth", KeyType::kBandwidth, "64 B/cycle",
     "One SM's port into the crossbar, each direction.", "", true,
     "HardwareConfig::xbar.port_bandwidth (Bandwidth, B/s)", Bound::kPositive, 0,
     MEMWALL_FIELD(xbar.port_bandwidth, Bandwidth)},
    {"xbar.write_port_bandwidth", KeyType::kBandwidth, "28.5 B/cycle",
     "One SM's port in the direction SM to crossbar (the bytes of stores and reductions), where it "
     "is narrower than xbar.port_bandwidth; 0 B/s: the same as xbar.port_bandwidth.",
     "0 B/s", false, "HardwareConfig::xbar.write_port_bandwidth (Bandwidth, B/s)",
     Bound::kNonNegative, 0, MEMWALL_FIELD(xbar.write_port_bandwidth, Bandwidth)},
    {"xbar.latency", KeyType::kDuration, "100 cycles",
     "One-way crossbar traversal, SM to L2 slice: when a request reaches its slice. Part of "
     "l2.hit_latency, which is measured from the SM.",
     "", true, "HardwareConfig::xbar.latency (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(xbar.latency, Tick)},

    {"l2.size", KeyType::kSize, "50 MiB",
     "Total L2 capacity; = slices x sets per slice x ways x line_size, at most 1 GiB.", "", true,
     "HardwareConfig::l2.size (Bytes)", Bound::kPositive, kGiB, MEMWALL_FIELD(l2.size, Bytes)},
    {"l2.line_size", KeyType::kSize, "128 B", "Bytes per line (tag granularity); a power of two.",
     "128 B", false, "HardwareConfig::l2.line_size (Bytes)", Bound::kPositive, 65536,
     MEMWALL_FIELD(l2.line_size, Bytes)},
    {"l2.sector_size", KeyType::kSize, "32 B",
     "Bytes per sector (fill and transfer granularity); divides l2.line_size.", "32 B", false,
     "HardwareConfig::l2.sector_size (Bytes)", Bound::kPositive, 65536,
     MEMWALL_FIELD(l2.sector_size, Bytes)},
    {"l2.ways", KeyType::kInteger, "16", "Associativity.", "", true,
     "HardwareConfig::l2.ways (uint32)", Bound::kPositive, 65536, MEMWALL_FIELD(l2.ways, U64)},
    {"l2.slices", KeyType::kInteger, "100",
     "Address-hashed slices; a multiple of l2.partitions, at most 1024.", "", true,
     "HardwareConfig::l2.slices (uint32)", Bound::kPositive, 1024, MEMWALL_FIELD(l2.slices, U64)},
    {"l2.partitions", KeyType::kInteger, "2", "Partitions; slices are split evenly among them.",
     "1", false, "HardwareConfig::l2.partitions (uint32)", Bound::kPositive, 1024,
     MEMWALL_FIELD(l2.partitions, U64)},
    {"l2.hit_latency", KeyType::kDuration, "260 cycles",
     "Unloaded load-to-use latency of an L2 hit in the SM's own partition, from the SM (what a "
     "pointer chase measures); includes xbar.latency. A hit is ready xbar.latency + (hit_latency - "
     "xbar.latency) after the request leaves the SM, plus any queueing.",
     "", true, "HardwareConfig::l2.hit_latency (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(l2.hit_latency, Tick)},
    {"l2.far_latency", KeyType::kDuration, "200 cycles",
     "Latency added to a request from an SM to a slice of the other L2 partition (the hop between "
     "partitions); SMs are split evenly among l2.partitions, slices likewise.",
     "0 ns", false, "HardwareConfig::l2.far_latency (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(l2.far_latency, Tick)},
    {"l2.far_miss_latency", KeyType::kDuration, "95 ns",
     "Latency added to a load that misses in the L2 when the line's slice is in another partition "
     "than the SM's, on top of l2.far_latency (which every far request pays): an extra hop for "
     "misses alone. 0 on the H200 preset, whose measured far latency already accounts for the "
     "chase's slow HBM mode.",
     "0 ns", false, "HardwareConfig::l2.far_miss_latency (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(l2.far_miss_latency, Tick)},
    {"l2.far_reads", KeyType::kString, "copy",
     "Where a load from an SM of another partition than its line's slice is served: `home` (by "
     "that slice, every time) or `copy` (the first such load, served by the line's slice, leaves "
     "a copy of the line in a slice of the SM's partition, which serves that partition's later "
     "loads at the near latency; the copy takes a way of the line's set, so lines read from both "
     "partitions hold twice their bytes; a store from the SM's partition updates the copy, one "
     "from the line's partition invalidates it).",
     "home", false, "HardwareConfig::l2.far_reads (FarReads)", Bound::kNone, 0,
     MEMWALL_WORD_FIELD(l2.far_reads, parse_far_reads)},
    {"l2.dirty_ways", KeyType::kInteger, "8",
     "Most dirty lines one set keeps: a store that would make more dirty writes the least "
     "recently used other dirty line of its set back to the HBM at once, and that line stays, "
     "clean (l2_reuse on the H100: during a streaming write the chip holds at most 24.7 MB dirty, "
     "47% of its 50 MiB, writing back and keeping the rest; the H100 and H200 presets set 8). 0, "
     "or l2.ways or more: no limit (dirty lines are written back only when evicted).",
     "0", false, "HardwareConfig::l2.dirty_ways (uint32)", Bound::kNonNegative, 65536,
     MEMWALL_FIELD(l2.dirty_ways, U64)},
    {"l2.bandwidth", KeyType::kBandwidth, "5120 B/cycle",
     "Total L2 bandwidth, all slices together.", "", true,
     "HardwareConfig::l2.bandwidth (Bandwidth, B/s)", Bound::kPositive, 0,
     MEMWALL_FIELD(l2.bandwidth, Bandwidth)},

    {"hbm.capacity", KeyType::kSize, "80 GB", "Device memory size, at most 1 PiB.", "", true,
     "HardwareConfig::hbm.capacity (Bytes)", Bound::kPositive, kPiB,
     MEMWALL_FIELD(hbm.capacity, Bytes)},
    {"hbm.channels", KeyType::kInteger, "80",
     "Independent, address-interleaved channels; at most 1024.", "", true,
     "HardwareConfig::hbm.channels (uint32)", Bound::kPositive, 1024,
     MEMWALL_FIELD(hbm.channels, U64)},
    {"hbm.bandwidth", KeyType::kBandwidth, "3.35 TB/s",
     "Total peak bandwidth, all channels together.", "", true,
     "HardwareConfig::hbm.bandwidth (Bandwidth, B/s)", Bound::kPositive, 0,
     MEMWALL_FIELD(hbm.bandwidth, Bandwidth)},
    {"hbm.latency", KeyType::kDuration, "350 ns",
     "Latency an L2 miss adds on top of l2.hit_latency.", "", true,
     "HardwareConfig::hbm.latency (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(hbm.latency, Tick)},
    {"hbm.row_size", KeyType::kSize, "1 KiB", "Row-buffer (page) size per channel.", "1 KiB", false,
     "HardwareConfig::hbm.row_size (Bytes)", Bound::kPositive, kGiB,
     MEMWALL_FIELD(hbm.row_size, Bytes)},
    {"hbm.row_miss_penalty", KeyType::kDuration, "30 ns",
     "Extra channel occupancy when an access opens a new row.", "0 ns", false,
     "HardwareConfig::hbm.row_miss_penalty (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(hbm.row_miss_penalty, Tick)},
    {"hbm.banks_per_channel", KeyType::kInteger, "16",
     "Banks per channel for the row-buffer model, each with one open row (HBM3, JESD238: two "
     "pseudo-channels per channel, each 4 bank groups x 4 banks per stack ID, so at least 32; "
     "GDDR6: 16).",
     "16", false, "HardwareConfig::hbm.banks_per_channel (uint32)", Bound::kPositive, 1024,
     MEMWALL_FIELD(hbm.banks_per_channel, U64)},
    {"hbm.interleave", KeyType::kSize, "256 B",
     "Bytes mapped to one channel before the next; a multiple of l2.sector_size.", "256 B", false,
     "HardwareConfig::hbm.interleave (Bytes)", Bound::kPositive, kGiB,
     MEMWALL_FIELD(hbm.interleave, Bytes)},

    {"hbm.write_rate", KeyType::kReal, "0.93",
     "A channel's rate for writes, as a fraction of its read rate (hbm.bandwidth / hbm.channels "
     "x efficiency.hbm), while it serves writes alone, in (0, 1].",
     "1.0", false, "HardwareConfig::hbm.write_rate (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(hbm.write_rate, double)},
    {"hbm.mixed_read_rate", KeyType::kReal, "0.95",
     "A channel's read rate while it also serves writes, as a fraction of its read rate alone, "
     "in (0, 1]: its bus turns between reads and writes, and a mixed stream is slower than either "
     "alone. A read is mixed when its channel served a write less than hbm.mix_window before it "
     "starts.",
     "1.0", false, "HardwareConfig::hbm.mixed_read_rate (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(hbm.mixed_read_rate, double)},
    {"hbm.mixed_write_rate", KeyType::kReal, "0.75",
     "The write rate (as hbm.write_rate, a fraction of the read rate alone) while the channel also "
     "serves reads, in (0, 1]; a write is mixed when its channel served a read less than "
     "hbm.mix_window before it starts.",
     "1.0", false, "HardwareConfig::hbm.mixed_write_rate (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(hbm.mixed_write_rate, double)},
    {"hbm.mix_window", KeyType::kDuration, "1 us",
     "How recent a transfer the other way makes a read or a write mixed (hbm.mixed_read_rate, "
     "hbm.mixed_write_rate).",
     "1 us", false, "HardwareConfig::hbm.mix_window (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(hbm.mix_window, Tick)},

    {"efficiency.tensor", KeyType::kReal, "0.8",
     "Fraction of the tensor peak (sm.tensor_flops_per_cycle) that tensor ops achieve, in (0, 1]: "
     "warpgroup MMA (wgmma) kernels and the gemm workload's wgmma kernel.",
     "1.0", false, "HardwareConfig::efficiency.tensor (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.tensor, double)},
    {"efficiency.mma_sync", KeyType::kReal, "0.6",
     "Fraction of the mma.sync rate (sm.mma_sync_flops_per_cycle, or the tensor peak where that "
     "is 0) that mma_sync ops achieve, in (0, 1]: kernels built on mma.sync (naive qk and pv, "
     "flash1, flash2, the backward passes). Separate from efficiency.tensor so that a factor "
     "fitted on mma.sync kernels does not carry over to wgmma ones.",
     "1.0", false, "HardwareConfig::efficiency.mma_sync (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.mma_sync, double)},
    {"efficiency.fp32", KeyType::kReal, "0.8", "Fraction of the fp32 peak achieved, in (0, 1].",
     "1.0", false, "HardwareConfig::efficiency.fp32 (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.fp32, double)},
    {"efficiency.sfu", KeyType::kReal, "0.8", "Fraction of the SFU peak achieved, in (0, 1].",
     "1.0", false, "HardwareConfig::efficiency.sfu (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.sfu, double)},
    {"efficiency.l2", KeyType::kReal, "0.9", "Fraction of the L2 bandwidth achieved, in (0, 1].",
     "1.0", false, "HardwareConfig::efficiency.l2 (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.l2, double)},
    {"efficiency.hbm", KeyType::kReal, "0.9", "Fraction of the HBM bandwidth achieved, in (0, 1].",
     "1.0", false, "HardwareConfig::efficiency.hbm (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.hbm, double)},
    {"efficiency.l2_capacity", KeyType::kReal, "0.5",
     "Fraction of l2.size that holds distinct lines, in (0, 1]; the simulated L2 keeps that "
     "fraction of its sets (at least one per slice). Below 1 where the chip keeps a line in more "
     "than one place (copies in both L2 partitions) or reserves ways; `memwall calibrate` fits it "
     "to measured DRAM bytes.",
     "1.0", false, "HardwareConfig::efficiency.l2_capacity (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.l2_capacity, double)},
    {"efficiency.pipe_serial", KeyType::kReal, "0.5",
     "Fraction of a compute or shared-memory op of a CTA that its next such op waits for, in "
     "(0, 1]: 1 runs a CTA's ops one after another; below 1 the CTA's warps overlap consecutive "
     "ops on different pipes (the next one starts when this fraction of the previous one is done, "
     "and its pipe is free). Memory ops, waits and barriers wait for all of them.",
     "1.0", false, "HardwareConfig::efficiency.pipe_serial (double)", Bound::kFraction, 0,
     MEMWALL_FIELD(efficiency.pipe_serial, double)},
    {"efficiency.op_overhead", KeyType::kDuration, "10 cycles",
     "Fixed issue cost of every trace op on an SM.", "0 ns", false,
     "HardwareConfig::efficiency.op_overhead (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(efficiency.op_overhead, Tick)},
    {"efficiency.launch_overhead", KeyType::kDuration, "4 us", "Fixed cost of every kernel launch.",
     "0 ns", false, "HardwareConfig::efficiency.launch_overhead (Tick, ps)", Bound::kNonNegative, 0,
     MEMWALL_FIELD(efficiency.launch_overhead, Tick)},

    {"power.limit_watts", KeyType::kReal, "665",
     "The sustained board power, in watts, that the power limiter holds the chip to by "
     "lowering the SM clock (sm.clock and sm.tensor_clock scale together; the crossbar, L2 and "
     "HBM keep their rates). 0: no limit. Every power.window the limiter sets the clock at which "
     "the last window's work would draw this power (sim/hw/power.h, docs/simulator.md).",
     "0", false, "HardwareConfig::power.limit_watts (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.limit_watts, double)},
    {"power.static_watts", KeyType::kReal, "122",
     "Board power, in watts, with the chip awake at sm.clock and no pipe busy (SMs resident or "
     "not).",
     "0", false, "HardwareConfig::power.static_watts (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.static_watts, double)},
    {"power.tensor_pj_per_flop", KeyType::kReal, "0.89",
     "Energy of one tensor-pipe FLOP (tensor and mma_sync ops), in picojoules, at sm.clock's "
     "voltage.",
     "0", false, "HardwareConfig::power.tensor_pj_per_flop (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.tensor_pj_per_flop, double)},
    {"power.fp32_pj_per_flop", KeyType::kReal, "5.9",
     "Energy of one fp32 FLOP (an FMA counts 2), in picojoules, at sm.clock's voltage.", "0", false,
     "HardwareConfig::power.fp32_pj_per_flop (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.fp32_pj_per_flop, double)},
    {"power.sfu_pj_per_op", KeyType::kReal, "21",
     "Energy of one special-function op (exp, reciprocal), in picojoules, at sm.clock's "
     "voltage.",
     "0", false, "HardwareConfig::power.sfu_pj_per_op (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.sfu_pj_per_op, double)},
    {"power.smem_pj_per_byte", KeyType::kReal, "10.5",
     "Energy of one byte of a shared-memory op, in picojoules, at sm.clock's voltage.", "0", false,
     "HardwareConfig::power.smem_pj_per_byte (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.smem_pj_per_byte, double)},
    {"power.l2_pj_per_byte", KeyType::kReal, "30",
     "Energy of one byte between an SM and the L2 (SM->L2 read and write bytes), in "
     "picojoules, at sm.clock's voltage.",
     "0", false, "HardwareConfig::power.l2_pj_per_byte (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.l2_pj_per_byte, double)},
    {"power.dram_pj_per_byte", KeyType::kReal, "60",
     "Energy of one byte read from or written to HBM, in picojoules, beyond the L2 byte it "
     "also is.",
     "0", false, "HardwareConfig::power.dram_pj_per_byte (double)", Bound::kNonNegative, 1e6,
     MEMWALL_FIELD(power.dram_pj_per_byte, double)},
    {"power.voltage_exponent", KeyType::kReal, "2",
     "How the energy of an op falls with the clock the limiter sets: × s^this, s = the clock "
     "over sm.clock (the voltage falls with the clock; energy goes as its square).",
     "2", false, "HardwareConfig::power.voltage_exponent (double)", Bound::kNonNegative, 10,
     MEMWALL_FIELD(power.voltage_exponent, double)},
    {"power.window", KeyType::kDuration, "5 us",
     "How often, in simulated time, the power limiter sets the SM clock from the last window's "
     "work. A model setting: shorter follows a kernel's phases more closely, but a window must "
     "outlast the SM pipes' bookings ahead of time (a compute op's work counts when it is booked, "
     "and a pipe shared by several CTAs is booked microseconds ahead), else a burst of bookings "
     "makes the clock jump.",
     "5 us", false, "HardwareConfig::power.window (Tick, ps)", Bound::kPositive, 0,
     MEMWALL_FIELD(power.window, Tick)},

    {"sim.issue_window", KeyType::kDuration, "100 ns",
     "How far ahead of the earliest other event a CTA may book its SM port when it issues the lines "
     "of a box. A simulator setting, not a chip fact: boxes are issued in chunks so that shared "
     "resources are reserved roughly in time order; smaller is more exact and slower.",
     "100 ns", false, "HardwareConfig::sim.issue_window (Tick, ps)", Bound::kPositive, 0,
     MEMWALL_FIELD(sim.issue_window, Tick)},
};

#undef MEMWALL_FIELD

std::string section_of(std::string_view path) {
  const auto dot = path.find('.');
  return dot == std::string_view::npos ? std::string() : std::string(path.substr(0, dot));
}

std::string format_real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string markdown_escape(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else
      out += ch;
  }
  return out;
}

}  // namespace

std::span<const KeyDecl> config_schema() { return kSchema; }

const KeyDecl* find_key(std::string_view path) {
  for (const KeyDecl& k : kSchema) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

std::vector<std::string> config_sections() {
  std::vector<std::string> out;
  for (const KeyDecl& k : kSchema) {
    const std::string s = section_of(k.path);
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

std::string_view key_type_name(KeyType type) {
  switch (type) {
    case KeyType::kSize: return "size";
    case KeyType::kBandwidth: return "bandwidth";
    case KeyType::kFrequency: return "frequency";
    case KeyType::kDuration: return "duration";
    case KeyType::kInteger: return "integer";
    case KeyType::kReal: return "real";
    case KeyType::kString: return "string";
  }
  return "?";
}

std::string format_key_value(const KeyDecl& key, const KeyValue& value, Frequency clock) {
  char buf[128];
  switch (key.type) {
    case KeyType::kSize: {
      const Bytes b = std::get<Bytes>(value);
      const std::string shown = format_bytes(b);
      std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b.count));
      return shown == buf ? shown : shown + " (" + buf + ")";
    }
    case KeyType::kBandwidth: {
      const Bandwidth bw = std::get<Bandwidth>(value);
      std::snprintf(buf, sizeof buf, " (%.6g B/s)", bw.bytes_per_second);
      return format_bandwidth(bw) + buf;
    }
    case KeyType::kFrequency: return format_frequency(std::get<Frequency>(value));
    case KeyType::kDuration: {
      const Tick t = std::get<Tick>(value);
      std::string out = t == 0 ? std::string("0 ns") : format_duration(t);
      if (clock.hertz > 0) {
        std::snprintf(buf, sizeof buf, " (%.4g cycles)", clock.ticks_to_cycles(t));
        out += buf;
      }
      return out;
    }
    case KeyType::kInteger: return std::to_string(std::get<std::uint64_t>(value));
    case KeyType::kReal: return format_real(std::get<double>(value));
    case KeyType::kString: return "\"" + std::get<std::string>(value) + "\"";
  }
  return "?";
}

std::string suggest_key(std::string_view unknown) {
  if (unknown.empty()) return {};
  std::string best;
  std::size_t best_distance = 0;
  for (const KeyDecl& k : kSchema) {
    const std::size_t d = edit_distance(unknown, k.path);
    if (best.empty() || d < best_distance) {
      best = std::string(k.path);
      best_distance = d;
    }
  }
  // Also compare leaf names alone, so "sm.hit_latency" finds "l2.hit_latency".
  const auto dot = unknown.find_last_of('.');
  const std::string_view leaf = dot == std::string_view::npos ? unknown : unknown.substr(dot + 1);
  for (const KeyDecl& k : kSchema) {
    const auto kdot = k.path.find_last_of('.');
    const std::string_view kleaf =
        kdot == std::string_view::npos ? k.path : k.path.substr(kdot + 1);
    const std::size_t d = edit_distance(leaf, kleaf);
    if (d < best_distance) {
      best = std::string(k.path);
      best_distance = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, unknown.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string config_reference_markdown() {
  std::string md;
  md += "# Hardware config reference\n\n";
  md +=
      "<!-- Generated by `memwall config reference -o docs/config-reference.md` from the key table "
      "in sim/hw/config_schema.cc. Do not edit by hand. -->\n\n";
  md += "A hardware config is a YAML mapping with the top-level keys below and the sections ";
  const std::vector<std::string> sections = config_sections();
  for (std::size_t i = 0; i < sections.size(); ++i) {
    md += (i == 0 ? "`" : (i + 1 == sections.size() ? " and `" : ", `")) + sections[i] + "`";
  }
  md +=
      ". Unknown keys are errors. A key marked *required* must be set by the file or by a config "
      "it `extends`; any other key takes the default shown. Every value lands in the typed "
      "`HardwareConfig` of sim/hw/config.h, in base units (Bytes, B/s, Hz, ps).\n\n";
  md += "Types and accepted units:\n\n";
  md += "| type | accepted units | example |\n|---|---|---|\n";
  md += "| size | B, KiB, MiB, GiB, TiB, kB/KB, MB, GB, TB | `228 KiB` |\n";
  md +=
      "| bandwidth | B/s with a prefix (GB/s, TB/s, GiB/s, ...), or B/cycle, KiB/cycle, ... of "
      "sm.clock | `3.35 TB/s`, `64 B/cycle` |\n";
  md += "| frequency | Hz, kHz, MHz, GHz | `1.98 GHz` |\n";
  md += "| duration | ps, ns, us, ms, s, or cycles of sm.clock | `200 ns`, `273 cycles` |\n";
  md += "| integer | a whole number, no unit | `132` |\n";
  md += "| real | a number, no unit | `0.85` |\n";
  md += "| string | text | `NVIDIA H200` |\n\n";

  std::string current;
  bool first = true;
  for (const KeyDecl& k : kSchema) {
    const std::string section = section_of(k.path);
    if (first || section != current) {
      first = false;
      current = section;
      md += "\n## " + (section.empty() ? std::string("Top level") : "`" + section + "`") + "\n\n";
      md += "| key | type | example | default | description | lands in |\n";
      md += "|---|---|---|---|---|---|\n";
    }
    md += "| `" + std::string(k.path) + "` | " + std::string(key_type_name(k.type)) + " | `" +
          markdown_escape(k.example) + "` | " +
          (k.required ? std::string("*required*") : "`" + markdown_escape(k.default_text) + "`") +
          " | " + markdown_escape(k.description) + " | `" + markdown_escape(k.field) + "` |\n";
  }
  md += "\n## Checks at load\n\n";
  md += "Besides each key's type and range, a config must satisfy:\n\n";
  md +=
      "- `sm.smem_per_block` <= `sm.smem_per_sm`; `sm.max_threads_per_block` <= "
      "`sm.max_threads_per_sm`.\n";
  md += "- `l2.line_size` is a power of two; `l2.sector_size` divides it, into at most " +
        std::to_string(kMaxSectorsPerLine) + " sectors per line.\n";
  md +=
      "- `l2.size` is a whole number (>= 1) of sets of `l2.slices` x `l2.ways` x `l2.line_size` "
      "bytes (sets per slice need not be a power of two).\n";
  md += "- `l2.slices` is a multiple of `l2.partitions`.\n";
  md += "- `l2.hit_latency` >= `xbar.latency` (a hit includes the crossbar traversal).\n";
  md += "- `sm.register_alloc_unit` is a multiple of `sm.warp_size`.\n";
  md += "- `hbm.interleave` is a multiple of `l2.sector_size`.\n";
  md +=
      "- Absurd sizes are rejected before anything is allocated: `sm.count` <= 65,536, "
      "`l2.size` <= 1 GiB, `hbm.capacity` <= 1 PiB, `l2.slices` and `hbm.channels` <= 1024.\n";
  md +=
      "- The topology built from it (every SM reaches every HBM channel through the crossbar and "
      "every L2 slice; the request path has no cycle).\n";
  md +=
      "\nThese checks, and each key's range, are made once, where a config is loaded (or, for one "
      "built in code, by `validate_config` when a simulation starts); the models of the chip "
      "built from it (L2, HBM, crossbar) do not check its geometry again.\n";
  return md;
}

}  // namespace memwall
