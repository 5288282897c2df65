#include "models/flash2_bwd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/attention_backward.h"
#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/compiled_instructions.h"
#include "models/launch.h"
#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// Threads of the preprocessing and conversion CTAs (4 warps), and of the main backward CTA and
/// the summing one (8 warps, as FlashAttention-2's backward kernels).
constexpr std::uint32_t kSmallThreads = 128;
constexpr std::uint32_t kBwdThreads = 256;

/// Launch indices.
constexpr std::size_t kDotDoO = 0, kBwd = 1, kConvertDq = 2, kSumDkv = 3;

/// The backward CTA's shared memory: its K and V tiles, the Q and dO tiles of two Q blocks
/// (the next one prefetched), the P/dS tile and two blocks' L and D rows.
std::uint64_t bwd_smem_bytes(const WorkloadParams& p) {
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.kv_seq());
  const std::uint64_t s = p.element_size();
  return (2 * bc + 4 * br) * p.head_dim * s + br * bc * s + 4 * br * 4;
}

/// The backward CTA's warps (8, each 16 rows of the K/V block) and the queries of one register
/// strip of Sᵀ and dSᵀ (models/cuda/flash2_backward.cu: 16 at head_dim 128, 32 at 64).
constexpr std::uint64_t kBwdWarps = kBwdThreads / 32;
std::uint64_t strip_queries(std::uint64_t d) { return d >= 128 ? 16 : 32; }

/// Shared-memory bytes the CUDA backward CTA moves per Q block of Br queries (all of them, valid
/// or not, as the kernel's fragments cover the whole block; Bc = 128 there, 16 rows per warp):
/// per warp and strip its Bc/8 rows of K and of V (ldmatrix A fragments), per warp the whole Q and dO block twice each (B fragments of
/// Sᵀ = K·Qᵀ, dPᵀ = V·dOᵀ, dV += Pᵀ·dO, dK += dSᵀ·Q); dSᵀ written once; for dQ = dS·K, warp
/// (row tile, column part) reads its 16 rows of dS over all Bc keys and Bc × its columns of K.
std::uint64_t block_smem_bytes(std::uint64_t br, std::uint64_t bc, std::uint64_t d,
                               std::uint64_t s) {
  const std::uint64_t strips = ceil_div(br, strip_queries(d));
  const std::uint64_t row_tiles = br / 16, col_parts = kBwdWarps / row_tiles;
  const std::uint64_t per_warp = 2 * strips * (bc / kBwdWarps) * d + 4 * br * d;
  return (kBwdWarps * per_warp + bc * br + col_parts * br * bc + row_tiles * bc * d) * s;
}

/// Q rows the main launch visits per query head: each K/V block j visits the Q blocks from the
/// first that sees it.
std::uint64_t visited_q_rows(const AttentionShape& a, std::uint64_t br, std::uint64_t bc) {
  const std::uint64_t tc = ceil_div(a.nkv, bc);
  if (!a.causal) return tc * a.nq;
  std::uint64_t rows = 0;
  for (std::uint64_t j = 0; j < tc; ++j) rows += a.nq - a.first_q_block(br, j * bc) * br;
  return rows;
}

/// FlashAttention-2 backward. Inputs Q, K, V, dO (random) and the forward's O and L (computed
/// from them by prepare_inputs); outputs dQ, dK, dV.
class Flash2Bwd final : public AttentionBackwardWorkload<Flash2Bwd> {
 public:
  explicit Flash2Bwd(const WorkloadParams& p) : AttentionBackwardWorkload(p) {
    const std::uint64_t rows = m_a.batch_heads * m_a.nq;
    const std::uint64_t kv_rows = m_a.kv_batch_heads() * m_a.nkv;
    const std::uint32_t s = p.element_size();
    const std::uint64_t d = p.head_dim;
    m_q = add_input("Q", rows, d, s);
    m_k = add_input("K", kv_rows, d, s);
    m_v = add_input("V", kv_rows, d, s);
    m_o = add_tensor("O", rows, d, s);
    m_do = add_input("dO", rows, d, s);
    m_l = add_tensor("L", m_a.batch_heads, m_a.nq, 4);
    m_d = add_tensor("D", m_a.batch_heads, m_a.nq, 4);
    m_dq_accum = add_tensor("dQ_accum", rows, d, 4);
    m_dq = add_tensor("dQ", rows, d, s);
    add_kv_gradients();
    m_issue = kernel_instructions(m_a.causal ? "flash2_bwd_causal" : "flash2_bwd", d, br(), bc(), 0)
                  .terms;
  }

