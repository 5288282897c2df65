#include "models/flash1.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/compiled_instructions.h"
#include "models/launch.h"
#include "models/reference.h"
#include "models/spill.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// Threads of a flash1 CTA (4 warps).
constexpr std::uint32_t kThreads = 128;

/// flash1's walk over its tiles: one K/V buffer pair, one CTA per head, K/V blocks outside.
constexpr FlashLoop kFlash1Loop{1, true};

/// FlashAttention Algorithm 1 (Dao et al. 2022), as written: an init launch sets O = 0, ℓ = 0,
/// m = −∞ in global memory; then one CTA per head runs the outer loop over K/V blocks j and the
/// inner loop over Q blocks i, re-reading Qᵢ, Oᵢ, ℓᵢ, mᵢ and writing Oᵢ, ℓᵢ, mᵢ back on every pass.
class Flash1 final : public BackendWorkload<Flash1> {
 public:
  explicit Flash1(const WorkloadParams& p) : BackendWorkload(p), m_shape(attention_shape(p)) {
    const std::uint64_t rows = p.batch_heads() * p.seq;
    const std::uint64_t kv_rows = m_shape.kv_batch_heads() * m_shape.nkv;
    const std::uint32_t s = p.element_size();
    m_q = add_input("Q", rows, p.head_dim, s);
    m_k = add_input("K", kv_rows, p.head_dim, s);
    m_v = add_input("V", kv_rows, p.head_dim, s);
    m_o = add_tensor("O", rows, p.head_dim, s);
    m_l = add_tensor("l", p.batch_heads(), p.seq, 4);
    m_m = add_tensor("m", p.batch_heads(), p.seq, 4);
    m_plan = plan_spill(p, kFlash1Loop);
    m_issue = kernel_instructions("flash2_fwd", p.head_dim, *p.block_q, *p.block_kv, 2).terms;
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
      be.t(m_m)
          .block(e(bh), e(r0), 1, e(rows))
          .setConstant(-std::numeric_limits<double>::infinity());
    }
    rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));
    rec.store(m_l, box(m_l, bh, 1, r0, rows));
    rec.store(m_m, box(m_m, bh, 1, r0, rows));
  }

  /// Lines 5–15 of Algorithm 1 for one head. With the causal mask, a pass over K/V block j
  /// skips the Q blocks none of whose rows sees a key of it (AttentionShape::first_q_block).
  template <class Backend>
  void forward(std::uint64_t bh, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, nkv = m_shape.nkv, d = p.head_dim, s = p.element_size();
    const std::uint64_t kv_row = m_shape.kv_head(bh) * nkv;
    const std::uint64_t br = *p.block_q, bc = *p.block_kv;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    // Spilling (m_plan.active): the rows that do not fit live in this head's row of "spill".
    const SpillPlan& sp = m_plan;
    constexpr std::uint16_t kSpillTag = 2, kWork = 3;
    const auto spill_box = [&](std::uint64_t offset, std::uint64_t elements) {
      return box(m_spill, bh, 1, offset, elements);
    };
    for (std::uint64_t c0 = 0; c0 < nkv; c0 += bc) {
      const std::uint64_t cols = std::min(bc, nkv - c0);
      const std::uint64_t sk = sp.active ? sp.kv_spilled(cols) : 0;
      const std::uint64_t v_offset = sp.kv_offset + sk * d;
      rec.load(m_k, box(m_k, kv_row + c0, cols, 0, d), 0);  // line 6: Kⱼ, Vⱼ
      rec.load(m_v, box(m_v, kv_row + c0, cols, 0, d), 0);
      rec.wait(0);
      if (sk > 0) {  // K/V rows with no room: written once per pass
        rec.store(m_spill, spill_box(sp.kv_offset, sk * d));
        rec.store(m_spill, spill_box(v_offset, sk * d));
      }
      for (std::uint64_t r0 = m_shape.first_q_block(br, c0) * br; r0 < n; r0 += br) {
        const std::uint64_t rows = std::min(br, n - r0);
        const bool masked = m_shape.block_masked(r0, c0, cols);
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
        rec.smem((rows + cols) * d * s);  // line 9: S = QKᵀ
        rec.compute(ComputeUnit::mma_sync, 2 * rows * cols * d);
        // The tile's warp instructions: flash2's kernel's for the same tile body (S, online
        // softmax, PV; models/compiled_instructions.h), no CUDA kernel of its own to count them.
        // The element-wise work among them is booked on its pipes asynchronously.
        rec.compute(ComputeUnit::issue, m_issue.per_step);
        if (ss > 0) {  // score rows with no room: S written, read back by the softmax
          rec.store(m_spill, spill_box(sp.score_offset, ss * cols));
          rec.load(m_spill, spill_box(sp.score_offset, ss * cols), kSpillTag);
          rec.wait(kSpillTag);
        }
        if (masked) rec.compute(ComputeUnit::fp32, rows * cols, kWork);  // −∞ above the diagonal
        rec.compute(ComputeUnit::fp32, 4 * rows * cols + 6 * rows, kWork);  // lines 10–11
        rec.compute(ComputeUnit::sfu, rows * cols + 2 * rows, kWork);
        if (ss > 0) rec.store(m_spill, spill_box(sp.score_offset, ss * cols));  // P̃
        if (sk > 0) rec.load(m_spill, spill_box(v_offset, sk * d), kSpillTag);
        if (ss > 0) rec.load(m_spill, spill_box(sp.score_offset, ss * cols), kSpillTag);
        if (sk > 0 || ss > 0) rec.wait(kSpillTag);
        rec.smem(cols * d * s);  // line 12: P̃V
        rec.compute(ComputeUnit::mma_sync, 2 * rows * cols * d);
        rec.compute(ComputeUnit::fp32, 3 * rows * d, kWork);  // line 12: rescale and divide
        rec.wait(kWork);
        if constexpr (Backend::kNumeric) {
          throw_if_interrupted();  // a head's numerics can take seconds at large N: poll per block
          update(be, bh, r0, rows, c0, cols, scale, Spilled{sq, sk, ss}, masked);
        }
        rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));  // lines 12–13
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
              std::uint64_t c0, std::uint64_t cols, double scale, Spilled sp, bool masked) const {
    const std::uint64_t n = params().seq, d = params().head_dim;
    const std::uint64_t kv_row = m_shape.kv_head(bh) * m_shape.nkv;
    constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto scratch = [&](std::uint64_t offset, std::uint64_t r, std::uint64_t c) {
      return Eigen::Map<Matrix>(be.t(m_spill).data() + e(bh * m_plan.scratch_elements + offset),
                                e(r), e(c));
    };
    const auto through_scratch = [&](auto&& tile, std::uint64_t offset, std::uint64_t r) {
      if (r == 0) return;
      scratch(offset, r, static_cast<std::uint64_t>(tile.cols())) = tile.bottomRows(e(r));
      tile.bottomRows(e(r)) = scratch(offset, r, static_cast<std::uint64_t>(tile.cols()));
    };
    auto o = be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d));
    Matrix qb = be.t(m_q).block(e(bh * n + r0), 0, e(rows), e(d));
    Matrix kb = be.t(m_k).block(e(kv_row + c0), 0, e(cols), e(d));
    Matrix vb = be.t(m_v).block(e(kv_row + c0), 0, e(cols), e(d));
    through_scratch(qb, 0, sp.q);
    through_scratch(kb, m_plan.kv_offset, sp.kv);
    through_scratch(vb, m_plan.kv_offset + sp.kv * d, sp.kv);
    Matrix sc = scale * qb * kb.transpose();
    if (masked) {
      for (Eigen::Index r = 0; r < sc.rows(); ++r) {
        const std::uint64_t visible = m_shape.keys_visible(r0 + static_cast<std::uint64_t>(r));
        for (Eigen::Index c = 0; c < sc.cols(); ++c) {
          if (c0 + static_cast<std::uint64_t>(c) >= visible) sc(r, c) = kMinusInf;
        }
      }
    }
    through_scratch(sc, m_plan.score_offset, sp.score);
    Matrix pt(sc.rows(), sc.cols());
    Eigen::VectorXd a_old(e(rows)), a_new(e(rows)), l_new(e(rows));
    for (Eigen::Index r = 0; r < e(rows); ++r) {
      double& m_i = be.t(m_m)(e(bh), e(r0) + r);
      double& l_i = be.t(m_l)(e(bh), e(r0) + r);
      const double m_tilde = sc.row(r).maxCoeff();  // m̃ᵢⱼ = rowmax(Sᵢⱼ)
      const double m_new = std::max(m_i, m_tilde);
      if (m_tilde == kMinusInf) {  // the mask hides this block from the row: nothing to add
        pt.row(r).setZero();
        a_old(r) = 1.0;
        a_new(r) = 0.0;
      } else if (params().online_rescale) {
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

  AttentionShape m_shape;
  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_l = 0, m_m = 0, m_spill = 0;
  InstructionTerms m_issue;  ///< flash2's kernel's per-tile warp instructions
  SpillPlan m_plan;  ///< inactive unless the tiles exceed the limit and allow_spill is set
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
     .help = "Rows of Q per inner-loop block (Br)",
     .default_text = "min(⌈M/4d⌉, d), M = sram_bytes / element size",
     .min = 1,
     .field = field_of<&WorkloadParams::block_q>()},
    {.name = "block_kv",
     .flag = "--block-kv",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of K and V per outer-loop block (Bc)",
     .default_text = "⌈M/4d⌉, M = sram_bytes / element size",
     .min = 1,
     .field = field_of<&WorkloadParams::block_kv>()},
    {.name = "sram_bytes",
     .flag = "--sram",
     .type = ParamType::kBytes,
     .unit = "bytes",
     .help = "On-chip memory M per CTA that sets the default block sizes, e.g. 96KiB (wins over "
             "the config's smem_per_block)",
     .default_text = "--config's sm.smem_per_block",
     .min = 1,
     .field = field_of<&WorkloadParams::sram_bytes>()},
    kAllowSpillParam,
    kSmemLimitParam,
};

