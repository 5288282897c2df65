#include "models/gemm.h"

#include <algorithm>

namespace memwall {
namespace {

/// C = A·B (A: m×k, B: k×n, row-major): one CTA per tile_m × tile_n output tile, in row-major
/// tile order, looping over k in chunks of tile_k; C stored once per tile.
class Gemm final : public BackendWorkload<Gemm> {
 public:
  explicit Gemm(const WorkloadParams& p) : BackendWorkload(p) {
    const std::uint32_t s = p.element_size();
    m_a = add_tensor("A", p.m, p.k, s);
    m_b = add_tensor("B", p.k, p.n, s);
    m_c = add_tensor("C", p.m, p.n, s);
  }

 private:
  friend class BackendWorkload<Gemm>;
  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel != 0) return;
    const WorkloadParams& p = params();
    const std::uint64_t s = p.element_size();
    const std::uint64_t tm = *p.tile_m, tn = *p.tile_n, tk = *p.tile_k;
    const std::uint64_t gn = ceil_div(p.n, tn);
    const std::uint64_t r0 = (cta / gn) * tm, c0 = (cta % gn) * tn;
    const std::uint64_t rows = std::min(tm, p.m - r0), cols = std::min(tn, p.n - c0);
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    EigenBackend::Matrix acc;
    if constexpr (Backend::kNumeric) acc = EigenBackend::Matrix::Zero(e(rows), e(cols));
    for (std::uint64_t k0 = 0; k0 < p.k; k0 += tk) {
      const std::uint64_t kw = std::min(tk, p.k - k0);
      rec.load(m_a, box(m_a, r0, rows, k0, kw), 0);
      rec.load(m_b, box(m_b, k0, kw, c0, cols), 0);
      rec.wait(0);
      rec.smem((rows * kw + kw * cols) * s);
      rec.compute(ComputeUnit::tensor, 2 * rows * cols * kw);
      if constexpr (Backend::kNumeric) {
        acc += be.t(m_a).block(e(r0), e(k0), e(rows), e(kw)) *
               be.t(m_b).block(e(k0), e(c0), e(kw), e(cols));
      }
      rec.barrier();
    }
    if constexpr (Backend::kNumeric) be.t(m_c).block(e(r0), e(c0), e(rows), e(cols)) = acc;
    rec.store(m_c, box(m_c, r0, rows, c0, cols));
  }

  std::uint8_t m_a = 0, m_b = 0, m_c = 0;
};

}  // namespace

std::unique_ptr<Workload> make_gemm(const WorkloadParams& resolved) {
  return std::make_unique<Gemm>(resolved);
}

}  // namespace memwall
