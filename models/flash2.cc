#include "models/flash2.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/launch.h"
#include "models/workload.h"
#include "models/reference.h"
#include "models/spill.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// Threads of a flash2_fwd CTA (its 4 warps).
constexpr std::uint32_t kThreads = 128;

/// The CUDA kernel's warps (models/cuda/flash2_attention.cu): each of the 4 owns Br/4 query rows
/// and loads its Q rows and all of K and V from shared memory (ldmatrix).
constexpr std::uint64_t kFlashWarps = 4;

/// Keys per score sub-block of the CUDA kernel: 32 where the O accumulators alone would take 128
/// registers per thread (Br·d ≥ 16384) and Bc > 32, else all Bc; Q is re-read per sub-block.
std::uint64_t score_sub_block(std::uint64_t br, std::uint64_t bc, std::uint64_t d) {
  return (br * d >= 16384 && bc > 32 && bc % 32 == 0) ? 32 : bc;
}

/// flash2's walk over its tiles: `stages` K/V buffers, one CTA per (head, Q block).
FlashLoop flash2_loop(const WorkloadParams& p) { return {*p.stages, false}; }

/// FlashAttention-2 forward (not causal): one CTA per (head, Q block) loads its Q block once,
/// streams every K/V block with `stages` blocks in flight, keeps O, ℓ, m on chip and stores O and
/// the logsumexp L once.
class Flash2 final : public BackendWorkload<Flash2> {
 public:
  explicit Flash2(const WorkloadParams& p) : BackendWorkload(p) {
    const std::uint64_t rows = p.batch_heads() * p.seq;
    const std::uint32_t s = p.element_size();
    m_q = add_input("Q", rows, p.head_dim, s);
    m_k = add_input("K", rows, p.head_dim, s);
    m_v = add_input("V", rows, p.head_dim, s);
    m_o = add_tensor("O", rows, p.head_dim, s);
    m_l = add_tensor("L", p.batch_heads(), p.seq, 4);
    m_plan = plan_spill(p, flash2_loop(p));
    if (m_plan.active) {
      m_spill = add_tensor("spill", m_plan.scratch_rows, m_plan.scratch_elements, s);
    }
  }

