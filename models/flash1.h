#pragma once
/// The flash1 workload: FlashAttention Algorithm 1 as written, an init launch then one CTA per
/// head looping over K/V blocks outside and Q blocks inside. Its plugin, its default blocks and
/// its closed form (docs/models.md has the kernels and the derivation).

#include <cstdint>
#include <utility>

#include "models/attention_params.h"
#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The flash1 plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash1_plugin();

/// The default flash1 block sizes from an SRAM of `sram_elements` elements (Algorithm 1):
/// Bc = ⌈M/4d⌉, Br = min(⌈M/4d⌉, d). Returns {Br, Bc}.
std::pair<std::uint64_t, std::uint64_t> flash1_default_blocks(std::uint64_t sram_elements,
                                                              std::uint64_t head_dim);

/// FlashAttention Algorithm 1 for resolved `p`, with Tc = ⌈Nkv/Bc⌉ passes, per query head:
/// reads K, V once (Nkv·d each, its K/V head's, through each query head); Q and O once per
/// visited (pass, Q block) — Tc·Nq rows without the mask, Σⱼ (Nq − AttentionShape::first_q_block(Br, j·Bc)·Br) with it —
/// and ℓ and m (fp32) as many rows; writes O, ℓ, m as many rows, plus, when `count_init`, the
/// initialisation O = 0, ℓ = 0, m = −∞ (Nq rows each). The kernels do initialise (a flash1_init
/// launch), so the workload's traffic has count_init. docs/models.md derives it.
Traffic flash1_traffic(const WorkloadParams& resolved, bool count_init = true);

}  // namespace memwall
