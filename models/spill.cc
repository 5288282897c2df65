#include "models/spill.h"

#include <algorithm>
#include <limits>

#include "models/checked_bytes.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"

namespace memwall {

std::uint64_t flash_tile_smem_bytes(const WorkloadParams& p, std::uint64_t kv_buffers,
                                    std::uint64_t q_rows) {
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, q_rows == 0 ? p.seq : q_rows);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.kv_seq());
  return (br + 2 * kv_buffers * bc) * p.head_dim * p.element_size();
}

SpillPlan plan_spill(const WorkloadParams& p, const FlashLoop& loop) {
  SpillPlan plan;
  if (!p.allow_spill || !p.smem_limit_bytes) return plan;
  if (flash_tile_smem_bytes(p, loop.kv_buffers) <= *p.smem_limit_bytes) return plan;

  const std::uint64_t s = p.element_size(), d = p.head_dim, n = p.seq;
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, n);
  plan.active = true;
  plan.limit_bytes = *p.smem_limit_bytes;
  plan.kv_buffers = loop.kv_buffers;
  plan.kv_outer = loop.kv_outer;

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
  plan.scratch_rows = p.batch_heads() * (loop.kv_outer ? 1 : ceil_div(n, br));
  return plan;
}

SpillPlan spill_plan(const WorkloadParams& p) { return workload_plugin(p.workload).spill_plan(p); }

TensorTraffic spill_traffic(const WorkloadParams& p) {
  TensorTraffic t{"spill", 0, 0};
  const SpillPlan plan = spill_plan(p);
  if (!plan.active) return t;
  const std::uint64_t n = p.seq, d = p.head_dim, br = *p.block_q, bc = *p.block_kv;
  const std::uint64_t tr = ceil_div(n, br), tc = ceil_div(n, bc);
  // Row tiles: tr − 1 of min(br, n) rows and a last one of the rest (the same for columns).
  const std::uint64_t last_r = n - (tr - 1) * br, last_c = n - (tc - 1) * bc;
  const std::uint64_t full_r = std::min(br, n), full_c = std::min(bc, n);
  const std::uint64_t sq = (tr - 1) * plan.q_spilled(full_r) + plan.q_spilled(last_r);
  const std::uint64_t ss = (tr - 1) * plan.score_spilled(full_r) + plan.score_spilled(last_r);
  const std::uint64_t sk = (tc - 1) * plan.kv_spilled(full_c) + plan.kv_spilled(last_c);
  const std::uint64_t scores = 2 * n * ss;
  const std::uint64_t read = tc * d * sq + 2 * tr * d * sk + scores;
  const std::uint64_t write =
      plan.kv_outer ? tc * d * sq + 2 * d * sk + scores : d * sq + 2 * tr * d * sk + scores;
  const std::uint64_t scale = p.batch_heads() * p.element_size();
  t.read_bytes = read * scale;
  t.write_bytes = write * scale;
  return t;
}

Traffic with_spill_traffic(Traffic traffic, const WorkloadParams& p) {
  if (!spill_plan(p).active) return traffic;
  std::vector<TensorTraffic> tensors = std::move(traffic.by_tensor);
  tensors.push_back(spill_traffic(p));
  return make_traffic(std::move(tensors));
}

void resolve_spill(WorkloadParams& p, const FlashLoop& loop) {
  if (!p.smem_limit_bytes) p.allow_spill = false;  // no limit: nothing to spill against
  const SpillPlan plan = plan_spill(p, loop);
  if (!plan.active) return;
  const std::uint64_t slice =
      checked_mul(plan.scratch_elements, p.element_size(), "the spill scratch per CTA");
  checked_mul(plan.scratch_rows, slice, "the spill scratch");
  if (slice > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError("the spill scratch per CTA (" + std::to_string(slice) +
                     " B) must be below 2^32 bytes: reduce block_q/block_kv");
  }
}

std::string flash_smem_formula(const WorkloadParams& p, const std::string& kv_factor) {
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.kv_seq());
  return "(block_q " + std::to_string(br) + " + " + kv_factor + "block_kv " + std::to_string(bc) +
         ")·head_dim " + std::to_string(p.head_dim) + "·" + std::to_string(p.element_size()) + " B";
}

std::string flash_smem_fits(const WorkloadParams& p, const FlashLoop& loop, std::uint64_t limit) {
  const std::uint64_t row = p.head_dim * p.element_size();
  const std::uint64_t rows = limit / row;  // tile rows of head_dim elements that fit
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.kv_seq());
  const std::uint64_t per_kv = 2 * loop.kv_buffers;
  std::string fits;
  if (rows > br && (rows - br) / per_kv > 0) {
    fits += "block_kv <= " + std::to_string((rows - br) / per_kv) + " fits at block_q " +
            std::to_string(br);
  }
  if (rows > per_kv * bc) {
    fits += (fits.empty() ? "" : ", ") + std::string("block_q <= ") +
            std::to_string(rows - per_kv * bc) + " fits at block_kv " + std::to_string(bc);
  }
  if (fits.empty()) {
    fits = rows >= 1 + per_kv ? "block_q + " + std::to_string(per_kv) +
                                    "·block_kv <= " + std::to_string(rows) + " fits"
                              : "not even one row of each tile fits";
  }
  return fits + " (or pass --allow-spill to spill what does not fit to global memory)";
}

}  // namespace memwall
