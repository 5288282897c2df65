// The simulator's timing and cache behaviour on a small chip built in code, with expectations
// computed from the config.
#include <catch2/catch.hpp>

#include <array>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "sim/core/error.h"
#include "sim/core/event_queue.h"
#include "sim/engine/simulator.h"
#include "sim/hw/l2.h"
#include "sim/hw/topology.h"
#include "sim/report/report_json.h"
#include "sim/report/timeline.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

/// Ticks to move `bytes` at `bw`, rounded like the simulator's per-sector tables.
Tick ticks(std::uint64_t bytes, Bandwidth bw) {
  return static_cast<Tick>(std::llround(static_cast<double>(bytes) * 1e12 / bw.bytes_per_second));
}

RunResult run(const HardwareConfig& c, std::vector<TestKernel> kernels, std::uint64_t tensor_bytes,
              SimOptions options = {}) {
  VectorTraceSource source(one_tensor_workload(tensor_bytes), std::move(kernels));
  return simulate(c, source, options);
}

/// One kernel of `ctas` CTAs, each streaming `bytes` bytes from its own region in 16 KiB loads.
TestKernel streaming_kernel(std::uint32_t ctas, std::uint64_t bytes, std::uint64_t offset = 0) {
  TestKernel k{kernel_info("stream"), {}};
  for (std::uint32_t i = 0; i < ctas; ++i) {
    std::vector<Op> ops;
    for (std::uint64_t b = 0; b < bytes; b += 16384) {
      ops.push_back(load(offset + i * bytes + b, 1, 16384, 16384));
    }
    ops.push_back(wait());
    k.ctas.push_back(ops);
  }
  return k;
}

}  // namespace

TEST_CASE("Events pop in (tick, priority, sequence) order", "[run][event_queue]") {
  EventQueue q;
  q.schedule(20, 1, 1, 0);
  q.schedule(10, 1, 2, 0);
  q.schedule(10, 0, 3, 0);
  q.schedule(10, 1, 4, 0);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().target);
  CHECK(order == std::vector<std::uint32_t>{3, 2, 4, 1});
  CHECK(q.now() == 20);
  CHECK_THROWS_AS(q.schedule(5, 0, 0, 0), Error);
}

TEST_CASE(
    "An unloaded hit arrives l2.hit_latency after issue and a miss hbm.latency later, plus "
    "the transfer times",
    "[run][latency]") {
  // The latency contract of the config reference: l2.hit_latency is the whole unloaded
  // load-to-use latency of a hit from the SM, xbar.latency included; a miss adds hbm.latency.
  const HardwareConfig c = small_config();
  REQUIRE(c.l2.far_latency == 0);
  const std::uint64_t line = c.l2.line_size.count;
  const Tick transfers = ticks(line, c.xbar.port_bandwidth) +
                         ticks(line, Bandwidth{c.l2.bandwidth.bytes_per_second / c.l2.slices});
  const Tick hit = transfers + c.l2.hit_latency;
  const Tick miss = hit +
                    ticks(line, Bandwidth{c.hbm.bandwidth.bytes_per_second / c.hbm.channels}) +
                    c.hbm.latency;
  TestKernel k{kernel_info("one_line"),
               {{load(0, 1, static_cast<std::uint32_t>(line), line), wait()}}};
  // The same kernel twice: the L2 keeps its contents between kernels, so the second one hits.
  const RunResult r = run(c, {k, k}, line);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].duration() == miss);
  CHECK(r.kernels[1].duration() == hit);
  CHECK(r.kernels[0].traffic.l2_miss_sectors == line / c.l2.sector_size.count);
  CHECK(r.kernels[1].traffic.l2_hit_sectors == line / c.l2.sector_size.count);
  CHECK(r.time == miss + hit);
}

namespace {

/// Unloaded times of line 0 loaded by one CTA on an SM of line 0's partition and on one of the
/// other: {near miss, near hit, far miss, far hit} (each CTA loads it in a kernel, then again in a
/// second one, which hits). CTA i of the first wave runs on SM i.
std::array<Tick, 4> near_and_far_loads(const HardwareConfig& c) {
  const std::uint64_t line = c.l2.line_size.count;
  const Topology topology(c);
  const std::uint32_t slice_partition = topology.partition_of_slice(L2(c).place(0).slice);
  auto time_from = [&](std::uint32_t sm) {
    TestKernel k{kernel_info("one_line"), {}};
    for (std::uint32_t i = 0; i < c.sm.count; ++i) {
      k.ctas.push_back(
          i == sm ? std::vector<Op>{load(0, 1, static_cast<std::uint32_t>(line), line), wait()}
                  : std::vector<Op>{});
    }
    const RunResult r = run(c, {k, k}, line);
    return std::pair{r.kernels[0].duration(), r.kernels[1].duration()};
  };
  std::uint32_t near_sm = 0, far_sm = 0;
  for (std::uint32_t sm = 0; sm < c.sm.count; ++sm) {
    (topology.crossbar_of_sm(sm) == slice_partition ? near_sm : far_sm) = sm;
  }
  REQUIRE(topology.crossbar_of_sm(near_sm) != topology.crossbar_of_sm(far_sm));
  const auto [near_miss, near_hit] = time_from(near_sm);
  const auto [far_miss, far_hit] = time_from(far_sm);
  // The near SM's miss is the contract's (hit + hbm.latency + the channel's transfer).
  CHECK(near_miss - near_hit ==
        c.hbm.latency + ticks(line, Bandwidth{c.hbm.bandwidth.bytes_per_second / c.hbm.channels}));
  return {near_miss, near_hit, far_miss, far_hit};
}

}  // namespace

