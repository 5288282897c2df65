#pragma once
// Helpers for the simulator tests: a small hardware config built in code and an in-memory
// TraceSource.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config.h"
#include "traces/trace_source.h"

namespace memwall::test {

/// A small, round-numbered chip: 4 SMs at 1 GHz, 1 MiB L2 in 4 slices (16 ways, 128 B lines,
/// 32 B sectors), 4 HBM channels. Latencies and bandwidths are chosen so transfers are exact ps.
inline HardwareConfig small_config() {
  HardwareConfig c;
  c.name = "test-chip";
  c.sm.count = 4;
  c.sm.clock = Frequency{1e9};
  c.sm.smem_per_sm = Bytes{128 * 1024};
  c.sm.smem_per_block = Bytes{96 * 1024};
  c.sm.max_threads_per_sm = 2048;
  c.sm.max_threads_per_block = 1024;
  c.sm.registers_per_sm = 65536;
  c.sm.max_ctas_per_sm = 8;
  c.sm.tensor_flops_per_cycle = 1024;
  c.sm.fp32_flops_per_cycle = 256;
  c.sm.sfu_ops_per_cycle = 16;
  c.sm.smem_bandwidth = Bandwidth{128e9};
  c.xbar.port_bandwidth = Bandwidth{64e9};  // 32 B = 500 ps
  c.xbar.latency = 100'000;  // 100 ns
  c.l2.size = Bytes{1024 * 1024};
  c.l2.line_size = Bytes{128};
  c.l2.sector_size = Bytes{32};
  c.l2.ways = 16;
  c.l2.slices = 4;
  c.l2.partitions = 2;
  c.l2.hit_latency = 200'000;  // 200 ns
  c.l2.bandwidth = Bandwidth{512e9};  // 128 GB/s per slice: 32 B = 250 ps
  c.hbm.capacity = Bytes{std::uint64_t{1} << 34};
  c.hbm.channels = 4;
  c.hbm.bandwidth = Bandwidth{128e9};  // 32 GB/s per channel: 32 B = 1000 ps
  c.hbm.latency = 300'000;  // 300 ns
  c.hbm.row_size = Bytes{2048};
  c.hbm.row_miss_penalty = 0;
  c.hbm.interleave = Bytes{256};
  return c;
}

/// A CTA's ops; a kernel: its launch description and its CTAs.
struct TestKernel {
  KernelInfo info;
  std::vector<std::vector<Op>> ctas;
};

/// An in-memory workload.
class VectorTraceSource : public TraceSource {
 public:
  VectorTraceSource(WorkloadInfo workload, std::vector<TestKernel> kernels)
      : m_workload(std::move(workload)), m_kernels(std::move(kernels)) {}
  const WorkloadInfo& workload() const override { return m_workload; }
  bool next_kernel(KernelInfo& kernel) override {
    if (m_next_kernel >= m_kernels.size()) return false;
    m_current = m_next_kernel++;
    m_next_cta = 0;
    kernel = m_kernels[m_current].info;
    kernel.ctas = m_kernels[m_current].ctas.size();
    return true;
  }
  bool next_cta(std::vector<Op>& ops) override {
    const TestKernel& k = m_kernels[m_current];
    if (m_next_cta >= k.ctas.size()) return false;
    ops = k.ctas[m_next_cta++];
    return true;
  }

 private:
  WorkloadInfo m_workload;
  std::vector<TestKernel> m_kernels;
  std::size_t m_next_kernel = 0;
  std::size_t m_current = 0;
  std::size_t m_next_cta = 0;
};

inline KernelInfo kernel_info(const std::string& name, std::uint64_t smem = 0,
                              std::uint32_t threads = 128) {
  KernelInfo k;
  k.name = name;
  k.threads_per_cta = threads;
  k.smem_bytes_per_cta = smem;
  k.registers_per_thread = 32;
  return k;
}

inline Op load(std::uint64_t base, std::uint32_t rows, std::uint32_t row_bytes, std::uint64_t pitch,
               std::uint16_t tag = 0, std::uint8_t tensor = 0) {
  Op op;
  op.kind = OpKind::load;
  op.box = Box{base, rows, row_bytes, pitch};
  op.tag = tag;
  op.tensor = tensor;
  return op;
}

inline Op store(std::uint64_t base, std::uint32_t rows, std::uint32_t row_bytes,
                std::uint64_t pitch, std::uint16_t tag = 0) {
  Op op;
  op.kind = OpKind::store;
  op.box = Box{base, rows, row_bytes, pitch};
  op.tag = tag;
  return op;
}

inline Op reduce(std::uint64_t base, std::uint32_t rows, std::uint32_t row_bytes,
                 std::uint64_t pitch) {
  Op op = store(base, rows, row_bytes, pitch);
  op.kind = OpKind::reduce;
  return op;
}

inline Op wait(std::uint16_t tag = 0) {
  Op op;
  op.kind = OpKind::wait;
  op.tag = tag;
  return op;
}

inline Op compute(ComputeUnit unit, std::uint64_t amount) {
  Op op;
  op.kind = OpKind::compute;
  op.unit = unit;
  op.amount = amount;
  return op;
}

inline Op smem_op(std::uint64_t bytes) {
  Op op;
  op.kind = OpKind::smem;
  op.amount = bytes;
  return op;
}

/// A workload with one tensor "X" covering [0, bytes).
inline WorkloadInfo one_tensor_workload(std::uint64_t bytes) {
  WorkloadInfo w;
  w.name = "test";
  w.params = {{"bytes", std::to_string(bytes)}};
  w.tensors = {TensorInfo{"X", 0, bytes}};
  return w;
}

}  // namespace memwall::test
