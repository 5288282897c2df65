#include "models/spill.h"

#include <algorithm>

namespace memwall {

std::uint64_t flash_tile_smem_bytes(const WorkloadParams& p) {
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.seq);
  const std::uint64_t buffers = p.workload == WorkloadKind::flash2 ? *p.stages : 1;
  return (br + 2 * buffers * bc) * p.head_dim * p.element_size();
}

SpillPlan spill_plan(const WorkloadParams& p) {
  SpillPlan plan;
  if (!p.allow_spill || !p.smem_limit_bytes) return plan;
  if (p.workload != WorkloadKind::flash1 && p.workload != WorkloadKind::flash2) return plan;
  if (flash_tile_smem_bytes(p) <= *p.smem_limit_bytes) return plan;

  const std::uint64_t s = p.element_size(), d = p.head_dim, n = p.seq;
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, n);
  plan.active = true;
  plan.limit_bytes = *p.smem_limit_bytes;
  plan.kv_buffers = p.workload == WorkloadKind::flash2 ? *p.stages : 1;

  // Whole rows in priority order: Q, then K/V (evenly over the 2·buffers tiles), then scores.
  std::uint64_t avail = plan.limit_bytes;
  plan.q_keep_rows = std::min(br, avail / (d * s));
  avail -= plan.q_keep_rows * d * s;
  plan.kv_keep_rows = std::min(bc, avail / (2 * plan.kv_buffers * d * s));
  avail -= plan.kv_keep_rows * 2 * plan.kv_buffers * d * s;
  plan.score_keep_rows = std::min(br, avail / (bc * s));

  plan.kv_offset = plan.q_spilled(br) * d;
  plan.score_offset = plan.kv_offset + plan.kv_buffers * 2 * plan.kv_spilled(bc) * d;
  plan.scratch_elements = plan.score_offset + plan.score_spilled(br) * bc;
  plan.scratch_rows = p.batch_heads() * (p.workload == WorkloadKind::flash2 ? ceil_div(n, br) : 1);
  return plan;
}

}  // namespace memwall
