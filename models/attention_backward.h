#pragma once
/// What the backward workloads (flash2-bwd, naive-bwd) share: their outputs are the gradients
/// dQ, dK, dV, checked against the plainly derived attention_grad_reference; with grouped-query
/// heads both write dK and dV per query head and a last launch sums each group's.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "models/attention_params.h"
#include "models/reference.h"
#include "models/workload.h"
#include "models/workload_plugin.h"

namespace memwall {

/// A WorkloadPlugin whose outputs are dQ, dK and dV.
class AttentionBackwardPlugin : public WorkloadPlugin {
 public:
  std::string_view output_tensor() const final { return "dQ"; }
  std::vector<std::string_view> output_tensors() const final { return {"dQ", "dK", "dV"}; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const final {
    return attention_grad_reference(workload, data)[0];
  }
  std::vector<EigenBackend::Matrix> reference_outputs(const Workload& workload,
                                                      const EigenBackend& data) const final {
    return attention_grad_reference(workload, data);
  }
};

/// A backward workload's body: the shape, the dK/dV tensors and the group-summing CTA.
template <class Derived>
class AttentionBackwardWorkload : public BackendWorkload<Derived> {
 protected:
  explicit AttentionBackwardWorkload(const WorkloadParams& p)
      : BackendWorkload<Derived>(p), m_a(attention_shape(p)) {}

  /// Declares dK and dV ([B, Hkv, Nkv, d]) and, with groups, dK_expanded and dV_expanded
  /// ([B, H, Nkv, d]: each query head's share before the sum).
  void add_kv_gradients() {
    const std::uint32_t s = this->params().element_size();
    const std::uint64_t d = this->params().head_dim;
    m_dk = this->add_tensor("dK", m_a.kv_batch_heads() * m_a.nkv, d, s);
    m_dv = this->add_tensor("dV", m_a.kv_batch_heads() * m_a.nkv, d, s);
    if (m_a.group > 1) {
      m_dk_x = this->add_tensor("dK_expanded", m_a.batch_heads * m_a.nkv, d, s);
      m_dv_x = this->add_tensor("dV_expanded", m_a.batch_heads * m_a.nkv, d, s);
    }
  }

  /// The summing launch's CTA `cta`: dK, dV of `tile` keys of one K/V head, the sums of its G
  /// query heads' expanded rows, as flash2-bwd's CUDA kernel does them: dK first, one head's box
  /// loaded, waited for and added at a time, then dV.
  template <class Backend>
  void sum_dkv(std::uint64_t cta, std::uint64_t tile, Backend& be, Recorder& rec) const {
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const std::uint64_t d = m_a.d, g = m_a.group, tiles = ceil_div(m_a.nkv, tile);
    const std::uint64_t kvh = cta / tiles, c0 = (cta % tiles) * tile;
    const std::uint64_t rows = std::min(tile, m_a.nkv - c0), out = kvh * m_a.nkv + c0;
    for (const auto& [expanded, sum] : {std::pair{m_dk_x, m_dk}, std::pair{m_dv_x, m_dv}}) {
      for (std::uint64_t h = 0; h < g; ++h) {
        const std::uint64_t row = (kvh * g + h) * m_a.nkv + c0;
        rec.load(expanded, this->box(expanded, row, rows, 0, d), 0);
        rec.wait(0);
        if (h > 0) rec.compute(ComputeUnit::fp32, rows * d);
      }
      if constexpr (Backend::kNumeric) {
        be.t(sum).middleRows(e(out), e(rows)).setZero();
        for (std::uint64_t h = 0; h < g; ++h) {
          const std::uint64_t row = (kvh * g + h) * m_a.nkv + c0;
          be.t(sum).middleRows(e(out), e(rows)) += be.t(expanded).middleRows(e(row), e(rows));
        }
      }
      rec.store(sum, this->box(sum, out, rows, 0, d));
    }
  }

  AttentionShape m_a;
  std::uint8_t m_dk = 0, m_dv = 0, m_dk_x = 0, m_dv_x = 0;
};

}  // namespace memwall