TEST_CASE("A load from a slice of the other L2 partition takes l2.far_latency longer",
          "[run][latency][topology]") {
  HardwareConfig c = small_config();
  c.l2.far_latency = 50'000;  // 50 ns
  const auto [near_miss, near_hit, far_miss, far_hit] = near_and_far_loads(c);
  CHECK(far_hit == near_hit + c.l2.far_latency);
  CHECK(far_miss == near_miss + c.l2.far_latency);
}

TEST_CASE(
    "A load that misses from a slice of the other L2 partition takes l2.far_miss_latency longer; "
    "its hits do not",
    "[run][latency][topology]") {
  HardwareConfig c = small_config();
  c.l2.far_latency = 20'000;  // 20 ns for every access across the partitions
  c.l2.far_miss_latency = 70'000;  // 70 ns more for a line fetched from the HBM
  const auto [near_miss, near_hit, far_miss, far_hit] = near_and_far_loads(c);
  CHECK(far_hit == near_hit + c.l2.far_latency);
  CHECK(far_miss == near_miss + c.l2.far_latency + c.l2.far_miss_latency);
}

TEST_CASE("The chip starts one CTA per sm.cta_launch_interval after the launch overhead",
          "[run][launch]") {
  HardwareConfig c = small_config();
  c.efficiency.launch_overhead = 1'500'000;  // 1.5 us
  c.sm.cta_launch_interval = 600;  // 0.6 ns
  // CTAs with nothing to do end where they start: the kernel lasts until the last one starts.
  const std::uint64_t n = 3 * c.sm.count + 1;
  TestKernel k{kernel_info("empty"), std::vector<std::vector<Op>>(n)};
  const RunResult r = run(c, {k}, 128);
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].duration() ==
        c.efficiency.launch_overhead + static_cast<Tick>(n - 1) * c.sm.cta_launch_interval);
  c.sm.cta_launch_interval = 0;  // no dispatch limit: every CTA at the overhead's end
  CHECK(run(c, {k}, 128).kernels[0].duration() == c.efficiency.launch_overhead);
}

TEST_CASE("Each resource class reports its requests, its waits and its busiest instance",
          "[run][resources]") {
  const HardwareConfig c = small_config();
  const std::uint64_t line = c.l2.line_size.count;
  const std::uint64_t bytes = 256 * 1024;
  const std::uint64_t lines = bytes / line;
  const RunResult r = run(c, {streaming_kernel(1, bytes)}, bytes);
  const ResourceUses& u = r.kernels[0].resources;
  const ResourceUse& port = u[static_cast<std::size_t>(ResourceClass::kSmPort)];
  const ResourceUse& slice = u[static_cast<std::size_t>(ResourceClass::kL2Slice)];
  const ResourceUse& channel = u[static_cast<std::size_t>(ResourceClass::kHbmChannel)];
  // One CTA on SM 0 loads every line once, cold: each line crosses SM 0's port towards the SM,
  // one slice, and (a miss) one channel.
  CHECK(port.requests == lines);
  CHECK(slice.requests == lines);
  CHECK(channel.requests == lines);
  CHECK(port.busiest == 0);  // SM 0, direction to the SM
  CHECK(resource_instance_name(ResourceClass::kSmPort, port.busiest) == "sm 0 to_sm");
  CHECK(port.busiest_busy == static_cast<Tick>(lines) * ticks(line, c.xbar.port_bandwidth));
  // Every load issues at the kernel's start (no op overhead, no other event to wait for), so the
  // lines queue behind each other at the port: line i waits i transfer times.
  REQUIRE(c.efficiency.op_overhead == 0);
  const Tick per_line = ticks(line, c.xbar.port_bandwidth);
  CHECK(port.queue == static_cast<TickSum>(static_cast<Tick>(lines * (lines - 1) / 2) * per_line));
  // No compute op ran: the pipes saw no request.
  for (std::size_t i = static_cast<std::size_t>(ResourceClass::kTensorPipe);
       i < kResourceClassCount; ++i) {
    CHECK(u[i].requests == 0);
    CHECK(u[i].busiest_busy == 0);
  }
  // The JSON report carries every class under the kernel.
  const std::string json = run_to_json(r);
  for (std::size_t i = 0; i < kResourceClassCount; ++i) {
    CHECK(json.find("\"" + std::string(resource_class_name(static_cast<ResourceClass>(i))) +
                    "\": {") != std::string::npos);
  }
  CHECK(json.find("\"busiest\": \"sm 0 to_sm\"") != std::string::npos);
}

