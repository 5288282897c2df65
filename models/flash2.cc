#include "models/flash2.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/compiled_instructions.h"
#include "models/launch.h"
#include "models/online_softmax.h"
#include "models/reference.h"
#include "models/spill.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// Threads of a flash2_fwd CTA (its 4 warps).
constexpr std::uint32_t kThreads = 128;
/// The combine's O_accum splits in flight per thread (kCombineSplitsInFlight of
/// models/cuda/flash2_attention.cu).
constexpr std::uint64_t kCombineSplitsInFlight = 4;
/// The combine's L_accum values in flight per thread (kCombineLoadsPerThread there).
constexpr std::uint64_t kCombineLoadsPerThread = 4;

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

/// How resolved `p`'s flash2 kernel splits its work: the shape it runs (decode packed), its Q
/// blocks and K/V blocks, and the split-KV chunking.
struct Flash2Grid {
  AttentionShape a;  ///< the shape the kernel runs (flash2_shape)
  std::uint64_t br = 1, bc = 1;  ///< block_q, block_kv
  std::uint64_t tr = 1, tc = 1;  ///< Q blocks per head, K/V blocks per K/V head
  std::uint64_t splits = 1;  ///< S
  std::uint64_t per_split = 1;  ///< K/V blocks per split, ⌈tc / S⌉

  explicit Flash2Grid(const WorkloadParams& p)
      : a(flash2_shape(p)),
        br(*p.block_q),
        bc(*p.block_kv),
        tr(ceil_div(a.nq, br)),
        tc(ceil_div(a.nkv, bc)),
        splits(*p.splits),
        per_split(ceil_div(tc, splits)) {}

  /// Rows of Q block m.
  std::uint64_t rows(std::uint64_t m) const { return std::min(br, a.nq - m * br); }
  /// The combine's rows per CTA (kCombineRows of models/cuda/flash2_attention.cu: the rows its
  /// threads cover with 4 columns each) and its CTAs per head.
  std::uint64_t combine_rows(std::uint64_t d) const {
    return std::max<std::uint64_t>(1, kThreads * 4 / d);
  }
  std::uint64_t combine_blocks(std::uint64_t d) const { return ceil_div(a.nq, combine_rows(d)); }
  /// The K/V blocks [first, second) that split `split` of Q block m visits: its chunk, cut at
  /// the last block any of the Q block's rows sees; empty when the mask hides the whole chunk.
  std::pair<std::uint64_t, std::uint64_t> blocks(std::uint64_t m, std::uint64_t split) const {
    const std::uint64_t visible = a.blocks_visible(m * br, rows(m), bc);
    const std::uint64_t first = split * per_split;
    const std::uint64_t last = std::min({(split + 1) * per_split, tc, visible});
    return {first, std::max(first, last)};
  }
  /// Keys in K/V blocks [first, last).
  std::uint64_t keys(std::uint64_t first, std::uint64_t last) const {
    return first == last ? 0 : std::min(last * bc, a.nkv) - first * bc;
  }
};

