#include "models/flash1.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/spill.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// FlashAttention Algorithm 1 (Dao et al. 2022), as written: an init launch sets O = 0, ℓ = 0,
/// m = −∞ in global memory; then one CTA per head runs the outer loop over K/V blocks j and the
/// inner loop over Q blocks i, re-reading Qᵢ, Oᵢ, ℓᵢ, mᵢ and writing Oᵢ, ℓᵢ, mᵢ back on every pass.
class Flash1 final : public BackendWorkload<Flash1> {
 public:
  explicit Flash1(const WorkloadParams& p) : BackendWorkload(p) {
    const std::uint64_t rows = p.batch_heads() * p.seq;
    const std::uint32_t s = p.element_size();
    m_q = add_tensor("Q", rows, p.head_dim, s);
    m_k = add_tensor("K", rows, p.head_dim, s);
    m_v = add_tensor("V", rows, p.head_dim, s);
    m_o = add_tensor("O", rows, p.head_dim, s);
    m_l = add_tensor("l", p.batch_heads(), p.seq, 4);
    m_m = add_tensor("m", p.batch_heads(), p.seq, 4);
    m_plan = spill_plan(p);
    if (m_plan.active) {
      m_spill = add_tensor("spill", m_plan.scratch_rows, m_plan.scratch_elements, s);
    }
  }