 private:
  friend class BackendWorkload<Flash2>;
  using Matrix = EigenBackend::Matrix;

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel != 0) return;
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, d = p.head_dim, s = p.element_size();
    const std::uint64_t br = *p.block_q, bc = *p.block_kv, stages = *p.stages;
    const std::uint64_t tr = ceil_div(n, br), tc = ceil_div(n, bc);
    const std::uint64_t q_passes = bc / score_sub_block(br, bc, d);
    const std::uint64_t bh = cta / tr, r0 = (cta % tr) * br, rows = std::min(br, n - r0);
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto tag_of = [stages](std::uint64_t j) {
      return static_cast<std::uint16_t>(1 + j % stages);
    };
    const auto issue_kv = [&](std::uint64_t j) {
      const std::uint64_t c0 = j * bc, cols = std::min(bc, n - c0);
      rec.load(m_k, box(m_k, bh * n + c0, cols, 0, d), tag_of(j));
      rec.load(m_v, box(m_v, bh * n + c0, cols, 0, d), tag_of(j));
    };

    // Spilling (m_plan.active): the rows that do not fit live in this CTA's row of "spill".
    const SpillPlan& sp = m_plan;
    const std::uint64_t sq = sp.active ? sp.q_spilled(rows) : 0;
    const std::uint64_t ss = sp.active ? sp.score_spilled(rows) : 0;
    const auto spill_tag = static_cast<std::uint16_t>(stages + 1);
    const auto kv_slot = [&](std::uint64_t j, bool v) {
      return sp.kv_offset + ((j % sp.kv_buffers) * 2 + (v ? 1 : 0)) * sp.kv_spilled(bc) * d;
    };
    const auto scratch = [&](auto& data, std::uint64_t offset, std::uint64_t r, std::uint64_t c) {
      return Eigen::Map<Matrix>(data.t(m_spill).data() + e(cta * sp.scratch_elements + offset), e(r),
                                e(c));
    };

    rec.load(m_q, box(m_q, bh * n + r0, rows, 0, d), 0);
    for (std::uint64_t j = 0; j < std::min(stages, tc); ++j) issue_kv(j);
    rec.wait(0);
    if (sq > 0) rec.store(m_spill, box(m_spill, cta, 1, 0, sq * d));  // Q rows with no room

    Matrix q, o, sc;
    Eigen::VectorXd m_run, l_run;
    if constexpr (Backend::kNumeric) {
      q = be.t(m_q).block(e(bh * n + r0), 0, e(rows), e(d));
      if (sq > 0) scratch(be, 0, sq, d) = q.bottomRows(e(sq));
      o = Matrix::Zero(e(rows), e(d));
      m_run = Eigen::VectorXd::Constant(e(rows), -std::numeric_limits<double>::infinity());
      l_run = Eigen::VectorXd::Zero(e(rows));
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));

    for (std::uint64_t j = 0; j < tc; ++j) {
      const std::uint64_t c0 = j * bc, cols = std::min(bc, n - c0);
      const std::uint64_t sk = sp.active ? sp.kv_spilled(cols) : 0;
      rec.wait(tag_of(j));
      if (sk > 0) {  // K/V rows with no room: written once when loaded
        rec.store(m_spill, box(m_spill, cta, 1, kv_slot(j, false), sk * d));
        rec.store(m_spill, box(m_spill, cta, 1, kv_slot(j, true), sk * d));
      }
      if (sq > 0) rec.load(m_spill, box(m_spill, cta, 1, 0, sq * d), spill_tag);
      if (sk > 0) rec.load(m_spill, box(m_spill, cta, 1, kv_slot(j, false), sk * d), spill_tag);
      if (sq > 0 || sk > 0) rec.wait(spill_tag);
      // S = scale·Q·Kᵀ on tensor cores: every warp reads its Q rows (once per sub-block) and
      // the whole K tile from shared memory.
      rec.smem((rows * q_passes + kFlashWarps * cols) * d * s);
      rec.compute(ComputeUnit::tensor, 2 * rows * cols * d);
      if (ss > 0) {  // score rows with no room: S written, read back by the softmax
        rec.store(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols));
        rec.load(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols), spill_tag);
        rec.wait(spill_tag);
      }
      // Online softmax: scale, row max, subtract, row sum, rescale of ℓ and O.
      rec.compute(ComputeUnit::fp32, 4 * rows * cols + rows * d + 2 * rows);
      rec.compute(ComputeUnit::sfu, rows * cols + rows);
      if (ss > 0) rec.store(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols));  // P
      if (sk > 0) rec.load(m_spill, box(m_spill, cta, 1, kv_slot(j, true), sk * d), spill_tag);
      if (ss > 0) rec.load(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols), spill_tag);
      if (sk > 0 || ss > 0) rec.wait(spill_tag);
      // O += P·V on tensor cores, P from registers.
      rec.smem(kFlashWarps * cols * d * s);  // every warp reads the whole V tile
      rec.compute(ComputeUnit::tensor, 2 * rows * cols * d);
      if constexpr (Backend::kNumeric) {
        throw_if_interrupted();  // a CTA's numerics can take seconds at large N: poll per block
        Matrix kb = be.t(m_k).block(e(bh * n + c0), 0, e(cols), e(d));
        Matrix vb = be.t(m_v).block(e(bh * n + c0), 0, e(cols), e(d));
        if (sk > 0) {  // the spilled rows go through the scratch and come back from it
          scratch(be, kv_slot(j, false), sk, d) = kb.bottomRows(e(sk));
          scratch(be, kv_slot(j, true), sk, d) = vb.bottomRows(e(sk));
          kb.bottomRows(e(sk)) = scratch(be, kv_slot(j, false), sk, d);
        }
        if (sq > 0) q.bottomRows(e(sq)) = scratch(be, 0, sq, d);
        sc = scale * q * kb.transpose();
        if (ss > 0) {
          scratch(be, sp.score_offset, ss, cols) = sc.bottomRows(e(ss));
          sc.bottomRows(e(ss)) = scratch(be, sp.score_offset, ss, cols);
        }
        for (Eigen::Index r = 0; r < e(rows); ++r) {
          const double m_new = std::max(m_run(r), sc.row(r).maxCoeff());
          const double alpha = p.online_rescale ? std::exp(m_run(r) - m_new) : 1.0;
          sc.row(r) = (sc.row(r).array() - m_new).exp().matrix();
          l_run(r) = alpha * l_run(r) + sc.row(r).sum();
          o.row(r) *= alpha;
          m_run(r) = m_new;
        }
        if (ss > 0) {
          scratch(be, sp.score_offset, ss, cols) = sc.bottomRows(e(ss));
          sc.bottomRows(e(ss)) = scratch(be, sp.score_offset, ss, cols);
        }
        if (sk > 0) vb.bottomRows(e(sk)) = scratch(be, kv_slot(j, true), sk, d);
        o += sc * vb;
      }
      rec.barrier();  // every warp is done with this stage's buffers
      if (j + stages < tc) issue_kv(j + stages);
    }

    rec.compute(ComputeUnit::fp32, rows * d + rows);  // O / ℓ, L = m + log ℓ
    rec.compute(ComputeUnit::sfu, 2 * rows);           // reciprocal and log per row
    if constexpr (Backend::kNumeric) {
      for (Eigen::Index r = 0; r < e(rows); ++r) {
        o.row(r) /= l_run(r);
        be.t(m_l)(e(bh), e(r0) + r) = m_run(r) + std::log(l_run(r));
      }
      be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d)) = o;
    }
    rec.smem(2 * rows * d * s);  // the O tile staged through shared memory (written, read)
    rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));
    rec.store(m_l, box(m_l, bh, 1, r0, rows));
  }

  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_l = 0, m_spill = 0;
  SpillPlan m_plan;  ///< inactive unless the tiles exceed the limit and allow_spill is set
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    kBatchParam,
    kHeadsParam,
    kSeqParam,
    kHeadDimParam,
    {.name = "block_q",
     .flag = "--block-q",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of Q per CTA (Br)",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::block_q>()},
    {.name = "block_kv",
     .flag = "--block-kv",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of K and V per block (Bc)",
     .default_text = "128 for head_dim ≤ 64, else 64",
     .min = 1,
     .field = field_of<&WorkloadParams::block_kv>()},
    {.name = "stages",
     .flag = "--stages",
     .type = ParamType::kTile,
     .unit = "blocks",
     .help = "K/V blocks in flight (pipelining depth)",
     .default_value = 2,
     .min = 1,
     .max = 64,
     .max_reason = "K/V blocks in flight",
     .field = field_of<&WorkloadParams::stages>()},
    kAllowSpillParam,
    kSmemLimitParam,
};

