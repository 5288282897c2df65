#include "models/naive.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memwall {
namespace {

/// The CUDA kernels' warp grids (models/cuda/naive_attention.cu): qk lays 2 × 4 warps over the
/// S tile, pv 4 × 2 over the O tile. Each warp loads its own A rows and B columns from shared
/// memory (ldmatrix), so A is read once per warp column and B once per warp row.
constexpr std::uint64_t kQkWarpsM = 2, kQkWarpsN = 4;
constexpr std::uint64_t kPvWarpsM = 4, kPvWarpsN = 2;

/// Naive attention (Algorithm 0), three launches: qk (S = scale·QKᵀ), softmax (P = softmax(S)
/// by rows), pv (O = PV). Tiling per the contract in docs/models.md.
class Naive final : public BackendWorkload<Naive> {
 public:
  explicit Naive(const WorkloadParams& p) : BackendWorkload(p) {
    const std::uint64_t rows = p.batch_heads() * p.seq;
    const std::uint32_t s = p.element_size();
    m_q = add_tensor("Q", rows, p.head_dim, s);
    m_k = add_tensor("K", rows, p.head_dim, s);
    m_v = add_tensor("V", rows, p.head_dim, s);
    m_s = add_tensor("S", rows, p.seq, s);
    m_p = add_tensor("P", rows, p.seq, s);
    m_o = add_tensor("O", rows, p.head_dim, s);
  }

 private:
  friend class BackendWorkload<Naive>;
  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == 0) qk(cta, be, rec);
    if (kernel == 1) softmax(cta, be, rec);
    if (kernel == 2) pv(cta, be, rec);
  }

  /// S tile (i, j) of head bh: one Q box and one K box, the whole head dim, one S store.
  template <class Backend>
  void qk(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, d = p.head_dim, s = p.element_size();
    const std::uint64_t bm = *p.block_q, bn = *p.block_kv;
    const std::uint64_t tn = ceil_div(n, bn), tm = ceil_div(n, bm);
    const std::uint64_t j = cta % tn, i = (cta / tn) % tm, bh = cta / (tn * tm);
    const std::uint64_t r0 = i * bm, rows = std::min(bm, n - r0);
    const std::uint64_t c0 = j * bn, cols = std::min(bn, n - c0);
    rec.load(m_q, box(m_q, bh * n + r0, rows, 0, d), 0);
    rec.load(m_k, box(m_k, bh * n + c0, cols, 0, d), 0);
    rec.wait(0);
    rec.smem((kQkWarpsN * rows + kQkWarpsM * cols) * d * s);  // Q and K fragments, per warp
    rec.compute(ComputeUnit::tensor, 2 * rows * cols * d);
    rec.compute(ComputeUnit::fp32, rows * cols);  // the scale
    if constexpr (Backend::kNumeric) {
      const double scale = 1.0 / std::sqrt(static_cast<double>(d));
      const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
      be.t(m_s).block(e(bh * n + r0), e(c0), e(rows), e(cols)) =
          scale * be.t(m_q).block(e(bh * n + r0), 0, e(rows), e(d)) *
          be.t(m_k).block(e(bh * n + c0), 0, e(cols), e(d)).transpose();
    }
    rec.smem(2 * rows * cols * s);  // the S tile staged through shared memory (written, read)
    rec.store(m_s, box(m_s, bh * n + r0, rows, c0, cols));
  }

  /// softmax_rows whole rows of S in, the same rows of P out; each element of S read once.
  template <class Backend>
  void softmax(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, s = p.element_size(), r = *p.softmax_rows;
    const std::uint64_t blocks = ceil_div(n, r);
    const std::uint64_t bh = cta / blocks, r0 = (cta % blocks) * r, rows = std::min(r, n - r0);
    rec.load(m_s, box(m_s, bh * n + r0, rows, 0, n), 0);
    rec.wait(0);
    // As the CUDA kernel: a max pass, a sum pass (subtract, exp, add) and a normalise pass that
    // takes the exponential again (subtract, exp, multiply), each reading the rows from shared
    // memory; P is stored from registers. One reciprocal per row.
    rec.smem(3 * rows * n * s);
    rec.compute(ComputeUnit::fp32, 5 * rows * n);
    rec.compute(ComputeUnit::sfu, 2 * rows * n + rows);
    if constexpr (Backend::kNumeric) {
      for (std::uint64_t q = 0; q < rows; ++q) {
        const auto row = static_cast<Eigen::Index>(bh * n + r0 + q);
        const double mx = be.t(m_s).row(row).maxCoeff();
        auto out = be.t(m_p).row(row);
        out = (be.t(m_s).row(row).array() - mx).exp().matrix();
        out /= out.sum();
      }
    }
    rec.store(m_p, box(m_p, bh * n + r0, rows, 0, n));
  }

  /// O rows of Q block i: loop over k chunks of P (and the matching V rows), double-buffered
  /// (chunk c + 1 is issued under the other tag before chunk c is waited for), one O store.
  template <class Backend>
  void pv(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, d = p.head_dim, s = p.element_size();
    const std::uint64_t bm = *p.block_q, bk = *p.block_k;
    const std::uint64_t tm = ceil_div(n, bm), chunks = ceil_div(n, bk);
    const std::uint64_t bh = cta / tm, r0 = (cta % tm) * bm, rows = std::min(bm, n - r0);
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto issue = [&](std::uint64_t c) {
      const std::uint64_t k0 = c * bk, kw = std::min(bk, n - k0);
      const auto tag = static_cast<std::uint16_t>(c & 1);
      rec.load(m_p, box(m_p, bh * n + r0, rows, k0, kw), tag);
      rec.load(m_v, box(m_v, bh * n + k0, kw, 0, d), tag);
    };
    EigenBackend::Matrix acc;
    if constexpr (Backend::kNumeric) acc = EigenBackend::Matrix::Zero(e(rows), e(d));
    issue(0);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t k0 = c * bk, kw = std::min(bk, n - k0);
      if (c + 1 < chunks) issue(c + 1);
      rec.wait(static_cast<std::uint16_t>(c & 1));
      rec.smem((kPvWarpsN * rows * kw + kPvWarpsM * kw * d) * s);  // P and V fragments, per warp
      rec.compute(ComputeUnit::tensor, 2 * rows * kw * d);
      if constexpr (Backend::kNumeric) {
        acc += be.t(m_p).block(e(bh * n + r0), e(k0), e(rows), e(kw)) *
               be.t(m_v).block(e(bh * n + k0), 0, e(kw), e(d));
      }
      rec.barrier();
    }
    if constexpr (Backend::kNumeric) be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d)) = acc;
    rec.smem(2 * rows * d * s);  // the O tile staged through shared memory (written, read)
    rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));
  }

  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_s = 0, m_p = 0, m_o = 0;
};

}  // namespace

std::unique_ptr<Workload> make_naive(const WorkloadParams& resolved) {
  return std::make_unique<Naive>(resolved);
}

}  // namespace memwall