TEST_CASE("A cold sequential read opens each HBM row once, and the report counts it",
          "[run][hbm]") {
  const HardwareConfig c = small_config();
  // 64 KiB from address 0: every row (row_size bytes of one channel, made of interleave blocks)
  // is read whole, in order, and each channel has fewer rows than banks, so no row is reopened.
  const std::uint64_t bytes = 64 * 1024;
  REQUIRE(bytes / c.hbm.row_size.count / c.hbm.channels <= c.hbm.banks_per_channel);
  RunResult r = run(c, {streaming_kernel(1, bytes), streaming_kernel(1, bytes)}, bytes);
  CHECK(r.kernels[0].traffic.dram_row_misses == bytes / c.hbm.row_size.count);
  CHECK(r.kernels[1].traffic.dram_row_misses == 0);  // all hits in the L2: no DRAM access
  CHECK(r.traffic.dram_row_misses == r.kernels[0].traffic.dram_row_misses);
  const std::string json = run_to_json(r);
  CHECK(json.find("\"dram_row_misses\": " + std::to_string(bytes / c.hbm.row_size.count)) !=
        std::string::npos);
}

TEST_CASE("Launch and op overheads add to a kernel's time", "[run][latency]") {
  HardwareConfig c = small_config();
  c.efficiency.launch_overhead = 5000;
  c.efficiency.op_overhead = 700;
  TestKernel k{kernel_info("barriers"), {{Op{}, Op{}, Op{}}}};  // three barriers
  const RunResult r = run(c, {k}, 0);
  CHECK(r.time == c.efficiency.launch_overhead + 3 * c.efficiency.op_overhead);
}

TEST_CASE("One SM streaming a large box runs at its port bandwidth", "[run][bandwidth]") {
  const HardwareConfig c = small_config();
  const std::uint64_t bytes = 2 * 1024 * 1024;
  const RunResult r = run(c, {streaming_kernel(1, bytes)}, bytes);
  const double expected = static_cast<double>(ticks(bytes, c.xbar.port_bandwidth));
  // Plus the latency of the last line, which is small next to the transfer.
  CHECK(static_cast<double>(r.time) >= expected);
  CHECK(static_cast<double>(r.time) <= expected * 1.03);
}

TEST_CASE("All SMs streaming saturate HBM at its configured bandwidth", "[run][bandwidth]") {
  const HardwareConfig c = small_config();
  REQUIRE(c.sm.count * c.xbar.port_bandwidth.bytes_per_second > c.hbm.bandwidth.bytes_per_second);
  const std::uint64_t bytes = 2 * 1024 * 1024;
  const RunResult r = run(c, {streaming_kernel(c.sm.count, bytes)}, bytes * c.sm.count);
  CHECK(r.traffic.dram_read_bytes == bytes * c.sm.count);
  const double achieved = achieved_dram_bandwidth(r.traffic, r.time);
  CHECK(achieved <= c.hbm.bandwidth.bytes_per_second);
  CHECK(achieved >= 0.95 * c.hbm.bandwidth.bytes_per_second);
}

TEST_CASE("HBM efficiency scales the achieved DRAM bandwidth", "[run][bandwidth]") {
  HardwareConfig c = small_config();
  c.efficiency.hbm = 0.5;
  const std::uint64_t bytes = 1024 * 1024;
  const RunResult r = run(c, {streaming_kernel(c.sm.count, bytes)}, bytes * c.sm.count);
  const double achieved = achieved_dram_bandwidth(r.traffic, r.time);
  CHECK(achieved <= 0.5 * c.hbm.bandwidth.bytes_per_second);
  CHECK(achieved >= 0.95 * 0.5 * c.hbm.bandwidth.bytes_per_second);
}

TEST_CASE("A working set smaller than L2 hits on its second pass; a larger one misses",
          "[run][l2]") {
  const HardwareConfig c = small_config();
  const std::uint64_t small = c.l2.size.count / 2;
  const RunResult a = run(c, {streaming_kernel(1, small), streaming_kernel(1, small)}, small);
  CHECK(a.kernels[0].traffic.l2_hit_rate() == 0.0);
  CHECK(a.kernels[1].traffic.l2_hit_rate() >= 0.99);
  CHECK(a.dram_bytes_by_reason.compulsory == a.traffic.dram_read_bytes);

  const std::uint64_t large = c.l2.size.count * 2;
  const RunResult b = run(c, {streaming_kernel(1, large), streaming_kernel(1, large)}, large);
  CHECK(b.kernels[1].traffic.l2_hit_rate() <= 0.05);
  CHECK(b.dram_bytes_by_reason.compulsory == large);
  CHECK(b.dram_bytes_by_reason.reread == b.traffic.dram_read_bytes - large);
}