/// FlashAttention-2 forward: one CTA per (head, Q block, split) loads its Q block once, streams
/// the K/V blocks of its split that the causal mask leaves visible with `stages` blocks in
/// flight, keeps O, ℓ, m on chip and stores O and the logsumexp L once — with splits, its own
/// normalised O and L in fp32 (O_accum, L_accum), which a combine launch merges into O and L.
class Flash2 final : public BackendWorkload<Flash2> {
 public:
  explicit Flash2(const WorkloadParams& p) : BackendWorkload(p), m_grid(p) {
    const AttentionShape& a = m_grid.a;
    const std::uint32_t s = p.element_size();
    m_q = add_input("Q", a.batch_heads * a.nq, p.head_dim, s);
    m_k = add_input("K", a.kv_batch_heads() * a.nkv, p.head_dim, s);
    m_v = add_input("V", a.kv_batch_heads() * a.nkv, p.head_dim, s);
    m_o = add_tensor("O", a.batch_heads * a.nq, p.head_dim, s);
    m_l = add_tensor("L", a.batch_heads, a.nq, 4);
    if (m_grid.splits > 1) {
      m_o_accum = add_tensor("O_accum", m_grid.splits * a.batch_heads * a.nq, p.head_dim, 4);
      m_l_accum = add_tensor("L_accum", m_grid.splits * a.batch_heads, a.nq, 4);
    }
    m_plan = plan_spill(p, flash2_loop(p));
    // The CUDA harness runs the plain kernel for plain attention and the variant kernel for the
    // causal, GQA, Nq ≠ Nkv and split-KV cases (models/cuda/flash2_attention.cu).
    const bool variant = a.causal || a.group > 1 || a.nq != a.nkv || m_grid.splits > 1;
    const std::string_view kernel = variant ? "flash2_fwd_variant" : "flash2_fwd";
    m_issue = kernel_instructions(kernel, p.head_dim, m_grid.br, m_grid.bc, *p.stages).terms;
    m_chain_cycles = dependent_issue_cycles(kernel, p.head_dim);
    if (m_plan.active) {
      m_spill = add_tensor("spill", m_plan.scratch_rows, m_plan.scratch_elements, s);
    }
  }

