#include "models/launch.h"

#include <algorithm>
#include <limits>

#include "models/compiled_registers.h"

namespace memwall {

KernelInfo make_launch(const char* name, std::uint64_t ctas, std::uint32_t threads,
                       std::uint64_t smem_bytes, std::uint32_t registers) {
  KernelInfo k;
  k.name = name;
  k.ctas = ctas;
  k.threads_per_cta = threads;
  k.smem_bytes_per_cta = smem_bytes;
  k.registers_per_thread = registers;
  return k;
}

std::uint32_t estimated_registers(std::uint64_t values, std::uint32_t threads) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(255, 32 + ceil_div(values, threads)));
}

std::uint32_t kernel_registers(const WorkloadParams& p, std::string_view kernel,
                               std::uint32_t block_a, std::uint32_t block_b, std::uint32_t stages,
                               std::uint64_t values, std::uint32_t threads) {
  if (p.dtype == Dtype::fp16 && p.head_dim <= std::numeric_limits<std::uint32_t>::max()) {
    if (const auto regs = compiled_registers(p.arch, kernel, static_cast<std::uint32_t>(p.head_dim),
                                             block_a, block_b, stages)) {
      return *regs;
    }
  }
  return estimated_registers(values, threads);
}

}  // namespace memwall
