#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace memwall {

/// One template instantiation of a CUDA kernel in models/cuda and the registers per thread that
/// ptxas gives it. `block_a`/`block_b` are the kernel's own tile parameters: qk <D, BM, BN>,
/// pv <D, BM, BK>, flash2_fwd <D, BR, BC> (with `stages`; 0 for the naive kernels).
struct CompiledKernel {
  std::string_view kernel;
  std::uint32_t head_dim;
  std::uint32_t block_a;
  std::uint32_t block_b;
  std::uint32_t stages;
  std::uint32_t registers;
};

/// Every instantiation the harness builds, as `ptxas -v` reports it with CUDA 13.0 for the
/// architecture `arch` (compute capability x 10: 90 or 80; empty for any other, whose counts
/// nobody has compiled). models/cuda/ptxas_registers.sh prints the same lists from a fresh compile.
std::span<const CompiledKernel> compiled_kernels(std::uint32_t arch);

/// The registers per thread of the instantiation with these parameters compiled for `arch`, or
/// nothing when models/cuda does not build that kernel at that shape for that architecture (the
/// model then estimates them).
std::optional<std::uint32_t> compiled_registers(std::uint32_t arch, std::string_view kernel,
                                                std::uint32_t head_dim, std::uint32_t block_a,
                                                std::uint32_t block_b, std::uint32_t stages);

}  // namespace memwall