TEST_CASE("efficiency.l2_capacity shrinks the L2 that holds lines", "[run][l2]") {
  HardwareConfig c = small_config();
  const std::uint64_t three_quarters = c.l2.size.count / 4 * 3;
  const RunResult full =
      run(c, {streaming_kernel(1, three_quarters), streaming_kernel(1, three_quarters)},
          three_quarters);
  CHECK(full.kernels[1].traffic.l2_hit_rate() >= 0.99);

  c.efficiency.l2_capacity = 0.5;
  REQUIRE(derive(c).l2_usable.count == c.l2.size.count / 2);
  const RunResult half =
      run(c, {streaming_kernel(1, three_quarters), streaming_kernel(1, three_quarters)},
          three_quarters);
  CHECK(half.kernels[1].traffic.l2_hit_rate() <= 0.05);  // 1.5 times the usable L2, LRU
  const std::uint64_t quarter = c.l2.size.count / 4;
  const RunResult fits =
      run(c, {streaming_kernel(1, quarter), streaming_kernel(1, quarter)}, quarter);
  CHECK(fits.kernels[1].traffic.l2_hit_rate() >= 0.99);
}

TEST_CASE(
    "Flushing L2 between kernels makes the second pass miss and writes dirty data back "
    "outside any kernel",
    "[run][l2]") {
  const HardwareConfig c = small_config();
  const std::uint64_t bytes = 64 * 1024;
  TestKernel writer{kernel_info("write"),
                    {{store(0, 1, static_cast<std::uint32_t>(bytes), bytes)}}};
  SimOptions flush;
  flush.flush_l2_between_kernels = true;
  const RunResult r = run(c, {writer, streaming_kernel(1, bytes)}, bytes, flush);
  CHECK(r.dram_flush_writeback_bytes == bytes);
  CHECK(r.traffic.dram_write_bytes == 0);
  CHECK(r.kernels[1].traffic.l2_hit_rate() == 0.0);
  CHECK(r.kernels[1].traffic.dram_read_bytes == bytes);

  const RunResult kept = run(c, {writer, streaming_kernel(1, bytes)}, bytes);
  CHECK(kept.kernels[1].traffic.l2_hit_rate() == 1.0);
  CHECK(kept.dram_dirty_bytes_at_end == bytes);
}

TEST_CASE("Stores write back only on eviction: stored bytes = DRAM writes + dirty bytes at end",
          "[run][l2][conservation]") {
  const HardwareConfig c = small_config();
  for (const std::uint64_t bytes : {c.l2.size.count / 4, c.l2.size.count * 3}) {
    TestKernel k{kernel_info("write"), {}};
    for (std::uint64_t b = 0; b < bytes; b += 8192) k.ctas.push_back({store(b, 64, 128, 128)});
    const RunResult r = run(c, {k}, bytes);
    CHECK(r.traffic.l2_write_bytes == bytes);
    CHECK(r.traffic.dram_write_bytes + r.dram_dirty_bytes_at_end == bytes);
    CHECK(r.traffic.dram_read_bytes == 0);  // whole-sector writes fetch nothing
    if (bytes < c.l2.size.count) CHECK(r.traffic.dram_write_bytes == 0);
  }
}

TEST_CASE("A partial-sector store fetches the sector; a full-sector store does not", "[run][l2]") {
  const HardwareConfig c = small_config();
  const std::uint64_t sector = c.l2.sector_size.count;
  TestKernel full{kernel_info("full"), {{store(0, 1, static_cast<std::uint32_t>(sector), sector)}}};
  TestKernel half{kernel_info("half"),
                  {{store(4096, 1, static_cast<std::uint32_t>(sector / 2), sector)}}};
  const RunResult r = run(c, {full, half}, 8192);
  CHECK(r.kernels[0].traffic.dram_read_bytes == 0);
  CHECK(r.kernels[1].traffic.dram_read_bytes == sector);
  CHECK(r.traffic.l2_write_bytes == 2 * sector);  // sector granularity
}

