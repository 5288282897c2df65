#pragma once
/// The flash1 workload: FlashAttention Algorithm 1 as written, an init launch then one CTA per
/// head looping over K/V blocks outside and Q blocks inside. Its plugin, its default blocks and
/// its closed form (docs/models.md has the kernels and the derivation).

#include <cstdint>
#include <utility>

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The flash1 plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash1_plugin();

/// The default flash1 block sizes from an SRAM of `sram_elements` elements (Algorithm 1):
/// Bc = ⌈M/4d⌉, Br = min(⌈M/4d⌉, d). Returns {Br, Bc}.
std::pair<std::uint64_t, std::uint64_t> flash1_default_blocks(std::uint64_t sram_elements,
                                                              std::uint64_t head_dim);

/// FlashAttention Algorithm 1 with Tc = ⌈N/Bc⌉ passes, per head: reads K, V once (Nd each),
/// Q and O Tc times (Tc·Nd each), ℓ and m Tc times (Tc·N fp32 each); writes O Tc·Nd and ℓ, m
/// Tc·N fp32 each, plus, when `count_init`, the initialisation O = 0, ℓ = 0, m = −∞ (Nd + 2N).
/// The kernels do initialise (a flash1_init launch), so the workload's traffic has count_init.
/// Br does not change the traffic.
Traffic flash1_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                       std::uint32_t element_bytes, std::uint64_t block_kv, bool count_init = true);

}  // namespace memwall
