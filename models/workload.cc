#include "models/workload.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "models/compiled_registers.h"
#include "models/flash1.h"
#include "models/flash2.h"
#include "models/gemm.h"
#include "models/naive.h"
#include "models/spill.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// Registers of a thread: 32 for addressing and loop state plus the fp32 accumulators the CTA
/// holds in registers (`values` elements spread over `threads`), at most the hardware's 255.
std::uint32_t registers_for(std::uint64_t values, std::uint32_t threads) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(255, 32 + ceil_div(values, threads)));
}

/// The registers of the CUDA kernel in models/cuda that this kernel mirrors, when that kernel is
/// compiled at these (unclamped) template parameters for fp16; otherwise the estimate above.
std::uint32_t kernel_registers(const WorkloadParams& p, std::string_view kernel,
                               std::uint32_t block_a, std::uint32_t block_b, std::uint32_t stages,
                               std::uint64_t values, std::uint32_t threads) {
  if (p.dtype == Dtype::fp16 && p.head_dim <= std::numeric_limits<std::uint32_t>::max()) {
    if (const auto regs = compiled_registers(kernel, static_cast<std::uint32_t>(p.head_dim),
                                             block_a, block_b, stages)) {
      return *regs;
    }
  }
  return registers_for(values, threads);
}

KernelInfo launch(const char* name, std::uint64_t ctas, std::uint32_t threads, std::uint64_t smem,
                  std::uint32_t regs) {
  KernelInfo k;
  k.name = name;
  k.ctas = ctas;
  k.threads_per_cta = threads;
  k.smem_bytes_per_cta = smem;
  k.registers_per_thread = regs;
  return k;
}

}  // namespace

std::vector<KernelInfo> kernel_launches(const WorkloadParams& p) {
  const std::uint64_t s = p.element_size();
  std::vector<KernelInfo> out;
  if (p.workload == WorkloadKind::gemm) {
    const std::uint64_t tm = std::min<std::uint64_t>(*p.tile_m, p.m);
    const std::uint64_t tn = std::min<std::uint64_t>(*p.tile_n, p.n);
    const std::uint64_t tk = std::min<std::uint64_t>(*p.tile_k, p.k);
    out.push_back(launch("gemm", ceil_div(p.m, *p.tile_m) * ceil_div(p.n, *p.tile_n), 256,
                         (tm * tk + tk * tn) * s, registers_for(tm * tn, 256)));
    return out;
  }
  const std::uint64_t n = p.seq, d = p.head_dim, bh = p.batch_heads();
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, n);
  switch (p.workload) {
    case WorkloadKind::naive: {
      const std::uint64_t bk = std::min<std::uint64_t>(*p.block_k, n);
      const std::uint64_t rows = std::min<std::uint64_t>(*p.softmax_rows, n);
      out.push_back(launch("qk", bh * ceil_div(n, *p.block_q) * ceil_div(n, *p.block_kv), 256,
                           (br + bc) * d * s,
                           kernel_registers(p, "qk", *p.block_q, *p.block_kv, 0, br * bc, 256)));
      out.push_back(launch("softmax", bh * ceil_div(n, *p.softmax_rows),
                           static_cast<std::uint32_t>(32 * rows), rows * n * s, 32));
      out.push_back(launch("pv", bh * ceil_div(n, *p.block_q), 256,
                           2 * (br * bk + bk * d) * s,  // two P/V stages
                           kernel_registers(p, "pv", *p.block_q, *p.block_k, 0, br * d, 256)));
      break;
    }
    case WorkloadKind::flash1:
      out.push_back(launch("flash1_init", bh * ceil_div(n, *p.block_q), 128, 0, 32));
      out.push_back(launch("flash1_fwd", bh, 128, (br + 2 * bc) * d * s,
                           registers_for(br * d + br * bc, 128)));
      break;
    case WorkloadKind::flash2:
      out.push_back(launch("flash2_fwd", bh * ceil_div(n, *p.block_q), 128,
                           (br + 2 * std::uint64_t{*p.stages} * bc) * d * s,
                           kernel_registers(p, "flash2_fwd", *p.block_q, *p.block_kv, *p.stages,
                                            br * d + br * bc, 128)));
      break;
    case WorkloadKind::gemm: break;
  }
  // A spilling forward kernel declares exactly the limit: what fits is all it keeps on chip.
  if (const SpillPlan plan = spill_plan(p); plan.active) {
    out.back().smem_bytes_per_cta = plan.limit_bytes;
  }
  return out;
}