TEST_CASE("A reduction fetches every sector the L2 lacks and adds to those it holds",
          "[run][l2][reduce]") {
  const HardwareConfig c = small_config();
  const std::uint64_t line = c.l2.line_size.count, bytes = 16 * line;
  // Cold: every sector is read from HBM before the add, and ends dirty.
  TestKernel cold{kernel_info("cold"), {{reduce(0, 16, static_cast<std::uint32_t>(line), line)}}};
  // Warm: a second reduction of the same box finds it in the L2.
  TestKernel warm{kernel_info("warm"), {{reduce(0, 16, static_cast<std::uint32_t>(line), line)}}};
  const RunResult r = run(c, {cold, warm}, bytes);
  CHECK(r.kernels[0].traffic.dram_read_bytes == bytes);
  CHECK(r.kernels[0].traffic.l2_write_bytes == bytes);  // SM→L2: the bytes of the box
  CHECK(r.kernels[0].traffic.l2_read_bytes == 0);
  CHECK(r.kernels[1].traffic.dram_read_bytes == 0);
  CHECK(r.dram_dirty_bytes_at_end == bytes);
  // A store of the same box writes whole sectors: nothing to fetch.
  TestKernel st{kernel_info("store"), {{store(0, 16, static_cast<std::uint32_t>(line), line)}}};
  CHECK(run(c, {st}, bytes).traffic.dram_read_bytes == 0);
}

TEST_CASE("Unaligned and strided boxes are expanded into the sectors they touch", "[run][l2]") {
  const HardwareConfig c = small_config();
  // 4 rows of 40 bytes starting 100 bytes into a line, 1024 bytes apart: each row touches bytes
  // [100, 140) of its 1024-byte block: sectors 3 (96..127) and 4 (128..159) in two lines.
  TestKernel k{kernel_info("strided"), {{load(100, 4, 40, 1024), wait()}}};
  const RunResult r = run(c, {k}, 8192);
  CHECK(r.traffic.l2_read_bytes == 4 * 2 * c.l2.sector_size.count);
  CHECK(r.traffic.l2_line_accesses == 8);
  CHECK(r.traffic.l2_hit_sectors + r.traffic.l2_miss_sectors ==
        r.traffic.l2_read_bytes / c.l2.sector_size.count);
}

TEST_CASE("Compute ops take FLOPs / (rate × efficiency × clock) and share the SM's pipe",
          "[run][compute]") {
  HardwareConfig c = small_config();
  c.efficiency.tensor = 0.5;
  const std::uint64_t flops = 1'000'000;
  const Tick one = static_cast<Tick>(
      std::llround(static_cast<double>(flops) /
                   (c.sm.tensor_flops_per_cycle * c.efficiency.tensor * c.sm.clock.hertz) * 1e12));
  // Two CTAs on one SM (one SM only): their tensor work serialises on the shared pipe.
  c.sm.count = 1;
  TestKernel k{kernel_info("mma"),
               {{compute(ComputeUnit::tensor, flops)}, {compute(ComputeUnit::tensor, flops)}}};
  const RunResult r = run(c, {k}, 0);
  CHECK(r.time == 2 * one);
  CHECK(r.traffic.flops == 2 * flops);
  const StallTime f = stall_fractions(r.stall, r.sm_count, r.time);
  CHECK(f.compute == Approx(1.0));
}

TEST_CASE(
    "flops is counted by pipe too: tensor_flops (tensor and mma_sync), sfu_ops, the rest fp32",
    "[run][compute]") {
  const HardwareConfig c = small_config();
  TestKernel k{kernel_info("mix"),
               {{compute(ComputeUnit::tensor, 1000), compute(ComputeUnit::fp32, 70),
                 compute(ComputeUnit::sfu, 30)},
                {compute(ComputeUnit::mma_sync, 500), compute(ComputeUnit::sfu, 3),
                 compute(ComputeUnit::issue, 11)}}};
  const RunResult r = run(c, {k}, 0);
  CHECK(r.traffic.flops == 1000 + 70 + 30 + 500 + 3);  // issue ops are warp instructions
  CHECK(r.traffic.tensor_flops == 1500);
  CHECK(r.traffic.sfu_ops == 33);
  CHECK(r.kernels.at(0).traffic.tensor_flops == 1500);
  const FigureStat* fp32 = nullptr;
  for (const FigureStat& f : figure_stats()) {
    if (f.name == "fp32_flops") fp32 = &f;
  }
  REQUIRE(fp32 != nullptr);
  CHECK(fp32->count(r.traffic) == 70);
}

