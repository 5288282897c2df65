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

/// Every instantiation the harness builds, as `ptxas -v` reports it for sm_90 with CUDA 13.0
/// (models/cuda/ptxas_registers.sh prints the same list from a fresh compile).
std::span<const CompiledKernel> compiled_kernels();

/// The registers per thread of the compiled instantiation with these parameters, or nothing when
/// models/cuda does not build that kernel at that shape (the model then estimates them).
std::optional<std::uint32_t> compiled_registers(std::string_view kernel, std::uint32_t head_dim,
                                                std::uint32_t block_a, std::uint32_t block_b,
                                                std::uint32_t stages);

}  // namespace memwall
