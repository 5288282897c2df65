#include "models/compiled_instructions.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace memwall {
namespace {

// traces/measured/h200-issue-probe/analyze.txt and law.txt, their "terms" lines (nvcc 13.0,
// sm_90, -O3; ncu on the H200, 2026-12-05 and the backward runs before it).
constexpr std::array kTerms = {
    InstructionTerms{"flash2_fwd", 64, 64, 64, 2, 3000, 0, 2372},
    InstructionTerms{"flash2_fwd", 64, 64, 64, 3, 3060, 0, 2196},
    InstructionTerms{"flash2_fwd", 64, 64, 128, 2, 5124, 0, 2528},
    InstructionTerms{"flash2_fwd", 64, 128, 64, 2, 4520, 0, 4132},
    InstructionTerms{"flash2_fwd", 64, 128, 128, 2, 7896, 0, 4252},
    InstructionTerms{"flash2_fwd", 128, 64, 64, 2, 4348, 0, 4312},
    InstructionTerms{"flash2_fwd", 128, 64, 64, 3, 4472, 0, 4116},
    InstructionTerms{"flash2_fwd", 128, 64, 128, 2, 7864, 0, 4344},
    InstructionTerms{"flash2_fwd", 128, 128, 32, 2, 4096, 0, 7064},
    InstructionTerms{"flash2_fwd", 128, 128, 64, 2, 7844, 0, 7124},
    InstructionTerms{"flash2_fwd_variant", 64, 128, 128, 2, 8072, 1111, 5680},
    InstructionTerms{"flash2_fwd_variant", 128, 128, 64, 2, 8072, 592, 8992},
    InstructionTerms{"qk", 64, 128, 128, 0, 0, 0, 7280},
    InstructionTerms{"qk", 128, 128, 128, 0, 0, 0, 10024},
    InstructionTerms{"pv", 64, 128, 64, 0, 2624, 0, 2896},
    InstructionTerms{"pv", 128, 128, 64, 0, 3440, 0, 4856},
    InstructionTerms{"flash2_bwd", 64, 128, 128, 0, 21994, 0, 6584},
    InstructionTerms{"flash2_bwd_causal", 64, 128, 128, 0, 22858, 0, 4924},
    InstructionTerms{"flash2_bwd", 128, 64, 128, 0, 17500, 0, 11384},
    InstructionTerms{"flash2_bwd_causal", 128, 64, 128, 0, 17980, 0, 9708},
    InstructionTerms{"naive_bwd_dv", 64, 128, 64, 0, 2672, 0, 3392},
    InstructionTerms{"naive_bwd_dq", 64, 128, 64, 0, 2480, 0, 3456},
    InstructionTerms{"naive_bwd_dv", 128, 128, 64, 0, 3464, 0, 5368},
    InstructionTerms{"naive_bwd_dq", 128, 128, 64, 0, 3480, 0, 5424},
};

/// x · ratio rounded, at least 1 where x is nonzero (an estimate never drops a term).
std::uint64_t scaled(std::uint64_t x, double ratio) {
  if (x == 0) return 0;
  const double v = std::round(static_cast<double>(x) * ratio);
  if (v >= static_cast<double>(std::numeric_limits<std::uint64_t>::max() / 2)) {
    return std::numeric_limits<std::uint64_t>::max() / 2;
  }
  return v < 1.0 ? 1 : static_cast<std::uint64_t>(v);
}

/// x, clamped to what a 32-bit field holds (the table's shape fields).
std::uint32_t narrow(std::uint64_t x) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(x, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

double dependent_issue_cycles(std::string_view kernel, std::uint64_t head_dim) {
  // traces/measured/h100-stall-probe/analyze.txt, part 1, the rows with w = 1.00 (one 4-warp
  // CTA per SM): L = 1.55 and 1.50 for flash2_fwd_kernel<128, 64, 128, 2> at N = 1024 and 4096,
  // 1.27 for flash2_fwd_variant_kernel<128, 128, 64, 2> in decode (8 and 128 CTAs); and
  // traces/measured/h100-variant-stalls/analyze.txt: 1.75 for flash2_fwd_variant_kernel<64, 128,
  // 128, 2> in causal prefill (N = 1024, 128 CTAs), the kernel's only lone-warp measurement at
  // d = 64 (at d = 128 causal prefill measures 1.46; decode's 1.27 stays, its 27 launches the
  // most). ncu on an H100 SXM of the same sm_90 binary (the H200's SM): stall cycles per issued
  // instruction, summed over the reasons a lone warp waits on itself.
  if (kernel == "flash2_fwd") return 1.0 + 1.50;
  if (kernel == "flash2_fwd_variant") return head_dim <= 64 ? 1.0 + 1.75 : 1.0 + 1.27;
  return 0.0;
}

double combine_round_chain_cycles() { return 243.0; }

std::span<const InstructionTerms> compiled_instruction_terms() { return kTerms; }

KernelInstructions kernel_instructions(std::string_view kernel, std::uint64_t head_dim,
                                       std::uint64_t block_a, std::uint64_t block_b,
                                       std::uint64_t stages) {
  const InstructionTerms* nearest = nullptr;
  for (const InstructionTerms& t : kTerms) {
    if (t.kernel != kernel) continue;
    if (t.head_dim == head_dim && t.block_a == block_a && t.block_b == block_b &&
        t.stages == stages) {
      return {t, true};
    }
    // The nearest head dimension; at equal distance the smaller; within it the first listed
    // (each kernel's list starts at its default tiling or the one the harness runs).
    const auto distance = [&](const InstructionTerms& x) {
      return x.head_dim > head_dim ? x.head_dim - head_dim : head_dim - x.head_dim;
    };
    if (nearest == nullptr || distance(t) < distance(*nearest)) nearest = &t;
  }
  if (nearest == nullptr) {
    throw std::logic_error("kernel_instructions: no measured terms for kernel " +
                           std::string(kernel));
  }
  const double work =
      static_cast<double>(block_a) * static_cast<double>(block_b) * static_cast<double>(head_dim);
  const double ratio =
      work / (static_cast<double>(nearest->block_a) * nearest->block_b * nearest->head_dim);
  InstructionTerms t = *nearest;
  t.head_dim = narrow(head_dim);
  t.block_a = narrow(block_a);
  t.block_b = narrow(block_b);
  t.stages = narrow(stages);
  t.per_step = scaled(t.per_step, ratio);
  t.per_masked_step = scaled(t.per_masked_step, ratio);
  t.per_cta = scaled(t.per_cta, ratio);
  return {t, false};
}

}  // namespace memwall
