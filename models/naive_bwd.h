#pragma once
/// The naive-bwd workload: the backward pass of standard attention, unfused, as an autograd of
/// naive attention runs it — dV = PᵀdO, dP = dO·Vᵀ, dS = P∘(dP − rowsum(dP∘P)) (the softmax
/// backward), dQ = scale·dS·K, dK = scale·dSᵀQ — with the saved P and the N×N dP and dS through
/// global memory; with grouped-query heads, each group's dK and dV summed by a last launch. Its
/// plugin and its closed form (docs/models.md derives it).

#include "models/closed_forms.h"
#include "models/workload_plugin.h"

namespace memwall {

/// The naive-bwd plugin (registered in models/workload_list.h).
const WorkloadPlugin& naive_bwd_plugin();

/// The global traffic of resolved naive-bwd parameters `p`, per tensor, per query head in
/// elements (bm = block_q, bn = block_kv): P read twice (by dv and by the softmax backward) and
/// dS twice (by dq and dk), Nq·Nkv each; dP written and read once; dS written once; dO read
/// Nq·d·(⌈Nkv/bm⌉ + ⌈Nkv/bn⌉) (by dv and dp), Q Nq·d·⌈Nkv/bm⌉ (by dk), K and V Nkv·d·⌈Nq/bm⌉
/// (by dq, dp); dQ written once; dK, dV once per K/V head (with groups: once per query head
/// into dK_expanded/dV_expanded, read back and summed). block_k and softmax_rows do not change it.
Traffic naive_bwd_traffic(const WorkloadParams& p);

}  // namespace memwall
