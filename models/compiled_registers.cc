#include "models/compiled_registers.h"

#include <array>

namespace memwall {
namespace {

// ptxas -v, sm_90, nvcc 13.0 (V13.0.88), -O3, as in models/cuda/ptxas-registers.txt
// (test_compiled_registers checks that they agree; CTest cuda_registers recompiles and checks the
// file).
constexpr std::array kCompiledSm90 = {
    CompiledKernel{"qk", 64, 64, 64, 0, 43},
    CompiledKernel{"qk", 64, 128, 128, 0, 120},
    CompiledKernel{"qk", 128, 64, 64, 0, 43},
    CompiledKernel{"qk", 128, 128, 128, 0, 119},
    CompiledKernel{"pv", 64, 64, 64, 0, 48},
    CompiledKernel{"pv", 64, 128, 64, 0, 72},
    CompiledKernel{"pv", 128, 64, 64, 0, 80},
    CompiledKernel{"pv", 128, 128, 64, 0, 131},
    CompiledKernel{"flash2_fwd", 64, 64, 64, 2, 122},
    CompiledKernel{"flash2_fwd", 64, 64, 64, 3, 122},
    CompiledKernel{"flash2_fwd", 64, 64, 128, 2, 159},
    CompiledKernel{"flash2_fwd", 64, 128, 64, 2, 215},
    CompiledKernel{"flash2_fwd", 64, 128, 128, 2, 252},
    CompiledKernel{"flash2_fwd", 128, 64, 64, 2, 168},
    CompiledKernel{"flash2_fwd", 128, 64, 64, 3, 168},
    CompiledKernel{"flash2_fwd", 128, 64, 128, 2, 223},
    CompiledKernel{"flash2_fwd", 128, 128, 32, 2, 248},
    CompiledKernel{"flash2_fwd", 128, 128, 64, 2, 255},
};

// The same kernels for sm_80, as in models/cuda/ptxas-registers-sm80.txt
// (`ARCH=80 sh models/cuda/ptxas_registers.sh`, nvcc 13.0): up to 15 registers from sm_90's.
constexpr std::array kCompiledSm80 = {
    CompiledKernel{"qk", 64, 64, 64, 0, 48},
    CompiledKernel{"qk", 64, 128, 128, 0, 105},
    CompiledKernel{"qk", 128, 64, 64, 0, 48},
    CompiledKernel{"qk", 128, 128, 128, 0, 120},
    CompiledKernel{"pv", 64, 64, 64, 0, 48},
    CompiledKernel{"pv", 64, 128, 64, 0, 74},
    CompiledKernel{"pv", 128, 64, 64, 0, 80},
    CompiledKernel{"pv", 128, 128, 64, 0, 134},
    CompiledKernel{"flash2_fwd", 64, 64, 64, 2, 122},
    CompiledKernel{"flash2_fwd", 64, 64, 64, 3, 122},
    CompiledKernel{"flash2_fwd", 64, 64, 128, 2, 158},
    CompiledKernel{"flash2_fwd", 64, 128, 64, 2, 214},
    CompiledKernel{"flash2_fwd", 64, 128, 128, 2, 255},
    CompiledKernel{"flash2_fwd", 128, 64, 64, 2, 168},
    CompiledKernel{"flash2_fwd", 128, 64, 64, 3, 168},
    CompiledKernel{"flash2_fwd", 128, 64, 128, 2, 220},
    CompiledKernel{"flash2_fwd", 128, 128, 32, 2, 246},
    CompiledKernel{"flash2_fwd", 128, 128, 64, 2, 247},
};

}  // namespace

std::span<const CompiledKernel> compiled_kernels(std::uint32_t arch) {
  if (arch == 90) return kCompiledSm90;
  if (arch == 80) return kCompiledSm80;
  return {};
}

std::optional<std::uint32_t> compiled_registers(std::uint32_t arch, std::string_view kernel,
                                                std::uint32_t head_dim, std::uint32_t block_a,
                                                std::uint32_t block_b, std::uint32_t stages) {
  for (const CompiledKernel& k : compiled_kernels(arch)) {
    if (k.kernel == kernel && k.head_dim == head_dim && k.block_a == block_a &&
        k.block_b == block_b && k.stages == stages) {
      return k.registers;
    }
  }
  return std::nullopt;
}

}  // namespace memwall