  /// O and L of the forward pass on Q, K, V (the masked softmax per query head).
  void prepare_inputs(EigenBackend& data) const override {
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const double scale = 1.0 / std::sqrt(static_cast<double>(m_a.d));
    for (std::uint64_t bh = 0; bh < m_a.batch_heads; ++bh) {
      throw_if_interrupted();
      const auto q = data.t(m_q).middleRows(e(bh * m_a.nq), e(m_a.nq));
      const auto k = data.t(m_k).middleRows(e(m_a.kv_head(bh) * m_a.nkv), e(m_a.nkv));
      const auto v = data.t(m_v).middleRows(e(m_a.kv_head(bh) * m_a.nkv), e(m_a.nkv));
      Matrix sc = scale * q * k.transpose();
      Eigen::VectorXd lse;
      masked_softmax_rows(sc, m_a, 0, &lse);
      data.t(m_l).row(e(bh)) = lse.transpose();
      data.t(m_o).middleRows(e(bh * m_a.nq), e(m_a.nq)) = sc * v;
    }
  }

 private:
  friend class BackendWorkload<Flash2Bwd>;
  friend class AttentionBackwardWorkload<Flash2Bwd>;
  using Matrix = EigenBackend::Matrix;

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == kDotDoO) dot_do_o(cta, be, rec);
    if (kernel == kBwd) backward(cta, be, rec);
    if (kernel == kConvertDq) convert_dq(cta, be, rec);
    if (kernel == kSumDkv) sum_dkv(cta, bc(), be, rec);
  }

  static Eigen::Index e(std::uint64_t x) { return static_cast<Eigen::Index>(x); }
  std::uint64_t br() const { return *params().block_q; }
  std::uint64_t bc() const { return *params().block_kv; }
  std::uint64_t tr() const { return ceil_div(m_a.nq, br()); }

  /// D = rowsum(dO∘O) for one Q block, and its rows of the dQ accumulator cleared.
  template <class Backend>
  void dot_do_o(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, bh = cta / tr(), r0 = (cta % tr()) * br();
    const std::uint64_t rows = std::min(br(), m_a.nq - r0), row = bh * m_a.nq + r0;
    rec.load(m_do, box(m_do, row, rows, 0, d), 0);
    rec.load(m_o, box(m_o, row, rows, 0, d), 0);
    rec.wait(0);
    rec.compute(ComputeUnit::fp32, 2 * rows * d);
    if constexpr (Backend::kNumeric) {
      be.t(m_d).block(e(bh), e(r0), 1, e(rows)) =
          be.t(m_do)
              .middleRows(e(row), e(rows))
              .cwiseProduct(be.t(m_o).middleRows(e(row), e(rows)))
              .rowwise()
              .sum()
              .transpose();
      be.t(m_dq_accum).middleRows(e(row), e(rows)).setZero();
    }
    rec.store(m_d, box(m_d, bh, 1, r0, rows));
    rec.store(m_dq_accum, box(m_dq_accum, row, rows, 0, d));
  }

  /// Algorithm 2's inner loop for K/V block j of query head bh: every Q block that sees it.
  template <class Backend>
  void backward(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, s = params().element_size(), tc = ceil_div(m_a.nkv, bc());
    const std::uint64_t bh = cta / tc, c0 = (cta % tc) * bc(), cols = std::min(bc(), m_a.nkv - c0);
    const std::uint64_t kv_row = m_a.kv_head(bh) * m_a.nkv + c0;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const auto tag_of = [](std::uint64_t i) { return static_cast<std::uint16_t>(1 + (i & 1)); };
    const auto issue = [&](std::uint64_t i) {
      const std::uint64_t r0 = i * br(), rows = std::min(br(), m_a.nq - r0);
      const std::uint64_t row = bh * m_a.nq + r0;
      rec.load(m_q, box(m_q, row, rows, 0, d), tag_of(i));
      rec.load(m_do, box(m_do, row, rows, 0, d), tag_of(i));
      rec.load(m_l, box(m_l, bh, 1, r0, rows), tag_of(i));
      rec.load(m_d, box(m_d, bh, 1, r0, rows), tag_of(i));
    };
    rec.load(m_k, box(m_k, kv_row, cols, 0, d), 0);
    rec.load(m_v, box(m_v, kv_row, cols, 0, d), 0);
    const std::uint64_t first = m_a.first_q_block(br(), c0);
    issue(first);
    // The kernel's warp instructions (models/compiled_instructions.h): per CTA once the first
    // loads are in flight, per pair with its products. The element-wise work (mask, P, dS, dK's
    // scale) is among them: booked on its pipes asynchronously (tag 3), the issue slots the time.
    constexpr std::uint16_t kWork = 3;
    rec.compute(ComputeUnit::issue, m_issue.per_cta);
    rec.wait(0);
    Matrix kb, vb, dk, dv;
    if constexpr (Backend::kNumeric) {
      kb = be.t(m_k).middleRows(e(kv_row), e(cols));
      vb = be.t(m_v).middleRows(e(kv_row), e(cols));
      dk = Matrix::Zero(e(cols), e(d));
      dv = Matrix::Zero(e(cols), e(d));
    }
    for (std::uint64_t i = first; i < tr(); ++i) {
      const std::uint64_t r0 = i * br(), rows = std::min(br(), m_a.nq - r0);
      const std::uint64_t row = bh * m_a.nq + r0;
      if (i + 1 < tr()) issue(i + 1);
      rec.wait(tag_of(i));
      rec.smem(block_smem_bytes(br(), bc(), d, s));
      rec.compute(ComputeUnit::mma_sync, 10 * rows * cols * d);
      rec.compute(ComputeUnit::issue, m_issue.per_step);
      if (m_a.block_masked(r0, c0, cols)) rec.compute(ComputeUnit::fp32, rows * cols, kWork);
      // P = exp(scale·S − L) and dS = P∘(dP − D).
      rec.compute(ComputeUnit::fp32, 4 * rows * cols, kWork);
      rec.compute(ComputeUnit::sfu, rows * cols, kWork);
      rec.wait(kWork);
      if constexpr (Backend::kNumeric) {
        throw_if_interrupted();
        const Matrix q = be.t(m_q).middleRows(e(row), e(rows));
        const Matrix dout = be.t(m_do).middleRows(e(row), e(rows));
        Matrix p = scale * q * kb.transpose();
        for (Eigen::Index r = 0; r < p.rows(); ++r) {
          const std::uint64_t seen = m_a.keys_visible(r0 + static_cast<std::uint64_t>(r));
          const double lse = be.t(m_l)(e(bh), e(r0) + r);
          for (Eigen::Index c = 0; c < p.cols(); ++c) {
            p(r, c) = c0 + static_cast<std::uint64_t>(c) < seen ? std::exp(p(r, c) - lse) : 0.0;
          }
        }
        dv += p.transpose() * dout;
        Matrix ds = p.cwiseProduct((dout * vb.transpose()).colwise() -
                                   be.t(m_d).block(e(bh), e(r0), 1, e(rows)).transpose().col(0));
        be.t(m_dq_accum).middleRows(e(row), e(rows)) += ds * kb;
        dk += ds.transpose() * q;
      }
      rec.reduce(m_dq_accum, box(m_dq_accum, row, rows, 0, d));  // atomic adds of dS·K
      rec.barrier();
    }
    rec.compute(ComputeUnit::fp32, cols * d, kWork);  // dK scaled once
    rec.wait(kWork);
    const bool grouped = m_a.group > 1;
    const std::uint8_t out_k = grouped ? m_dk_x : m_dk, out_v = grouped ? m_dv_x : m_dv;
    const std::uint64_t out_row = grouped ? bh * m_a.nkv + c0 : kv_row;
    if constexpr (Backend::kNumeric) {
      be.t(out_k).middleRows(e(out_row), e(cols)) = scale * dk;
      be.t(out_v).middleRows(e(out_row), e(cols)) = dv;
    }
    rec.smem(2 * 2 * cols * d * s);  // dK and dV staged through shared memory (written, read)
    rec.store(out_k, box(out_k, out_row, cols, 0, d));
    rec.store(out_v, box(out_v, out_row, cols, 0, d));
  }

  /// dQ = scale·dQ_accum in the input dtype, one Q block.
  template <class Backend>
  void convert_dq(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, bh = cta / tr(), r0 = (cta % tr()) * br();
    const std::uint64_t rows = std::min(br(), m_a.nq - r0), row = bh * m_a.nq + r0;
    rec.load(m_dq_accum, box(m_dq_accum, row, rows, 0, d), 0);
    rec.wait(0);
    rec.compute(ComputeUnit::fp32, rows * d);
    if constexpr (Backend::kNumeric) {
      be.t(m_dq).middleRows(e(row), e(rows)) =
          (1.0 / std::sqrt(static_cast<double>(d))) * be.t(m_dq_accum).middleRows(e(row), e(rows));
    }
    rec.store(m_dq, box(m_dq, row, rows, 0, d));
  }

  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_do = 0, m_l = 0, m_d = 0;
  std::uint8_t m_dq_accum = 0, m_dq = 0;
  InstructionTerms m_issue;  ///< the main kernel's warp instructions
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    kBatchParam,
    kHeadsParam,
    kSeqParam,
    kHeadDimParam,
    kKvHeadsParam,
    kSeqKvParam,
    kCausalParam,
    {.name = "block_q",
     .flag = "--block-q",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of Q (and dO) per inner-loop block (Br)",
     .default_text = "128 for head_dim ≤ 64, else 64",
     .min = 1,
     .field = field_of<&WorkloadParams::block_q>()},
    {.name = "block_kv",
     .flag = "--block-kv",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of K and V per CTA (Bc)",
     .default_text = "128 for head_dim ≤ 128, else 64",
     .min = 1,
     .field = field_of<&WorkloadParams::block_kv>()},
};