TEST_CASE(
    "mma_sync ops take FLOPs / (sm.mma_sync_flops_per_cycle × efficiency.mma_sync × "
    "sm.tensor_clock) on the tensor pipe, which tensor ops share at their own rate and "
    "efficiency",
    "[run][compute][mma_sync]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  c.efficiency.mma_sync = 0.5;
  c.efficiency.tensor = 0.8;
  c.sm.mma_sync_flops_per_cycle = c.sm.tensor_flops_per_cycle / 4;
  c.sm.tensor_clock = Frequency{c.sm.clock.hertz / 2};
  const std::uint64_t flops = 1'000'000;
  auto at = [&](double per_cycle, double efficiency) {
    return static_cast<Tick>(std::llround(
        static_cast<double>(flops) / (per_cycle * efficiency * c.sm.tensor_clock.hertz) * 1e12));
  };
  const Tick mma = at(c.sm.mma_sync_flops_per_cycle, c.efficiency.mma_sync);
  const Tick tensor = at(c.sm.tensor_flops_per_cycle, c.efficiency.tensor);
  TestKernel k{kernel_info("mma"),
               {{compute(ComputeUnit::mma_sync, flops)}, {compute(ComputeUnit::tensor, flops)}}};
  const RunResult r = run(c, {k}, 0);
  CHECK(r.time == mma + tensor);  // one pipe: the two take turns
  CHECK(r.traffic.flops == 2 * flops);
  CHECK(r.kernels.at(0).resources[static_cast<std::size_t>(ResourceClass::kTensorPipe)].requests ==
        2);
  // Unset (0), the mma.sync rate is the tensor rate and the tensor clock is sm.clock.
  c.sm.mma_sync_flops_per_cycle = 0;
  c.sm.tensor_clock = Frequency{0};
  TestKernel alone{kernel_info("mma"), {{compute(ComputeUnit::mma_sync, flops)}}};
  CHECK(run(c, {alone}, 0).time ==
        static_cast<Tick>(std::llround(
            static_cast<double>(flops) /
            (c.sm.tensor_flops_per_cycle * c.efficiency.mma_sync * c.sm.clock.hertz) * 1e12)));
}

TEST_CASE(
    "A wait on a store's tag waits until the store has reached the L2; an untagged store "
    "is posted, and xbar.write_port_bandwidth times the SM's stores",
    "[run][store]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  const std::uint64_t bytes = 64 * 1024;
  const std::uint64_t flops = 1'000'000;
  const Tick work = static_cast<Tick>(std::llround(
      static_cast<double>(flops) / (c.sm.fp32_flops_per_cycle * c.sm.clock.hertz) * 1e12));
  const auto time_of = [&](std::uint16_t tag) {
    TestKernel k{kernel_info("st"),
                 {{store(0, 64, 1024, 1024, tag), wait(tag == 0 ? 1 : tag),
                   compute(ComputeUnit::fp32, flops)}}};
    return run(c, {k}, 0).time;
  };
  // Posted: the compute overlaps the store; tagged: it starts when the store is in the L2, so
  // the CTA takes the store's time plus the compute's.
  const Tick posted = time_of(0), tracked = time_of(3);
  const Tick port =
      static_cast<Tick>(static_cast<double>(bytes) / c.xbar.port_bandwidth.bytes_per_second * 1e12);
  CHECK(posted < port + work);
  CHECK(tracked >= port + work);
  // A write port a quarter as wide makes the tracked store (at least) four times as long.
  c.xbar.write_port_bandwidth = Bandwidth{c.xbar.port_bandwidth.bytes_per_second / 4};
  CHECK(time_of(3) >= 4 * port + work);
  // Loads keep the full port.
  TestKernel ld{kernel_info("ld"), {{load(0, 64, 1024, 1024, 1), wait(1)}}};
  c.xbar.write_port_bandwidth = Bandwidth{0};
  const Tick full = run(c, {ld}, 0).time;
  c.xbar.write_port_bandwidth = Bandwidth{c.xbar.port_bandwidth.bytes_per_second / 4};
  CHECK(run(c, {ld}, 0).time == full);
}

TEST_CASE(
    "Issue ops take warp instructions / (sm.issue_per_cycle × clock) on the SM's schedulers, "
    "apart from the other pipes, and count as instructions, not FLOPs",
    "[run][compute][issue]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  c.sm.issue_per_cycle = 2;
  const std::uint64_t instructions = 300'000;
  const Tick issue = static_cast<Tick>(std::llround(
      static_cast<double>(instructions) / (c.sm.issue_per_cycle * c.sm.clock.hertz) * 1e12));
  // Two CTAs on one SM: their issue ops take turns on the schedulers.
  TestKernel k{
      kernel_info("issue"),
      {{compute(ComputeUnit::issue, instructions)}, {compute(ComputeUnit::issue, instructions)}}};
  const RunResult r = run(c, {k}, 0);
  CHECK(r.time == 2 * issue);
  CHECK(r.traffic.flops == 0);
  CHECK(r.traffic.warp_instructions == 2 * instructions);
  const ResourceUse& u =
      r.kernels.at(0).resources[static_cast<std::size_t>(ResourceClass::kIssuePipe)];
  CHECK(u.requests == 2);
  CHECK(u.busiest_busy == 2 * issue);
  // With the other CTA's op on the sfu pipe instead, the two overlap: the kernel takes the longer.
  const Tick sfu = static_cast<Tick>(std::llround(
      static_cast<double>(instructions) / (c.sm.sfu_ops_per_cycle * c.sm.clock.hertz) * 1e12));
  TestKernel mixed{
      kernel_info("mixed"),
      {{compute(ComputeUnit::issue, instructions)}, {compute(ComputeUnit::sfu, instructions)}}};
  CHECK(run(c, {mixed}, 0).time == std::max(issue, sfu));
}