 private:
  friend class BackendWorkload<Flash1>;
  using Matrix = EigenBackend::Matrix;

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == 0) init(cta, be, rec);
    if (kernel == 1) forward(cta, be, rec);
  }

  /// Line 2 of Algorithm 1 for one block of Br rows: O = 0, ℓ = 0, m = −∞.
  template <class Backend>
  void init(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, d = p.head_dim, br = *p.block_q;
    const std::uint64_t tr = ceil_div(n, br);
    const std::uint64_t bh = cta / tr, r0 = (cta % tr) * br, rows = std::min(br, n - r0);
    if constexpr (Backend::kNumeric) {
      const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
      be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d)).setZero();
      be.t(m_l).block(e(bh), e(r0), 1, e(rows)).setZero();
      be.t(m_m).block(e(bh), e(r0), 1, e(rows))
          .setConstant(-std::numeric_limits<double>::infinity());
    }
    rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));
    rec.store(m_l, box(m_l, bh, 1, r0, rows));
    rec.store(m_m, box(m_m, bh, 1, r0, rows));
  }

  /// Lines 5–15 of Algorithm 1 for one head.
  template <class Backend>
  void forward(std::uint64_t bh, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, d = p.head_dim, s = p.element_size();
    const std::uint64_t br = *p.block_q, bc = *p.block_kv;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    // Spilling (m_plan.active): the rows that do not fit live in this head's row of "spill".
    const SpillPlan& sp = m_plan;
    constexpr std::uint16_t kSpillTag = 2;
    const auto spill_box = [&](std::uint64_t offset, std::uint64_t elements) {
      return box(m_spill, bh, 1, offset, elements);
    };
    for (std::uint64_t c0 = 0; c0 < n; c0 += bc) {
      const std::uint64_t cols = std::min(bc, n - c0);
      const std::uint64_t sk = sp.active ? sp.kv_spilled(cols) : 0;
      const std::uint64_t v_offset = sp.kv_offset + sk * d;
      rec.load(m_k, box(m_k, bh * n + c0, cols, 0, d), 0);  // line 6: Kⱼ, Vⱼ
      rec.load(m_v, box(m_v, bh * n + c0, cols, 0, d), 0);
      rec.wait(0);
      if (sk > 0) {  // K/V rows with no room: written once per pass
        rec.store(m_spill, spill_box(sp.kv_offset, sk * d));
        rec.store(m_spill, spill_box(v_offset, sk * d));
      }
      for (std::uint64_t r0 = 0; r0 < n; r0 += br) {
        const std::uint64_t rows = std::min(br, n - r0);
        const std::uint64_t sq = sp.active ? sp.q_spilled(rows) : 0;
        const std::uint64_t ss = sp.active ? sp.score_spilled(rows) : 0;
        rec.load(m_q, box(m_q, bh * n + r0, rows, 0, d), 1);  // line 8: Qᵢ, Oᵢ, ℓᵢ, mᵢ
        rec.load(m_o, box(m_o, bh * n + r0, rows, 0, d), 1);
        rec.load(m_l, box(m_l, bh, 1, r0, rows), 1);
        rec.load(m_m, box(m_m, bh, 1, r0, rows), 1);
        rec.wait(1);
        if (sq > 0) {  // Q rows with no room: written, read back by QKᵀ
          rec.store(m_spill, spill_box(0, sq * d));
          rec.load(m_spill, spill_box(0, sq * d), kSpillTag);
        }
        if (sk > 0) rec.load(m_spill, spill_box(sp.kv_offset, sk * d), kSpillTag);
        if (sq > 0 || sk > 0) rec.wait(kSpillTag);
        rec.smem((rows + cols) * d * s);                        // line 9: S = QKᵀ
        rec.compute(ComputeUnit::tensor, 2 * rows * cols * d);
        if (ss > 0) {  // score rows with no room: S written, read back by the softmax
          rec.store(m_spill, spill_box(sp.score_offset, ss * cols));
          rec.load(m_spill, spill_box(sp.score_offset, ss * cols), kSpillTag);
          rec.wait(kSpillTag);
        }
        rec.compute(ComputeUnit::fp32, 4 * rows * cols + 6 * rows);  // lines 10–11
        rec.compute(ComputeUnit::sfu, rows * cols + 2 * rows);
        if (ss > 0) rec.store(m_spill, spill_box(sp.score_offset, ss * cols));  // P̃
        if (sk > 0) rec.load(m_spill, spill_box(v_offset, sk * d), kSpillTag);
        if (ss > 0) rec.load(m_spill, spill_box(sp.score_offset, ss * cols), kSpillTag);
        if (sk > 0 || ss > 0) rec.wait(kSpillTag);
        rec.smem(cols * d * s);                                 // line 12: P̃V
        rec.compute(ComputeUnit::tensor, 2 * rows * cols * d);
        rec.compute(ComputeUnit::fp32, 3 * rows * d);           // line 12: rescale and divide
        if constexpr (Backend::kNumeric) {
          throw_if_interrupted();  // a head's numerics can take seconds at large N: poll per block
          update(be, bh, r0, rows, c0, cols, scale, Spilled{sq, sk, ss});
        }
        rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));     // lines 12–13
        rec.store(m_l, box(m_l, bh, 1, r0, rows));
        rec.store(m_m, box(m_m, bh, 1, r0, rows));
        rec.barrier();
      }
      rec.barrier();
    }
  }

  /// Rows of the Q, K/V and score tiles that go through the spill scratch.
  struct Spilled {
    std::uint64_t q = 0, kv = 0, score = 0;
  };

  /// Lines 9–13 on real data, in place on O, ℓ, m in global memory. Spilled rows are written to
  /// the head's scratch row and used from there, as the ops say.
  void update(EigenBackend& be, std::uint64_t bh, std::uint64_t r0, std::uint64_t rows,
              std::uint64_t c0, std::uint64_t cols, double scale, Spilled sp) const {
    const std::uint64_t n = params().seq, d = params().head_dim;
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto scratch = [&](std::uint64_t offset, std::uint64_t r, std::uint64_t c) {
      return Eigen::Map<Matrix>(
          be.t(m_spill).data() + e(bh * m_plan.scratch_elements + offset), e(r), e(c));
    };
    const auto through_scratch = [&](auto&& tile, std::uint64_t offset, std::uint64_t r) {
      if (r == 0) return;
      scratch(offset, r, static_cast<std::uint64_t>(tile.cols())) = tile.bottomRows(e(r));
      tile.bottomRows(e(r)) = scratch(offset, r, static_cast<std::uint64_t>(tile.cols()));
    };
    auto o = be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d));
    Matrix qb = be.t(m_q).block(e(bh * n + r0), 0, e(rows), e(d));
    Matrix kb = be.t(m_k).block(e(bh * n + c0), 0, e(cols), e(d));
    Matrix vb = be.t(m_v).block(e(bh * n + c0), 0, e(cols), e(d));
    through_scratch(qb, 0, sp.q);
    through_scratch(kb, m_plan.kv_offset, sp.kv);
    through_scratch(vb, m_plan.kv_offset + sp.kv * d, sp.kv);
    Matrix sc = scale * qb * kb.transpose();
    through_scratch(sc, m_plan.score_offset, sp.score);
    Matrix pt(sc.rows(), sc.cols());
    Eigen::VectorXd a_old(e(rows)), a_new(e(rows)), l_new(e(rows));
    for (Eigen::Index r = 0; r < e(rows); ++r) {
      double& m_i = be.t(m_m)(e(bh), e(r0) + r);
      double& l_i = be.t(m_l)(e(bh), e(r0) + r);
      const double m_tilde = sc.row(r).maxCoeff();  // m̃ᵢⱼ = rowmax(Sᵢⱼ)
      const double m_new = std::max(m_i, m_tilde);
      if (params().online_rescale) {
        pt.row(r) = (sc.row(r).array() - m_tilde).exp().matrix();  // P̃ᵢⱼ
        a_old(r) = std::exp(m_i - m_new);
        a_new(r) = std::exp(m_tilde - m_new);
      } else {  // the wrong variant: no rescale of what was accumulated under an older maximum
        pt.row(r) = (sc.row(r).array() - m_new).exp().matrix();
        a_old(r) = 1.0;
        a_new(r) = 1.0;
      }
      l_new(r) = a_old(r) * l_i + a_new(r) * pt.row(r).sum();
      o.row(r) *= a_old(r) * l_i;
      l_i = l_new(r);
      m_i = m_new;
    }
    through_scratch(pt, m_plan.score_offset, sp.score);
    const Matrix pv = pt * vb;
    for (Eigen::Index r = 0; r < e(rows); ++r) {
      o.row(r) = (o.row(r) + a_new(r) * pv.row(r)) / l_new(r);
    }
  }

  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_l = 0, m_m = 0, m_spill = 0;
  SpillPlan m_plan;  ///< inactive unless the tiles exceed the limit and allow_spill is set
};

}  // namespace

std::unique_ptr<Workload> make_flash1(const WorkloadParams& resolved) {
  return std::make_unique<Flash1>(resolved);
}

}  // namespace memwall
