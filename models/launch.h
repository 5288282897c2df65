#pragma once
/// A launch's grid and per-CTA resources (traces/op.h's KernelInfo), and the registers model the
/// plugins share: the count ptxas gives the CUDA twin where models/cuda compiles one at these
/// parameters, otherwise an estimate from the fp32 accumulators a thread holds.

#include <cstdint>
#include <string_view>

#include "models/workload_params.h"
#include "traces/op.h"

namespace memwall {

/// A launch of `ctas` CTAs of kernel `name`, each with `threads` threads, `smem_bytes` of shared
/// memory and `registers` per thread.
KernelInfo make_launch(const char* name, std::uint64_t ctas, std::uint32_t threads,
                       std::uint64_t smem_bytes, std::uint32_t registers);

/// Registers of a thread: 32 for addressing and loop state plus the fp32 accumulators the CTA
/// holds in registers (`values` elements spread over `threads`), at most the hardware's 255.
std::uint32_t estimated_registers(std::uint64_t values, std::uint32_t threads);

/// The registers of the CUDA kernel in models/cuda that `kernel` mirrors, when that kernel is
/// compiled at these (unclamped) template parameters for fp16 (models/compiled_registers.h);
/// otherwise estimated_registers(values, threads).
std::uint32_t kernel_registers(const WorkloadParams& p, std::string_view kernel,
                               std::uint32_t block_a, std::uint32_t block_b, std::uint32_t stages,
                               std::uint64_t values, std::uint32_t threads);

}  // namespace memwall