class Flash2BwdPlugin final : public AttentionBackwardPlugin {
 public:
  std::string_view name() const override { return "flash2-bwd"; }
  std::string_view summary() const override {
    return "FlashAttention-2 backward: D = rowsum(dO∘O); one CTA per (head, K/V block) loops over "
           "the Q blocks that see it, recomputes P from the logsumexp, keeps dK, dV on chip and "
           "adds dS·K into an fp32 dQ with atomics; dQ converted; groups' dK, dV summed";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    check_attention_shape(p);
    if (!p.block_q) p.block_q = p.head_dim <= 64 ? 128 : 64;
    if (!p.block_kv) p.block_kv = p.head_dim <= 128 ? 128 : 64;
    const AttentionShape a = attention_shape(p);
    const std::uint64_t rows =
        checked_mul(visited_q_rows(a, *p.block_q, *p.block_kv), a.batch_heads, "flash2-bwd passes");
    checked_mul({rows, p.head_dim, 4}, "the dQ accumulation of flash2-bwd");
    checked_mul({a.batch_heads, a.nkv, p.head_dim, p.element_size()}, "dK_expanded");
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const AttentionShape a = attention_shape(p);
    const std::uint64_t tr = ceil_div(a.nq, *p.block_q), tc = ceil_div(a.nkv, *p.block_kv);
    const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, a.nkv);
    const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, a.nq);
    std::vector<KernelInfo> out = {
        make_launch("flash2_bwd_dot_do_o", a.batch_heads * tr, kSmallThreads, 0,
                    estimated_registers(0, kSmallThreads)),
        make_launch("flash2_bwd", a.batch_heads * tc, kBwdThreads, bwd_smem_bytes(p),
                    estimated_registers(2 * bc * p.head_dim + br * bc, kBwdThreads)),
        make_launch("flash2_bwd_convert_dq", a.batch_heads * tr, kSmallThreads, 0,
                    estimated_registers(0, kSmallThreads)),
    };
    if (a.group > 1) {
      out.push_back(make_launch("flash2_bwd_sum_dkv", a.kv_batch_heads() * tc, kBwdThreads, 0,
                                estimated_registers(0, kBwdThreads)));
    }
    return out;
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Flash2Bwd>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override { return flash2_bwd_traffic(p); }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& /*launch*/,
                         std::uint64_t /*limit_bytes*/) const override {
    return {"(2·block_kv + 4·block_q)·head_dim " + std::to_string(p.head_dim) + "·" +
                std::to_string(p.element_size()) + " B + block_q·block_kv·" +
                std::to_string(p.element_size()) + " B + 16·block_q B",
            "block_q/block_kv", ""};
  }

  double io_exponent(std::string_view axis) const override {  // Θ(N²d²/M), Bc ∝ M/d
    return axis == "seq" ? 2.0 : -1.0;
  }
};

}  // namespace