Workload::Workload(WorkloadParams resolved) : m_params(std::move(resolved)) {
  m_info.name = std::string(to_string(m_params.workload));
  m_info.params = m_params.named();
  m_kernels = kernel_launches(m_params);
}

std::uint8_t Workload::add_tensor(const char* name, std::uint64_t rows, std::uint64_t cols,
                                  std::uint32_t element_bytes) {
  TensorInfo t;
  t.name = name;
  t.base = m_next_base;
  t.bytes = rows * cols * element_bytes;
  m_next_base += ceil_div(std::max<std::uint64_t>(t.bytes, 1), kTensorAlignment) * kTensorAlignment;
  m_info.tensors.push_back(t);
  m_rows.push_back(rows);
  m_cols.push_back(cols);
  m_elem.push_back(element_bytes);
  return static_cast<std::uint8_t>(m_info.tensors.size() - 1);
}

std::uint8_t Workload::tensor_id(const std::string& name) const {
  for (std::size_t i = 0; i < m_info.tensors.size(); ++i) {
    if (m_info.tensors[i].name == name) return static_cast<std::uint8_t>(i);
  }
  throw UsageError("workload " + m_info.name + " has no tensor \"" + name + "\"");
}

Box Workload::box(std::uint8_t id, std::uint64_t row, std::uint64_t rows, std::uint64_t col,
                  std::uint64_t cols) const {
  Box b;
  const std::uint64_t pitch = m_cols[id] * m_elem[id];
  b.base = m_info.tensors[id].base + row * pitch + col * m_elem[id];
  b.rows = static_cast<std::uint32_t>(rows);
  b.row_bytes = static_cast<std::uint32_t>(cols * m_elem[id]);
  b.pitch = pitch;
  return b;
}

EigenBackend Workload::make_data(std::uint64_t seed) const {
  EigenBackend data;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::size_t i = 0; i < m_info.tensors.size(); ++i) {
    EigenBackend::Matrix m = EigenBackend::Matrix::Zero(static_cast<Eigen::Index>(m_rows[i]),
                                                        static_cast<Eigen::Index>(m_cols[i]));
    const std::string& name = m_info.tensors[i].name;
    if (name == "Q" || name == "K" || name == "V" || name == "A" || name == "B") {
      for (Eigen::Index r = 0; r < m.rows(); ++r) {
        for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = uniform(rng);
      }
    }
    data.tensors.push_back(std::move(m));
  }
  return data;
}

void Workload::compute_all(EigenBackend& data) const {
  std::vector<Op> ops;
  for (std::size_t k = 0; k < m_kernels.size(); ++k) {
    for (std::uint64_t c = 0; c < m_kernels[k].ctas; ++c) {
      throw_if_interrupted();
      ops.clear();
      Recorder rec(ops);
      compute_cta(k, c, data, rec);
    }
  }
}

std::unique_ptr<Workload> make_workload(const WorkloadParams& params) {
  const WorkloadParams p = resolve_workload(params);
  switch (p.workload) {
    case WorkloadKind::naive: return make_naive(p);
    case WorkloadKind::flash1: return make_flash1(p);
    case WorkloadKind::flash2: return make_flash2(p);
    case WorkloadKind::gemm: return make_gemm(p);
  }
  throw UsageError("unknown workload");
}

}  // namespace memwall