 private:
  friend class BackendWorkload<Flash2>;
  using Matrix = EigenBackend::Matrix;

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == 0) forward(cta, be, rec);
    if (kernel == 1) combine(cta, be, rec);
  }

  template <class Backend>
  void forward(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const Flash2Grid& g = m_grid;
    const AttentionShape& a = g.a;
    const std::uint64_t nq = a.nq, nkv = a.nkv, d = p.head_dim, s = p.element_size();
    const std::uint64_t bc = g.bc, stages = *p.stages;
    const std::uint64_t q_passes = bc / score_sub_block(g.br, bc, d);
    const std::uint64_t m = cta % g.tr, split = (cta / g.tr) % g.splits;
    const std::uint64_t bh = cta / (g.tr * g.splits), kvh = a.kv_head(bh);
    const std::uint64_t r0 = m * g.br, rows = g.rows(m);
    // The work is booked on the whole block of block_q rows: the CUDA kernel's MMA tiles and
    // softmax loops cover every row of the block, valid or not (decode's 1..G valid rows of 128
    // cost a full block: traces/measured/h200-variants.md). Traffic is of the valid rows only.
    const std::uint64_t crows = g.br;
    const auto [jb, je] = g.blocks(m, split);
    const bool split_out = g.splits > 1;
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto tag_of = [stages, jb](std::uint64_t j) {
      return static_cast<std::uint16_t>(1 + (j - jb) % stages);
    };
    const auto issue_kv = [&](std::uint64_t j) {
      const std::uint64_t c0 = j * bc, cols = std::min(bc, nkv - c0);
      rec.load(m_k, box(m_k, kvh * nkv + c0, cols, 0, d), tag_of(j));
      rec.load(m_v, box(m_v, kvh * nkv + c0, cols, 0, d), tag_of(j));
    };
    const std::uint64_t acc_row = (split * a.batch_heads + bh) * nq + r0;
    if (jb == je) {  // the mask hides this split's whole chunk: O = 0, L = −∞, as FA2 writes
      if constexpr (Backend::kNumeric) {
        be.t(m_o_accum).block(e(acc_row), 0, e(rows), e(d)).setZero();
        be.t(m_l_accum)
            .block(e(split * a.batch_heads + bh), e(r0), 1, e(rows))
            .setConstant(-std::numeric_limits<double>::infinity());
      }
      rec.store(m_o_accum, box(m_o_accum, acc_row, rows, 0, d));
      rec.store(m_l_accum, box(m_l_accum, split * a.batch_heads + bh, 1, r0, rows));
      return;
    }

    // Spilling (m_plan.active): the rows that do not fit live in this CTA's row of "spill".
    const SpillPlan& sp = m_plan;
    const std::uint64_t sq = sp.active ? sp.q_spilled(rows) : 0;
    const std::uint64_t ss = sp.active ? sp.score_spilled(rows) : 0;
    const auto spill_tag = static_cast<std::uint16_t>(stages + 1);
    const auto kv_slot = [&](std::uint64_t j, bool v) {
      return sp.kv_offset + ((j % sp.kv_buffers) * 2 + (v ? 1 : 0)) * sp.kv_spilled(bc) * d;
    };
    const auto scratch = [&](auto& data, std::uint64_t offset, std::uint64_t r, std::uint64_t c) {
      return Eigen::Map<Matrix>(data.t(m_spill).data() + e(cta * sp.scratch_elements + offset),
                                e(r), e(c));
    };

    rec.load(m_q, box(m_q, bh * nq + r0, rows, 0, d), 0);
    for (std::uint64_t j = jb; j < std::min(jb + stages, je); ++j) issue_kv(j);
    // The kernel's warp instructions (models/compiled_instructions.h): its per-CTA share once
    // the first loads are in flight, each K/V tile's with the tile. The softmax's fp32 and SFU
    // work is among them: booked on its pipes asynchronously (tag `work`), the pipes' use and
    // FLOPs counted, the issue slots the time.
    const auto work = static_cast<std::uint16_t>(stages + 2);
    // A warp's own chain of dependent instructions (a lower bound beside the pipes: it binds when
    // one warp per scheduler runs, models/compiled_instructions.h), asynchronous under `work`.
    const auto chain = [&](std::uint64_t instructions) {
      const double cycles = m_chain_cycles * static_cast<double>(instructions) / kFlashWarps;
      rec.compute(ComputeUnit::latency, static_cast<std::uint64_t>(std::llround(cycles)), work);
    };
    rec.compute(ComputeUnit::issue, m_issue.per_cta);
    chain(m_issue.per_cta);
    rec.wait(0);
    if (sq > 0) rec.store(m_spill, box(m_spill, cta, 1, 0, sq * d));  // Q rows with no room

    Matrix q, o, sc;
    Eigen::VectorXd m_run, l_run;
    if constexpr (Backend::kNumeric) {
      q = be.t(m_q).block(e(bh * nq + r0), 0, e(rows), e(d));
      if (sq > 0) scratch(be, 0, sq, d) = q.bottomRows(e(sq));
      o = Matrix::Zero(e(rows), e(d));
      m_run = Eigen::VectorXd::Constant(e(rows), -std::numeric_limits<double>::infinity());
      l_run = Eigen::VectorXd::Zero(e(rows));
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));

    for (std::uint64_t j = jb; j < je; ++j) {
      const std::uint64_t c0 = j * bc, cols = std::min(bc, nkv - c0);
      const std::uint64_t sk = sp.active ? sp.kv_spilled(cols) : 0;
      const bool masked = a.block_masked(r0, c0, cols);
      rec.wait(tag_of(j));
      if (sk > 0) {  // K/V rows with no room: written once when loaded
        rec.store(m_spill, box(m_spill, cta, 1, kv_slot(j, false), sk * d));
        rec.store(m_spill, box(m_spill, cta, 1, kv_slot(j, true), sk * d));
      }
      if (sq > 0) rec.load(m_spill, box(m_spill, cta, 1, 0, sq * d), spill_tag);
      if (sk > 0) rec.load(m_spill, box(m_spill, cta, 1, kv_slot(j, false), sk * d), spill_tag);
      if (sq > 0 || sk > 0) rec.wait(spill_tag);
      const std::uint64_t step_instructions =
          m_issue.per_step + (masked ? m_issue.per_masked_step : 0);
      // The step's warp instructions, their chain, and its shared-memory reads are booked
      // asynchronously under `work`: on the chip they interleave with the MMAs instruction by
      // instruction, and what orders them is the pipes they share (the MMAs take turns with the
      // other instructions' issue and with the shared-memory reads, sm.issue_pipe and
      // sm.smem_pipe) and the warps' chain; the step ends when all of them have.
      chain(step_instructions);
      rec.compute(ComputeUnit::issue, step_instructions, work);
      // S = scale·Q·Kᵀ on tensor cores: every warp reads its Q rows (once per sub-block) and
      // the whole K tile from shared memory.
      rec.smem((crows * q_passes + kFlashWarps * cols) * d * s, work);
      rec.compute(ComputeUnit::mma_sync, 2 * crows * cols * d);
      if (ss > 0) {  // score rows with no room: S written, read back by the softmax
        rec.store(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols));
        rec.load(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols), spill_tag);
        rec.wait(spill_tag);
      }
      // A block the causal diagonal crosses: each score compared with its row's limit and
      // replaced by −∞ above it.
      if (masked) rec.compute(ComputeUnit::fp32, crows * cols, work);
      // Online softmax: scale, row max, subtract, row sum, rescale of ℓ and O.
      rec.compute(ComputeUnit::fp32, 4 * crows * cols + crows * d + 2 * crows, work);
      rec.compute(ComputeUnit::sfu, crows * cols + crows, work);
      if (ss > 0) rec.store(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols));  // P
      if (sk > 0) rec.load(m_spill, box(m_spill, cta, 1, kv_slot(j, true), sk * d), spill_tag);
      if (ss > 0) rec.load(m_spill, box(m_spill, cta, 1, sp.score_offset, ss * cols), spill_tag);
      if (sk > 0 || ss > 0) rec.wait(spill_tag);
      // O += P·V on tensor cores, P from registers.
      rec.smem(kFlashWarps * cols * d * s, work);  // every warp reads the whole V tile
      rec.compute(ComputeUnit::mma_sync, 2 * crows * cols * d);
      if constexpr (Backend::kNumeric) {
        throw_if_interrupted();  // a CTA's numerics can take seconds at large N: poll per block
        Matrix kb = be.t(m_k).block(e(kvh * nkv + c0), 0, e(cols), e(d));
        Matrix vb = be.t(m_v).block(e(kvh * nkv + c0), 0, e(cols), e(d));
        if (sk > 0) {  // the spilled rows go through the scratch and come back from it
          scratch(be, kv_slot(j, false), sk, d) = kb.bottomRows(e(sk));
          scratch(be, kv_slot(j, true), sk, d) = vb.bottomRows(e(sk));
          kb.bottomRows(e(sk)) = scratch(be, kv_slot(j, false), sk, d);
        }
        if (sq > 0) q.bottomRows(e(sq)) = scratch(be, 0, sq, d);
        sc = scale * q * kb.transpose();
        if (masked) mask_hidden_scores(sc, m_grid.a, r0, c0);
        if (ss > 0) {
          scratch(be, sp.score_offset, ss, cols) = sc.bottomRows(e(ss));
          sc.bottomRows(e(ss)) = scratch(be, sp.score_offset, ss, cols);
        }
        online_softmax_block(sc, m_run, l_run, o, p.online_rescale);
        if (ss > 0) {
          scratch(be, sp.score_offset, ss, cols) = sc.bottomRows(e(ss));
          sc.bottomRows(e(ss)) = scratch(be, sp.score_offset, ss, cols);
        }
        if (sk > 0) vb.bottomRows(e(sk)) = scratch(be, kv_slot(j, true), sk, d);
        o += sc * vb;
      }
      rec.wait(work);
      rec.barrier();  // every warp is done with this stage's buffers
      if (j + stages < je) issue_kv(j + stages);
    }

    rec.compute(ComputeUnit::fp32, crows * d + crows, work);  // O / ℓ, L = m + log ℓ
    rec.compute(ComputeUnit::sfu, 2 * crows, work);  // reciprocal and log per row
    rec.wait(work);
    const std::uint8_t o_out = split_out ? m_o_accum : m_o, l_out = split_out ? m_l_accum : m_l;
    const std::uint64_t o_row = split_out ? acc_row : bh * nq + r0;
    const std::uint64_t l_row = split_out ? split * a.batch_heads + bh : bh;
    if constexpr (Backend::kNumeric) {
      for (Eigen::Index r = 0; r < e(rows); ++r) {
        if (l_run(r) == 0.0) {  // a row that sees no key of this split: weight 0 in the combine
          be.t(l_out)(e(l_row), e(r0) + r) = -std::numeric_limits<double>::infinity();
          continue;
        }
        o.row(r) /= l_run(r);
        be.t(l_out)(e(l_row), e(r0) + r) = m_run(r) + std::log(l_run(r));
      }
      be.t(o_out).block(e(o_row), 0, e(rows), e(d)) = o;
    }
    // The O tile staged through shared memory (written, read), in fp32 when it is a split's.
    rec.smem(2 * crows * d * (split_out ? 4 : s));
    rec.store(o_out, box(o_out, o_row, rows, 0, d));
    rec.store(l_out, box(l_out, l_row, 1, r0, rows));
  }

  /// The split-KV combine, one CTA per (head, block of combine_rows rows: as many as its threads
  /// cover), as the CUDA kernel reads: the splits' L_accum rows in rounds of
  /// kCombineLoadsPerThread values per thread, then O_accum kCombineSplitsInFlight splits at a
  /// time (those waited for before the next are loaded); L = log Σ exp(Lₛ), O = Σ exp(Lₛ − L)·Oₛ.
  template <class Backend>
  void combine(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const Flash2Grid& g = m_grid;
    const AttentionShape& a = g.a;
    const std::uint64_t nq = a.nq, d = params().head_dim, S = g.splits;
    const std::uint64_t cr = g.combine_rows(d), blocks = g.combine_blocks(d);
    const std::uint64_t bh = cta / blocks, r0 = (cta % blocks) * cr, rows = std::min(cr, nq - r0);
    // L_accum: the (split, row) pairs spread over the threads, kCombineLoadsPerThread each in
    // flight, split-major (one box per split and round).
    const std::uint64_t pairs = S * rows, per_round = kCombineLoadsPerThread * kThreads;
    for (std::uint64_t i0 = 0; i0 < pairs; i0 += per_round) {
      const std::uint64_t i1 = std::min(pairs, i0 + per_round);
      for (std::uint64_t sp = i0 / rows; sp * rows < i1; ++sp) {
        const std::uint64_t first = std::max(i0, sp * rows) - sp * rows;
        const std::uint64_t last = std::min(i1, (sp + 1) * rows) - sp * rows;
        rec.load(m_l_accum, box(m_l_accum, sp * a.batch_heads + bh, 1, r0 + first, last - first),
                 0);
      }
      rec.wait(0);
    }
    // Per row: the max of the splits' L, exp(Lₛ − max) summed, L = max + log(sum), and the
    // weights exp(Lₛ − L).
    rec.compute(ComputeUnit::fp32, 4 * S * rows);
    rec.compute(ComputeUnit::sfu, 2 * S * rows + rows);
    if constexpr (Backend::kNumeric) {
      const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
      constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
      for (std::uint64_t r = 0; r < rows; ++r) {
        double mx = kMinusInf;
        for (std::uint64_t sp = 0; sp < S; ++sp) {
          mx = std::max(mx, be.t(m_l_accum)(e(sp * a.batch_heads + bh), e(r0 + r)));
        }
        double sum = 0.0;
        for (std::uint64_t sp = 0; sp < S; ++sp) {
          sum += std::exp(be.t(m_l_accum)(e(sp * a.batch_heads + bh), e(r0 + r)) - mx);
        }
        const double lse = mx + std::log(sum);
        auto out = be.t(m_o).row(e(bh * nq + r0 + r));
        out.setZero();
        for (std::uint64_t sp = 0; sp < S; ++sp) {
          const double w = std::exp(be.t(m_l_accum)(e(sp * a.batch_heads + bh), e(r0 + r)) - lse);
          if (w > 0.0) out += w * be.t(m_o_accum).row(e((sp * a.batch_heads + bh) * nq + r0 + r));
        }
        be.t(m_l)(e(bh), e(r0 + r)) = lse;
      }
    }
    rec.store(m_l, box(m_l, bh, 1, r0, rows));
    // O: each thread 4 columns of a row, so the CTA's threads cover its rows at once;
    // kCombineSplitsInFlight splits' loads in flight, then used.
    for (std::uint64_t s0 = 0; s0 < S; s0 += kCombineSplitsInFlight) {
      const std::uint64_t in_flight = std::min(kCombineSplitsInFlight, S - s0);
      for (std::uint64_t sp = s0; sp < s0 + in_flight; ++sp) {
        rec.load(m_o_accum, box(m_o_accum, (sp * a.batch_heads + bh) * nq + r0, rows, 0, d), 1);
      }
      rec.wait(1);
      rec.compute(ComputeUnit::fp32, 2 * in_flight * rows * d);  // O += exp(Lₛ − L)·Oₛ
      // Each warp's own chain of the round (one warp per scheduler: nothing hides it), beyond
      // the loads' latency, which the wait above already took (models/compiled_instructions.h).
      rec.compute(ComputeUnit::latency,
                  static_cast<std::uint64_t>(std::llround(combine_round_chain_cycles())));
    }
    rec.store(m_o, box(m_o, bh * nq + r0, rows, 0, d));
  }

  Flash2Grid m_grid;
  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_l = 0, m_spill = 0;
  std::uint8_t m_o_accum = 0, m_l_accum = 0;
  InstructionTerms m_issue;  ///< the forward kernel's warp instructions
  double m_chain_cycles = 0;  ///< its cycles per warp instruction along a warp's chain
  SpillPlan m_plan;  ///< inactive unless the tiles exceed the limit and allow_spill is set
};