const WorkloadPlugin& flash2_bwd_plugin() {
  static const Flash2BwdPlugin plugin;
  return plugin;
}

Traffic flash2_bwd_traffic(const WorkloadParams& p) {
  const AttentionShape a = attention_shape(p);
  const std::uint64_t bh = a.batch_heads, nq = a.nq, nkv = a.nkv;
  const std::uint64_t row = p.head_dim * p.element_size(), acc_row = p.head_dim * 4;
  const std::uint64_t r = visited_q_rows(a, *p.block_q, *p.block_kv);
  const bool grouped = a.group > 1;
  const std::uint64_t dkv = a.kv_batch_heads() * nkv * row;  // dK or dV, once per K/V head
  std::vector<TensorTraffic> t = {
      {"Q", bh * r * row, 0},
      {"K", bh * nkv * row, 0},
      {"V", bh * nkv * row, 0},
      {"O", bh * nq * row, 0},
      {"dO", bh * (nq + r) * row, 0},
      {"L", bh * r * 4, 0},
      {"D", bh * r * 4, bh * nq * 4},
      {"dQ_accum", bh * nq * acc_row, bh * (nq + r) * acc_row},
      {"dQ", 0, bh * nq * row},
      {"dK", 0, dkv},
      {"dV", 0, dkv},
  };
  if (grouped) {
    t.push_back({"dK_expanded", bh * nkv * row, bh * nkv * row});
    t.push_back({"dV_expanded", bh * nkv * row, bh * nkv * row});
  }
  return make_traffic(std::move(t));
}

}  // namespace memwall