class Flash2Plugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "flash2"; }
  std::string_view summary() const override {
    return "FlashAttention-2 forward (not causal): one CTA per (head, Q block) streams every K/V "
           "block, `stages` in flight, and stores O and the logsumexp L once";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    const std::uint64_t qkv = check_attention_shape(p);
    if (!p.block_kv) p.block_kv = p.head_dim <= 64 ? 128 : 64;
    checked_mul(qkv, checked_mul(ceil_div(p.seq, *p.block_q), 2, "flash2 passes"),
                "the K and V traffic of flash2");
    resolve_spill(p, flash2_loop(p));
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const std::uint64_t n = p.seq, d = p.head_dim;
    const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
    const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, n);
    KernelInfo fwd = make_launch(
        "flash2_fwd", p.batch_heads() * ceil_div(n, *p.block_q), kThreads,
        flash_tile_smem_bytes(p, *p.stages),
        kernel_registers(p, "flash2_fwd", *p.block_q, *p.block_kv, *p.stages, br * d + br * bc,
                         kThreads));
    // A spilling CTA declares exactly the limit: what fits is all it keeps on chip.
    if (const SpillPlan plan = spill_plan(p); plan.active) fwd.smem_bytes_per_cta = plan.limit_bytes;
    return {fwd};
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Flash2>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override {
    return with_spill_traffic(
        flash2_traffic(p.batch_heads(), p.seq, p.head_dim, p.element_size(), *p.block_q), p);
  }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& /*launch*/,
                         std::uint64_t limit_bytes) const override {
    return {flash_smem_formula(p, "2·" + std::to_string(*p.stages) + "·"),
            "block_q/block_kv/stages", flash_smem_fits(p, flash2_loop(p), limit_bytes)};
  }

  SpillPlan spill_plan(const WorkloadParams& p) const override {
    return plan_spill(p, flash2_loop(p));
  }

  std::string_view output_tensor() const override { return "O"; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const override {
    return attention_reference(workload, data);
  }
};

}  // namespace

const WorkloadPlugin& flash2_plugin() {
  static const Flash2Plugin plugin;
  return plugin;
}

Traffic flash2_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s,
                       std::uint64_t br) {
  const std::uint64_t nd = bh * n * d * s, tr = ceil_div(n, br);
  return make_traffic(
      {{"Q", nd, 0}, {"K", tr * nd, 0}, {"V", tr * nd, 0}, {"O", 0, nd}, {"L", 0, bh * n * 4}});
}

}  // namespace memwall