class Flash1Plugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "flash1"; }
  std::string_view summary() const override {
    return "FlashAttention Algorithm 1 as written: an init launch, then one CTA per head loops over "
           "K/V blocks outside and Q blocks inside (those the causal mask leaves a key to), "
           "re-reading and re-writing O, l, m every pass";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    const std::uint64_t qkv = check_attention_shape(p);
    if (!p.block_q || !p.block_kv) fill_blocks(p);
    const std::uint64_t passes = ceil_div(p.kv_seq(), *p.block_kv);
    checked_mul(qkv, checked_mul(passes, 2, "flash1 passes"), "the Q and O traffic of flash1");
    resolve_spill(p, kFlash1Loop);
    if (plan_spill(p, kFlash1Loop).active && (p.causal || p.kv_seq() != p.seq)) {
      throw UsageError(
          "allow_spill is modelled for full attention only (no causal mask, "
          "seq_kv = seq); reduce block_q/block_kv so that the tiles fit instead");
    }
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const std::uint64_t n = p.seq, d = p.head_dim;
    const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
    const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.kv_seq());
    std::vector<KernelInfo> out;
    out.push_back(
        make_launch("flash1_init", p.batch_heads() * ceil_div(n, *p.block_q), kThreads, 0, 32));
    out.push_back(make_launch("flash1_fwd", p.batch_heads(), kThreads,
                              flash_tile_smem_bytes(p, kFlash1Loop.kv_buffers),
                              estimated_registers(br * d + br * bc, kThreads)));
    // A spilling CTA declares exactly the limit: what fits is all it keeps on chip.
    if (const SpillPlan plan = spill_plan(p); plan.active) {
      out.back().smem_bytes_per_cta = plan.limit_bytes;
    }
    return out;
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Flash1>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override {
    return with_spill_traffic(flash1_traffic(p), p);
  }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& launch,
                         std::uint64_t limit_bytes) const override {
    return {launch.smem_bytes_per_cta == 0 ? "" : flash_smem_formula(p, "2·"),
            "block_q/block_kv (or sram_bytes)", flash_smem_fits(p, kFlash1Loop, limit_bytes)};
  }

  SpillPlan spill_plan(const WorkloadParams& p) const override {
    return plan_spill(p, kFlash1Loop);
  }

  double io_exponent(std::string_view axis) const override {  // Θ(N²d²/M)
    return axis == "seq" ? 2.0 : -1.0;
  }

  std::string tiling_text(const WorkloadParams& p) const override {
    std::string out =
        "Br = " + std::to_string(*p.block_q) + ", Bc = " + std::to_string(*p.block_kv);
    if (p.sram_bytes) out += " (M = " + format_bytes(Bytes{*p.sram_bytes}) + ")";
    return out;
  }

  void io_defaults(WorkloadParams& p, bool /*seq_given*/, std::optional<std::uint64_t> sram_bytes,
                   std::uint64_t smem_per_block) const override {
    if (!sram_bytes && !p.sram_bytes) p.sram_bytes = smem_per_block;  // M: the SRAM per block
  }

  std::string_view output_tensor() const override { return "O"; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const override {
    return attention_reference(workload, data);
  }

 private:
  /// Algorithm 1's block sizes from the on-chip memory M, for those not given.
  static void fill_blocks(WorkloadParams& p) {
    if (!p.sram_bytes) {
      throw UsageError(
          "flash1's default block sizes need the on-chip memory size M: give "
          "sram_bytes (--sram SIZE or --config FILE) or both block_q and block_kv");
    }
    const std::uint64_t m_elems = *p.sram_bytes / p.element_size();
    if (m_elems < 4 * p.head_dim) {
      throw UsageError("sram_bytes " + std::to_string(*p.sram_bytes) + " holds " +
                       std::to_string(m_elems) + " elements, less than 4·head_dim = " +
                       std::to_string(4 * p.head_dim) + " (Algorithm 1 needs M >= 4d)");
    }
    const auto [br, bc] = flash1_default_blocks(m_elems, p.head_dim);
    if (bc > std::numeric_limits<std::uint32_t>::max()) {
      throw UsageError("sram_bytes is too large for a block size");
    }
    if (!p.block_q) p.block_q = static_cast<std::uint32_t>(br);
    if (!p.block_kv) p.block_kv = static_cast<std::uint32_t>(bc);
  }
};

}  // namespace

