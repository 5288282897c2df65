#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace memwall {

/// The warp instructions one CUDA kernel of models/cuda issues, as exact terms of its structure:
/// so many per step of its main loop, so many more per step the causal mask crosses, and so many
/// per CTA. A step is the kernel's loop body: a K/V tile (flash2_fwd, flash2_fwd_variant), a
/// 64-key chunk (pv, naive_bwd_dv for dV and dK, naive_bwd_dq), a (K/V block, Q block) pair
/// (flash2_bwd, flash2_bwd_causal); qk has no loop (one S tile per CTA: its CTA term). `block_a`,
/// `block_b` and `stages` are the kernel's template parameters, as in compiled_registers.h.
struct InstructionTerms {
  std::string_view kernel;
  std::uint32_t head_dim = 0;
  std::uint32_t block_a = 0;
  std::uint32_t block_b = 0;
  std::uint32_t stages = 0;
  std::uint64_t per_step = 0;
  std::uint64_t per_masked_step = 0;
  std::uint64_t per_cta = 0;
};

/// Every measured instantiation: ncu's smsp__inst_executed.sum of the kernels built for sm_90 on
/// the H200, fitted exactly (residual 0) over several sequence lengths, the same on 132 and 16
/// SMs (traces/measured/h200-issue-probe: analyze.txt for the forward kernels and naive qk/pv,
/// law.txt for the backward ones; test_compiled_instructions checks the two lists).
std::span<const InstructionTerms> compiled_instruction_terms();

/// The terms of `kernel` at these parameters: the measured ones when the instantiation is in the
/// list; otherwise an estimate from the kernel's measured instantiation at the nearest head
/// dimension, both terms scaled by the MMA work of a step (block_a · block_b · head_dim) over
/// that one's. Unmeasured (estimated) terms say so through `measured`.
struct KernelInstructions {
  InstructionTerms terms;
  bool measured = false;
};
/// SM cycles per warp instruction along one warp's chain of dependent instructions, 1 + L, for
/// `kernel` (a name of the table above) at `head_dim`, when one warp per scheduler runs it: L is
/// the cycles a warp stalls per instruction that it issues on its own dependencies (waits on
/// fixed-latency results, shared memory, global memory, branches), not on other warps. A CTA's
/// warps cannot go faster than (warp instructions per warp) · (1 + L), whatever the pipes could
/// take; with two or more warps per scheduler the pipes bind first
/// (traces/measured/h100-stall-probe, h100-variant-stalls). 0 when not measured (the kernel's
/// pipes alone decide its time).
double dependent_issue_cycles(std::string_view kernel, std::uint64_t head_dim);

/// SM cycles of one warp's own dependency chain per round of the split-KV combine's O_accum loads
/// (flash2_combine_kernel: kCombineSplitsInFlight splits loaded, then weighted and summed), beyond
/// the loads' own latency: the slope, in rounds, of (warp instructions per warp) × (1 + its stall
/// cycles per instruction other than the long scoreboard and the barrier) over 24 lone-warp
/// launches of 2 to 128 splits (traces/measured/h100-variant-stalls/analyze.txt).
double combine_round_chain_cycles();

KernelInstructions kernel_instructions(std::string_view kernel, std::uint64_t head_dim,
                                       std::uint64_t block_a, std::uint64_t block_b,
                                       std::uint64_t stages);

}  // namespace memwall
