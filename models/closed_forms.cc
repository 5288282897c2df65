#include "models/closed_forms.h"

#include <algorithm>

#include "models/spill.h"

namespace memwall {
namespace {

Traffic make(std::vector<TensorTraffic> tensors) {
  Traffic t;
  t.by_tensor = std::move(tensors);
  for (const TensorTraffic& x : t.by_tensor) {
    t.read_bytes += x.read_bytes;
    t.write_bytes += x.write_bytes;
  }
  return t;
}

}  // namespace

const TensorTraffic* Traffic::find(const std::string& tensor) const {
  for (const TensorTraffic& t : by_tensor) {
    if (t.tensor == tensor) return &t;
  }
  return nullptr;
}

Traffic algorithm0_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s) {
  const std::uint64_t nd = bh * n * d * s, nn = bh * n * n * s;
  return make({{"Q", nd, 0}, {"K", nd, 0}, {"V", nd, 0}, {"S", nn, nn}, {"P", nn, nn}, {"O", 0, nd}});
}

Traffic naive_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s,
                      std::uint64_t bm, std::uint64_t bn) {
  const std::uint64_t nd = bh * n * d * s, nn = bh * n * n * s;
  return make({{"Q", nd * ceil_div(n, bn), 0},
               {"K", nd * ceil_div(n, bm), 0},
               {"V", nd * ceil_div(n, bm), 0},
               {"S", nn, nn},
               {"P", nn, nn},
               {"O", 0, nd}});
}

Traffic flash1_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s,
                       std::uint64_t bc, bool count_init) {
  const std::uint64_t nd = bh * n * d * s, stat = bh * n * 4, tc = ceil_div(n, bc);
  const std::uint64_t init = count_init ? 1 : 0;
  return make({{"Q", tc * nd, 0},
               {"K", nd, 0},
               {"V", nd, 0},
               {"O", tc * nd, (tc + init) * nd},
               {"l", tc * stat, (tc + init) * stat},
               {"m", tc * stat, (tc + init) * stat}});
}

Traffic flash2_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s,
                       std::uint64_t br) {
  const std::uint64_t nd = bh * n * d * s, tr = ceil_div(n, br);
  return make({{"Q", nd, 0}, {"K", tr * nd, 0}, {"V", tr * nd, 0}, {"O", 0, nd}, {"L", 0, bh * n * 4}});
}

Traffic gemm_traffic(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t s,
                     std::uint64_t tm, std::uint64_t tn) {
  return make({{"A", m * k * s * ceil_div(n, tn), 0},
               {"B", k * n * s * ceil_div(m, tm), 0},
               {"C", 0, m * n * s}});
}

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
  std::uint64_t read = tc * d * sq + 2 * tr * d * sk + scores;
  std::uint64_t write = p.workload == WorkloadKind::flash2 ? d * sq + 2 * tr * d * sk + scores
                                                           : tc * d * sq + 2 * d * sk + scores;
  const std::uint64_t scale = p.batch_heads() * p.element_size();
  t.read_bytes = read * scale;
  t.write_bytes = write * scale;
  return t;
}

Traffic closed_form_traffic(const WorkloadParams& params) {
  const WorkloadParams p = resolve_workload(params);
  const std::uint32_t s = p.element_size();
  const auto with_spill = [&p](Traffic t) {
    if (!spill_plan(p).active) return t;
    std::vector<TensorTraffic> tensors = std::move(t.by_tensor);
    tensors.push_back(spill_traffic(p));
    return make(std::move(tensors));
  };
  switch (p.workload) {
    case WorkloadKind::naive:
      return naive_traffic(p.batch_heads(), p.seq, p.head_dim, s, *p.block_q, *p.block_kv);
    case WorkloadKind::flash1:
      return with_spill(flash1_traffic(p.batch_heads(), p.seq, p.head_dim, s, *p.block_kv, true));
    case WorkloadKind::flash2:
      return with_spill(flash2_traffic(p.batch_heads(), p.seq, p.head_dim, s, *p.block_q));
    case WorkloadKind::gemm:
      return gemm_traffic(p.m, p.n, p.k, s, *p.tile_m, *p.tile_n);
  }
  return {};
}

}  // namespace memwall