/// One split is the kernel without split-KV: listed only when there are more.
bool listed_splits(const WorkloadParams& p) { return p.splits != 1u; }

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
    {.name = "splits",
     .flag = "--splits",
     .type = ParamType::kTile,
     .unit = "chunks",
     .help = "Split-KV (Flash-Decoding): each (head, Q block)'s K/V blocks in this many chunks, "
             "each CTA storing its partial O and logsumexp in fp32 for a combine launch; auto: "
             "FlashAttention-2's num_splits_heuristic for the config's SM count",
     .default_value = 1,
     .min = 1,
     .max = 128,
     .max_reason = "FlashAttention-2's split-KV kernel takes at most 128",
     .auto_word = "auto",
     .field = field_of<&WorkloadParams::splits>(),
     .listed = &listed_splits},
    kAllowSpillParam,
    kSmemLimitParam,
};

class Flash2Plugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "flash2"; }
  std::string_view summary() const override {
    return "FlashAttention-2 forward: one CTA per (head, Q block, split) streams the K/V blocks "
           "the causal mask leaves visible, `stages` in flight, and stores O and the logsumexp L "
           "once (with splits: partial O and L in fp32, merged by a combine launch); decode with "
           "grouped-query heads packs a K/V head's query heads into one Q block";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    check_attention_shape(p);
    if (!p.block_kv) p.block_kv = p.head_dim <= 64 ? 128 : 64;
    const AttentionShape a = flash2_shape(p);
    const std::uint64_t tc = ceil_div(a.nkv, *p.block_kv), tr = ceil_div(a.nq, *p.block_q);
    if (*p.splits == 0) p.splits = flash2_auto_splits(p);
    if (*p.splits > tc) {
      throw UsageError("splits (" + std::to_string(*p.splits) +
                       ") must be at most the K/V blocks of a head, ceil(seq_kv / block_kv) = " +
                       std::to_string(tc) + ": each split needs a block");
    }
    const std::uint64_t s = p.element_size();
    checked_mul({a.batch_heads, tr, a.nkv, p.head_dim, s, 2}, "the K and V traffic of flash2");
    checked_mul({*p.splits, a.batch_heads, a.nq, p.head_dim, 4},
                "O_accum (splits·batch·heads·seq·head_dim)");
    resolve_spill(p, flash2_loop(p));
    if (plan_spill(p, flash2_loop(p)).active &&
        (p.causal || a.nkv != p.seq || *p.splits > 1 || a.nq != p.seq)) {
      throw UsageError(
          "allow_spill is modelled for full attention only (no causal mask, "
          "seq_kv = seq, splits 1, no decode packing); reduce block_q/block_kv/stages "
          "so that the tiles fit instead");
    }
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const Flash2Grid g(p);
    const std::uint64_t d = p.head_dim;
    const std::uint64_t br = std::min(g.br, g.a.nq), bc = std::min(g.bc, g.a.nkv);
    KernelInfo fwd = make_launch("flash2_fwd", g.a.batch_heads * g.tr * g.splits, kThreads,
                                 flash_tile_smem_bytes(p, *p.stages, g.a.nq),
                                 kernel_registers(p, "flash2_fwd", *p.block_q, *p.block_kv,
                                                  *p.stages, br * d + br * bc, kThreads));
    // A spilling CTA declares exactly the limit: what fits is all it keeps on chip.
    if (const SpillPlan plan = spill_plan(p); plan.active)
      fwd.smem_bytes_per_cta = plan.limit_bytes;
    if (g.splits == 1) return {fwd};
    // The combine keeps its rows' logsumexp of every split in shared memory (and their totals);
    // a thread holds 4 columns of a row in fp32 for kCombineSplitsInFlight splits.
    const std::uint64_t cr = g.combine_rows(d);
    return {fwd, make_launch("flash2_combine", g.a.batch_heads * g.combine_blocks(d), kThreads,
                             (g.splits + 1) * cr * 4,
                             estimated_registers(kCombineSplitsInFlight * cr * d, kThreads))};
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Flash2>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override {
    return with_spill_traffic(flash2_traffic(p), p);
  }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& /*launch*/,
                         std::uint64_t limit_bytes) const override {
    return {flash_smem_formula(p, "2·" + std::to_string(*p.stages) + "·"),
            "block_q/block_kv/stages", flash_smem_fits(p, flash2_loop(p), limit_bytes)};
  }

  SpillPlan spill_plan(const WorkloadParams& p) const override {
    return plan_spill(p, flash2_loop(p));
  }

  double io_exponent(std::string_view axis) const override {  // Θ(N²d²/M), Bc ∝ M/d
    return axis == "seq" ? 2.0 : -1.0;
  }

  std::string tiling_text(const WorkloadParams& p) const override {
    std::string out =
        "Br = " + std::to_string(*p.block_q) + ", Bc = " + std::to_string(*p.block_kv);
    if (p.splits && *p.splits > 1) out += ", " + std::to_string(*p.splits) + " splits";
    return out;
  }

  void io_defaults(WorkloadParams& p, bool /*seq_given*/, std::optional<std::uint64_t> sram_bytes,
                   std::uint64_t /*smem_per_block*/) const override {
    // Theorem 2's blocks for M: Bc = Br = ⌈M / 4d⌉ elements.
    if (!sram_bytes || (p.block_q && p.block_kv)) return;
    const auto bc =
        static_cast<std::uint32_t>(ceil_div(*sram_bytes / element_bytes(p.dtype), 4 * p.head_dim));
    if (!p.block_q) p.block_q = bc;
    if (!p.block_kv) p.block_kv = bc;
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

AttentionShape flash2_shape(const WorkloadParams& p) {
  AttentionShape a = attention_shape(p);
  if (a.nq == 1 && a.group > 1) {  // FA2's seqlenq_ngroups_swapped: heads' query rows packed
    a.batch_heads /= a.group;
    a.nq = a.group;
    a.group = 1;
    a.causal = false;  // one query row sees every key: nothing to mask
  }
  return a;
}

std::uint32_t flash2_num_splits_heuristic(std::uint64_t batch_nheads_mblocks, std::uint64_t num_sms,
                                          std::uint64_t num_n_blocks, std::uint64_t max_splits) {
  // If the blocks almost fill the SMs already, one split.
  if (static_cast<float>(batch_nheads_mblocks) >= 0.8f * static_cast<float>(num_sms)) return 1;
  max_splits = std::min({max_splits, num_sms, num_n_blocks});
  // A split count is eligible only if it changes the blocks per split (64 blocks in 11 or 12
  // splits are both 6 per split).
  const auto eligible = [num_n_blocks](std::uint64_t n) {
    return n == 1 || ceil_div(num_n_blocks, n) != ceil_div(num_n_blocks, n - 1);
  };
  std::vector<float> efficiency(max_splits + 1, 0.0f);
  float max_efficiency = 0.0f;
  for (std::uint64_t n = 1; n <= max_splits; ++n) {
    if (!eligible(n)) continue;
    const float waves = static_cast<float>(batch_nheads_mblocks * n) / static_cast<float>(num_sms);
    efficiency[n] = waves / std::ceil(waves);
    max_efficiency = std::max(max_efficiency, efficiency[n]);
  }
  // The fewest splits within 85% of the best wave efficiency.
  for (std::uint64_t n = 1; n <= max_splits; ++n) {
    if (eligible(n) && efficiency[n] >= 0.85f * max_efficiency)
      return static_cast<std::uint32_t>(n);
  }
  return 1;
}

std::uint32_t flash2_auto_splits(const WorkloadParams& p) {
  const AttentionShape a = flash2_shape(p);
  // FlashAttention-2's split-KV kernel blocks (set_params_splitkv): 64 query rows; 256, 128 or
  // 64 keys for head_dim <= 64, <= 128, above; two 128-thread CTAs per SM.
  const std::uint64_t block_n = p.head_dim <= 64 ? 256 : p.head_dim <= 128 ? 128 : 64;
  const std::uint32_t n =
      flash2_num_splits_heuristic(a.batch_heads * ceil_div(a.nq, 64), 2 * std::uint64_t{p.sm_count},
                                  ceil_div(a.nkv, block_n), 128);
  // This model's K/V blocks (block_kv) can be fewer than FlashAttention-2's.
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, ceil_div(a.nkv, *p.block_kv)));
}