TEST_CASE("efficiency.pipe_serial lets a CTA's next op on another pipe start before this one ends",
          "[run][compute]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  // 1 MFLOP on the tensor pipe (1024 FLOP/cycle at 1 GHz) and on fp32 (256 FLOP/cycle): 1 and
  // 4 microseconds at full rate.
  const Tick tensor = static_cast<Tick>(
      std::llround(1e6 / (c.sm.tensor_flops_per_cycle * c.sm.clock.hertz) * 1e12));
  const Tick fp32 =
      static_cast<Tick>(std::llround(1e6 / (c.sm.fp32_flops_per_cycle * c.sm.clock.hertz) * 1e12));
  const auto time_of = [&](double serial, std::vector<Op> ops) {
    c.efficiency.pipe_serial = serial;
    return run(c, {TestKernel{kernel_info("ops"), {std::move(ops)}}}, 0).time;
  };
  const std::vector<Op> two_pipes = {compute(ComputeUnit::tensor, 1'000'000),
                                     compute(ComputeUnit::fp32, 1'000'000)};
  CHECK(time_of(1.0, two_pipes) == tensor + fp32);
  // At 0.5 the fp32 op starts when half the tensor op is done; the CTA ends with its last pipe.
  const Tick half_tensor =
      static_cast<Tick>(std::llround(static_cast<double>(tensor) * 0.5));  // to the ps
  CHECK(time_of(0.5, two_pipes) == half_tensor + fp32);
  // The same pipe twice still runs one op after the other.
  const std::vector<Op> one_pipe = {compute(ComputeUnit::tensor, 1'000'000),
                                    compute(ComputeUnit::tensor, 1'000'000)};
  CHECK(time_of(0.5, one_pipe) == 2 * tensor);
  // A wait (or any memory op) comes after every pipe is done: fp32, then tensor overlapping it.
  const std::vector<Op> then_wait = {compute(ComputeUnit::fp32, 1'000'000),
                                     compute(ComputeUnit::tensor, 1'000'000), wait(),
                                     compute(ComputeUnit::tensor, 1'000'000)};
  CHECK(time_of(0.5, then_wait) == fp32 + tensor);
  CHECK(time_of(1.0, then_wait) == fp32 + 2 * tensor);
}

TEST_CASE("sm.smem_pipe = tensor books shared-memory traffic on the tensor pipe",
          "[run][compute]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  const std::uint64_t flops = 1'000'000, bytes = 256 * 1024;
  const Tick tensor = static_cast<Tick>(std::llround(
      static_cast<double>(flops) / (c.sm.tensor_flops_per_cycle * c.sm.clock.hertz) * 1e12));
  const Tick smem = static_cast<Tick>(
      std::llround(static_cast<double>(bytes) / c.sm.smem_bandwidth.bytes_per_second * 1e12));
  REQUIRE(smem != tensor);
  // Two CTAs on the one SM: one reads shared memory, the other runs MMAs.
  const TestKernel k{kernel_info("mma"), {{smem_op(bytes)}, {compute(ComputeUnit::tensor, flops)}}};
  c.sm.smem_pipe = PipeBooking::kOwn;
  CHECK(run(c, {k}, 0).time == std::max(smem, tensor));  // two pipes: they overlap
  c.sm.smem_pipe = PipeBooking::kTensor;
  const RunResult shared = run(c, {k}, 0);
  CHECK(shared.time == smem + tensor);  // one pipe: they take turns, each at its own rate
  CHECK(shared.traffic.smem_bytes == bytes);
  CHECK(shared.traffic.flops == flops);

  // `turns`: the MMAs also take their time from the shared-memory pipe, so shared-memory work
  // booked after them waits (T + S); the MMAs themselves do not wait for shared memory booked
  // before them (their booking there comes after it), and the issue slots stay apart.
  c.sm.smem_pipe = PipeBooking::kTurns;
  const TestKernel tensor_first{kernel_info("mma"),
                                {{compute(ComputeUnit::tensor, flops)}, {smem_op(bytes)}}};
  CHECK(run(c, {tensor_first}, 0).time == tensor + smem);
  CHECK(run(c, {k}, 0).time == std::max(smem, tensor));
  const std::uint64_t instructions = 300'000;
  const Tick issue = static_cast<Tick>(std::llround(
      static_cast<double>(instructions) / (c.sm.issue_per_cycle * c.sm.clock.hertz) * 1e12));
  const TestKernel issue_beside{
      kernel_info("mma"),
      {{compute(ComputeUnit::tensor, flops)}, {compute(ComputeUnit::issue, instructions)}}};
  CHECK(run(c, {issue_beside}, 0).time == std::max(issue, tensor));
}