const WorkloadPlugin& flash1_plugin() {
  static const Flash1Plugin plugin;
  return plugin;
}

std::pair<std::uint64_t, std::uint64_t> flash1_default_blocks(std::uint64_t sram_elements,
                                                              std::uint64_t head_dim) {
  const std::uint64_t bc = ceil_div(sram_elements, 4 * head_dim);
  return {std::min(bc, head_dim), bc};
}

Traffic flash1_traffic(const WorkloadParams& p, bool count_init) {
  const AttentionShape a = attention_shape(p);
  const std::uint64_t br = *p.block_q, bc = *p.block_kv;
  // Q rows (and O, ℓ, m rows) a head's passes visit: Nq per pass without the mask; with it,
  // pass j starts at its first Q block.
  std::uint64_t rows = 0;
  const std::uint64_t tc = ceil_div(a.nkv, bc);
  if (!a.causal) {
    rows = tc * a.nq;
  } else {
    for (std::uint64_t j = 0; j < tc; ++j) rows += a.nq - a.first_q_block(br, j * bc) * br;
  }
  const std::uint64_t bh = a.batch_heads, row = a.d * p.element_size();
  const std::uint64_t init = count_init ? a.nq : 0;
  return make_traffic({{"Q", bh * rows * row, 0},
                       {"K", bh * a.nkv * row, 0},
                       {"V", bh * a.nkv * row, 0},
                       {"O", bh * rows * row, bh * (rows + init) * row},
                       {"l", bh * rows * 4, bh * (rows + init) * 4},
                       {"m", bh * rows * 4, bh * (rows + init) * 4}});
}

}  // namespace memwall