Traffic flash2_traffic(const WorkloadParams& p) {
  const Flash2Grid g(p);
  const AttentionShape& a = g.a;
  const std::uint64_t row = p.head_dim * p.element_size();
  // Per head: Q block m is loaded by each split that sees a visible block, ⌈visible / per_split⌉
  // of them, and every visible key of K and V is loaded once per Q block (the splits partition
  // the visible prefix). Without the mask every Q block sees all tc blocks.
  std::uint64_t q_rows = 0, kv_rows = 0;
  if (!a.causal) {
    q_rows = a.nq * ceil_div(g.tc, g.per_split);
    kv_rows = g.tr * a.nkv;
  } else {
    for (std::uint64_t m = 0; m < g.tr; ++m) {
      const std::uint64_t visible = a.blocks_visible(m * g.br, g.rows(m), g.bc);
      q_rows += g.rows(m) * ceil_div(visible, g.per_split);
      kv_rows += g.keys(0, visible);
    }
  }
  const std::uint64_t bh = a.batch_heads, nq = a.nq, o = bh * nq * row, l = bh * nq * 4;
  std::vector<TensorTraffic> t = {{"Q", bh * q_rows * row, 0},
                                  {"K", bh * kv_rows * row, 0},
                                  {"V", bh * kv_rows * row, 0},
                                  {"O", 0, o},
                                  {"L", 0, l}};
  if (g.splits > 1) {  // every split CTA writes its partial tiles; the combine reads them all
    const std::uint64_t acc = g.splits * bh * nq * p.head_dim * 4, lacc = g.splits * l;
    t.push_back({"O_accum", acc, acc});
    t.push_back({"L_accum", lacc, lacc});
  }
  return make_traffic(std::move(t));
}

}  // namespace memwall