TEST_CASE("sm.issue_pipe = tensor books declared warp instructions on the tensor pipe",
          "[run][compute]") {
  HardwareConfig c = small_config();
  c.sm.count = 1;
  c.sm.tensor_clock = Frequency{c.sm.clock.hertz / 2};  // the schedulers keep sm.clock
  const std::uint64_t flops = 1'000'000, instructions = 300'000;
  const Tick tensor = static_cast<Tick>(std::llround(
      static_cast<double>(flops) / (c.sm.tensor_flops_per_cycle * c.sm.tensor_clock.hertz) * 1e12));
  const Tick issue = static_cast<Tick>(std::llround(
      static_cast<double>(instructions) / (c.sm.issue_per_cycle * c.sm.clock.hertz) * 1e12));
  REQUIRE(issue != tensor);
  // Two CTAs on the one SM: one issues instructions, the other runs MMAs.
  const TestKernel k{
      kernel_info("mma"),
      {{compute(ComputeUnit::issue, instructions)}, {compute(ComputeUnit::tensor, flops)}}};
  CHECK(run(c, {k}, 0).time == std::max(issue, tensor));  // the default, own: they overlap
  c.sm.issue_pipe = PipeBooking::kTensor;
  const RunResult shared = run(c, {k}, 0);
  CHECK(shared.time == issue + tensor);  // one pipe: they take turns, each at its own rate
  CHECK(shared.traffic.warp_instructions == instructions);
  CHECK(shared.traffic.flops == flops);
}

TEST_CASE("Stall fractions sum to 1 and a lone CTA on many SMs is mostly idle", "[run][stall]") {
  const HardwareConfig c = small_config();
  const std::uint64_t bytes = 256 * 1024;
  const RunResult r = run(c, {streaming_kernel(1, bytes)}, bytes);
  const StallTime f = stall_fractions(r.stall, r.sm_count, r.time);
  CHECK(f.compute + f.memory_latency + f.memory_bandwidth + f.idle == Approx(1.0));
  CHECK(f.idle == Approx(static_cast<double>(c.sm.count - 1) / c.sm.count).epsilon(0.01));
  CHECK(f.memory_bandwidth > f.memory_latency);  // one port, many lines: queueing dominates
}

TEST_CASE("A CTA that fits no SM is a usage error naming the kernel and what fits",
          "[run][errors]") {
  const HardwareConfig c = small_config();
  TestKernel k{kernel_info("too_big", c.sm.smem_per_block.count + 1), {{Op{}}}};
  try {
    run(c, {k}, 0);
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("too_big") != std::string::npos);
    CHECK(what.find("96 KiB") != std::string::npos);
  }
}

TEST_CASE("Occupancy limits how many CTAs are resident per SM", "[run][occupancy]") {
  const HardwareConfig c = small_config();
  TestKernel k{kernel_info("smem_bound", c.sm.smem_per_sm.count / 3), {}};
  for (int i = 0; i < 20; ++i) k.ctas.push_back({Op{}});
  const RunResult r = run(c, {k}, 0);
  CHECK(r.kernels[0].ctas_per_sm == 3);
  CHECK(r.kernels[0].occupancy_limit == "shared memory");
  CHECK(r.kernels[0].traffic.ctas == 20);
}

TEST_CASE("Two simulations of the same workload give byte-identical JSON", "[run][determinism]") {
  const HardwareConfig c = small_config();
  const std::uint64_t bytes = 3 * c.l2.size.count / 2;
  auto kernels = [&] {
    TestKernel w{kernel_info("write"), {}};
    for (std::uint64_t b = 0; b < bytes; b += 8192) w.ctas.push_back({store(b, 64, 128, 128)});
    return std::vector<TestKernel>{w, streaming_kernel(6, bytes / 6)};
  };
  const std::string a = run_to_json(run(c, kernels(), bytes));
  const std::string b = run_to_json(run(c, kernels(), bytes));
  CHECK(a == b);
  CHECK(a.find("\"dram_bytes_by_reason\"") != std::string::npos);
}

TEST_CASE(
    "The timeline keeps every kernel and stops writing CTAs and ops at its budgets, saying so",
    "[run][timeline]") {
  const HardwareConfig c = small_config();
  const std::string path = "build-test-run-timeline.json";
  std::vector<TestKernel> kernels{streaming_kernel(10, 64 * 1024), streaming_kernel(10, 64 * 1024)};
  VectorTraceSource source(one_tensor_workload(20 * 64 * 1024), std::move(kernels));
  {
    Timeline timeline(path, /*detail_budget=*/5, /*cta_budget=*/3);
    simulate(c, source, {}, &timeline);
    timeline.finish();
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  CHECK(text.find("\"kernels\":2") != std::string::npos);
  CHECK(text.find("\"cta_slices_written\":3,\"cta_slices_dropped\":17") != std::string::npos);
  CHECK(text.find("\"op_events_written\":5,") != std::string::npos);
  CHECK(text.find("\"op_events_dropped\":0") == std::string::npos);
}
