#pragma once
/// The flash2-bwd workload: FlashAttention-2's backward pass (Algorithm 2 of the FA2 paper) in
/// the kernels of its CUDA implementation — a preprocessing launch D = rowsum(dO∘O) that also
/// clears the fp32 dQ accumulator; the main launch, one CTA per (query head, K/V block), looping
/// over the Q blocks that see it, recomputing P from Q, K and the saved logsumexp L, accumulating
/// dK and dV on chip and adding dS·K into the dQ accumulator with atomics; a launch converting dQ
/// to the input dtype; and, with grouped-query heads, one summing each group's dK and dV. Its
/// plugin and its closed form (docs/models.md derives it).

#include <cstdint>

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The flash2-bwd plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash2_bwd_plugin();

/// The global traffic of resolved flash2-bwd parameters `p`, per tensor, with R the Q rows the
/// main launch visits per query head (Tc·Nq without the mask, Σⱼ (Nq − first_q_block(j)·Br)
/// with it): O, dO read once by the preprocessing (dO again R rows by the main launch), D and
/// the cleared dQ accumulator written once; Q and the fp32 L and D read R rows; K and V read
/// once per query head; the accumulator reduced into R rows and read once to convert it; dQ
/// written once; dK and dV written once per K/V head (with groups: once per query head into
/// dK_expanded/dV_expanded, read back and summed).
Traffic flash2_bwd_traffic(const WorkloadParams& p);

}  // namespace memwall
